"""The Kubernetes API client: credentials, requests and errors, discovery, list+watch, patching, events.

The only package that uses aiohttp's client. Upper layers catch its errors by class, never by status code.

Modules (pure ones marked so: no I/O, tested with dict literals):
- `errors`       the APIError hierarchy, `map_error()`, the retry policy `decide_retry()` (pure)
- `credentials`  `ConnectionInfo`, `AiohttpSession`, and the `Vault` (re-login once per exhaustion)
- `kubeconfig`   kubeconfig files merged as kubectl does, exec credential plugins
- `loginning`    `login_with_kubeconfig/_service_account`, `login_via_pykube/_client/_async_client`
- `namespaces`   namespace patterns `team-*,!team-x` (pure)
- `client`       `APIClient.request()/.stream()`: sessions, retries, 401 re-login
- `discovery`    `Discovery.scan()/.select(selector)/.schema(resource)`
- `streams`      the watch stream's state and `step()` (pure)
- `watching`     `watch_objs()`: list (chunked) + watch, resume, re-list, inactivity reconnects
- `patching`     `patch_obj()`: main body + `/status`, guarded JSON-patches, dropped-field warning
- `events`       `kopf.event/info/warn/exception` and the background `EventPoster`
"""
