"""The HTTP surface: requests in, Kubernetes answers out (aiohttp's low-level server, no router).

    dispatching    `Dispatcher`: the request log, authentication, injected faults, then the route
    endpoints      /api and /apis: decode a request, run the pipeline, encode the answer; `Backend`, the narrow
                   interface handlers get (state, watch streams, counters, access rules, controllers' wake-up)
    watchstreams   one watch request: the starting point, live lines, bookmarks, timeouts
    apidiscovery   /version, /api, /apis and the APIResourceLists
    tables         kubectl's `Table` answers (typed CRD printer columns, events, `includeObject`)
    printers       the columns of built-in kinds
    cells          values at JSONPaths as Table cells (kubectl's defaults), and relative ages
    duplicates     the duplicate fields of a JSON body (strict decoding's `duplicate field "x"`)
    protobuf       decoding kubectl's protobuf bodies of built-in kinds (by the field tables in `protos`)
    protos         the generated protobuf field tables of the built-in kinds
    accessrules    users by bearer token or client certificate (401), and the `forbid()` rules (403)
    accessreviews  the access reviews (`kubectl auth can-i`, `auth whoami`): answered from the access rules
    faults         injected failures, per-verb counters, the request log
    tlsmode        HTTPS mode: the TLS context from a throw-away CA's certificates (kopf._shared.certificates)
    kubeconfigfiles  kubeconfig files pointing at the emulator

Never reaches the server object: handlers get a `Backend`; the control API under `/_emulator/` is a callable
given to the `Dispatcher` (it lives in `control`).
"""
