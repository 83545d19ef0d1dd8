"""The local Kubernetes API emulator (`kopf cluster`, `kopf.testing.LocalCluster`): the server side.

An aiohttp web application with real Kubernetes semantics. Never imported by the operator's runtime
path (only by `kopf.testing` and the `kopf cluster` command); it may use `kopf._model` helpers.

Where things are:
    server        the `Emulator`: lifecycle, request dispatch, the control surface (faults, watches, ...)
    handlers      HTTP <-> pipeline for /api and /apis; control: the same under /_emulator/
    routing       URL shapes -> (resource, namespace, name, subresource); verbs
    discovery     /version, /api, /apis, APIResourceLists
    tables        kubectl's Table answers (typed CRD printer columns);  printers: built-in columns, ages
    resources     the table of built-in kinds;  catalog: built-ins + CRD-served resources
    store         objects, ONE resourceVersion counter, bounded change history, the event log
    state         store + catalog + what follows from changes;  controllers: namespaces, CRDs, GC, TTLs
    writing       create / replace / patch / delete: metadata, scope, status split, finalizers, no-ops
    reading       get / list with selectors and paging;  selectors: label and field selectors
    patching      merge, JSON and strategic-merge patches;  scaling: the scale subresource
    strategic     strategic merge by the built-in schemas' patch strategies and merge keys, `$` directives
    applying      server-side apply: merge, conflicts, force;  managing: field ownership by manager
    conforming    the one caller of the schema layer (pruning, defaulting, validation)
    embedded      validation of x-kubernetes-embedded-resource objects
    crds, kinds   CRD acceptance/status; the few per-kind rules (events, namespaces, leases, secrets)
    kind_defaults the commonest server-side defaults of pods, services and workloads
    webhooks      webhook configuration rules;  admission + admitting: calling admission webhooks
    watching      watcher fan-out;  streaming: one watch request (start point, bookmarks, timeouts)
    faults        injected failures, counters, request log;  authorizing: 403 rules
    protobuf      decoding kubectl's protobuf bodies (tables in protos/, generated from kubectl)
    certificates, kubeconfig, manifests, running, encoding, errors, metadata: the small helpers
"""
