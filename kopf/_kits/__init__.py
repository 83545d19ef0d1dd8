"""Optional helpers for operator authors and their tests.

Modules:
- `hierarchies`  owner references, labels, names and namespaces of children (`kopf.adopt()` & co.)
- `objects`      uniform access to an object in any shape authors build it in (dicts, clients' models)
- `loops`        the event loop of `kopf run` (uvloop when installed, unless turned off)
- `clirunner`    `KopfRunner`: the `kopf` CLI in a thread, as a context manager
- `clihelp`      the `kopf` command's help as kubectl's reads: options in titled groups, examples, notes
- `clicommands`  the `kopf` commands other than `kopf run` (cluster, rbac, crd, freeze, resume): when named
- `fixtures`     pytest fixtures (re-exported by `kopf.testing`)
- `envtest`      `EnvtestCluster`: a real etcd + kube-apiserver as a test backend
- `envassets`    where the envtest binaries are, and the throw-away PKI of an envtest cluster
- `envprocs`     how an envtest cluster's processes are stopped (also on SIGTERM/SIGHUP)
- `envhistory`   the history an envtest cluster serves: compactions of etcd, the watch cache started anew
"""
