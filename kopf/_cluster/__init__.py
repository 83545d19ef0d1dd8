"""The local Kubernetes API emulator (`kopf cluster`, `kopf.testing.LocalCluster`): the server side.

An aiohttp web application with real Kubernetes semantics. Never imported by the operator's runtime
path (only by `kopf.testing`, `kopf run --local-cluster` and the `kopf cluster` command); of the rest of kopf,
it imports only `kopf._shared` (never the operator's core, engine or API client).

Its packages, each importing only those listed before it (no import cycles: `tests/test_emulator_layout.py`):

    statuses     Kubernetes `Status` error bodies, exactly as a real API server renders them
    jsoncodec    JSON: the runtime's codec (`kopf._shared.encoding`), with the emulator's nesting bounds
    cel          CEL as kube-apiserver 1.34 evaluates it: CRD validation rules, admission policies' expressions
    apis         what is served and how a URL addresses it: the resource table, the catalog, routing
    openapi      schemas and validation: defaulting, pruning, validation, structural checks, built-in schemas
    patchtypes   merge, JSON and strategic-merge patches; field ownership for server-side apply
    store        objects and resourceVersions, the change history, watch fan-out, reads with selectors
    rbac         authorization: users, request attributes, RBAC evaluation, the bootstrap policy, escalation
                 checks, ClusterRole aggregation, ServiceAccount tokens (pure: no I/O)
    quotas       ResourceQuota: quantities, what objects cost, the admission check, the status usage (pure)
    pipeline     the writes (create, replace, patch, apply, delete, scale) and the whole state they change
    controllers  namespace and CRD cleanup, garbage collection, event expiry; workloads (nodes, Pods that run,
                 ReplicaSets, Deployments, Jobs, endpoints) on a clock tests can advance
    admitting    calling admission webhooks around the writes
    web          the HTTP surface: dispatch, endpoints, watch streams, discovery, tables, protobuf, access rules, faults
    control      the `Emulator` assembled, the table of control operations, `/_emulator/`, `LocalCluster`,
                 `kopf cluster`
"""
