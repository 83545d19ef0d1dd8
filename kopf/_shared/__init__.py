"""What both sides use: the operator (`kopf run`, `kopf rbac`) and the local cluster (`kopf._cluster`).

The only kopf package the emulator may import (tests/test_layers.py). Pure (no I/O, no clock, no async),
but `certificates`, which reads the clock and makes keys.

Modules:
- `encoding`       JSON on the wire (orjson when installed), for the API client and the local cluster (pure)
- `fields`         field paths (`'spec.x'`), reading and writing nested dicts by them (pure)
- `mergepatch`     JSON merge-patches (RFC 7386): the one implementation (pure)
- `schemas`        structural pruning of objects by OpenAPI v3 schemas, as kube-apiserver does it (pure)
- `resourcetable`  the built-in resources a real kube-apiserver serves, and the resources a CRD serves (pure)
- `localhosts`     the host names by which local clusters' nodes reach the developer's machine (pure)
- `certificates`   throw-away CAs and certificates as PEM bytes: for `--tls`, envtest, self-signed webhooks
- `extras`         the optional dependencies: what needs each, its extra, the one line without it (pure)
- `data`           the generated table of the built-in resources (package data)
"""
