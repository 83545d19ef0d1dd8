"""The Kubernetes API client: credentials, requests and errors, discovery, list+watch, patching, events.

The only package that talks to the API: with its own HTTP/1.1 client (`http`), or aiohttp's client (imported
lazily, for proxies and login handlers' aiohttp sessions). Upper layers catch its errors by class, never by status.

Modules (pure ones marked so: no I/O, tested with dict literals):
- `apierrors`    the APIError hierarchy, `map_error()`, the retry policy `decide_retry()`, backoffs (pure)
- `credentials`  `ConnectionInfo`, `AiohttpSession`, and the `Vault` (re-login once per exhaustion)
- `kubeconfig`   kubeconfig files merged as kubectl does, exec credential plugins
- `loginning`    `login_with_kubeconfig/_service_account`, `login_via_pykube/_client/_async_client`
- `namespaces`   namespace patterns `team-*,!team-x` (pure)
- `http`         a small asyncio HTTP/1.1 client: keep-alive pools, chunked answers, streams, timeouts
- `inflight`     requests in flight: their slots (a bound, FIFO) and their deadlines (one timer per session)
- `transports`   one `Transport` protocol: ours (`http`) for direct connections, aiohttp's for the rest
- `client`       `APIClient.request()/.stream()`: a transport per credentials, one loop of retries and 401 re-login
- `discovery`    `Discovery.scan()/.select(selector)/.schema(resource)`
- `watchstate`   the state of one list+watch stream and its `step()` (pure)
- `watching`     `watch_objs()`: list (chunked) + watch, resume, re-list, inactivity reconnects
- `objectwrites` `patch_obj()`: main body + `/status`, guarded JSON-patches, dropped-field warning
- `events`       `kopf.event/info/warn/exception` and the background `EventPoster`
"""
