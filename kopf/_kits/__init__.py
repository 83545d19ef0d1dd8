"""Optional helpers for operator authors: hierarchies (owner references, labels), webhook servers and
tunnels (and their small HTTP/1.1 server)."""
