"""Optional helpers for operator authors: hierarchies (owner references, labels), webhook servers."""
