"""The history an envtest cluster serves: etcd's revisions, and kube-apiserver's watch cache in front of them.

Measured on kube-apiserver 1.34.4 (its defaults: the watch cache on, `ListFromCacheSnapshot` on):
- A compaction of etcd alone expires nothing a client sees at once: watches are served from the watch
  cache (it keeps at least 75 s of events, growing to keep them; `--watch-cache-sizes` only turns it off,
  and only for built-in resources), and a `continue` token from the cache's snapshot of its revision.
  The cache drops the snapshots below etcd's compaction only when it polls for it (every 15 s), and only
  for compactions the apiserver's own compactor made (it tells them apart by a key of its own).
- A change of a CRD's spec (an annotation is not enough) rebuilds its resource's storage: a new cache,
  listed at the current revision, as after a restart of the server. A watch from an older resourceVersion
  gets `410 Expired` ("too old resource version: N (M)"); a `continue` token or an exact LIST older than it
  has no snapshot there and is served from etcd, `410 Expired` if compacted ("The provided continue
  parameter is too old ...").
"""
import base64
import copy
import http.client
import ssl
import time
import urllib.parse
from collections.abc import Callable
from typing import Any

from kopf._kits import envassets, envprocs

Requester = Callable[..., tuple[int, Any]]
CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions'
MARK = 'kopf-envtest: this watch cache was started anew'


def current_revision(etcd_url: str) -> int:
    """The revision of etcd now (the newest resourceVersion of any object)."""
    _, answer = envprocs.etcd_call(etcd_url, '/v3/kv/range', {'key': base64.b64encode(b'/').decode()})
    return int(answer['header']['revision'])


def compact(etcd_url: str, revision: int | str | None = None) -> int:
    """Compact etcd up to a revision (the current one by default); returns the revision compacted to."""
    revision = current_revision(etcd_url) if revision is None else revision
    compaction = {'revision': str(revision), 'physical': True}
    status, answer = envprocs.etcd_call(etcd_url, '/v3/kv/compaction', compaction)
    if status != 200 and 'has been compacted' not in str(answer):   # compacted already: nothing to do
        raise envassets.EnvtestError(f'etcd refused the compaction to {revision}: {status} {answer}')
    return int(revision)


def restart_watch_cache(request: Requester, url: str, context: ssl.SSLContext, etcd_url: str, crd_name: str,
                        *, timeout: float = 30) -> None:
    """Start the watch cache of a CRD's resource anew: its spec changed (the schema's description), and back.

    Returns when the last new cache serves the resource (a watch from before the change gets its 410).
    """
    path = f'{CRDS}/{urllib.parse.quote(crd_name)}'
    original = request('GET', path)[1]
    changed = copy.deepcopy(original['spec'])
    schema = changed['versions'][0].setdefault('schema', {}).setdefault('openAPIV3Schema', {})
    schema['description'] = f'{schema.get("description") or ""} ({MARK})'.strip()
    group, plural = original['spec']['group'], original['spec']['names']['plural']
    served = next(v['name'] for v in original['spec']['versions'] if v.get('served', True))
    scope = '/namespaces/default' if original['spec']['scope'] == 'Namespaced' else ''
    watched = f'/apis/{group}/{served}{scope}/{plural}'
    for spec in (changed, original['spec']):
        before = current_revision(etcd_url)
        crd = request('GET', path)[1]
        request('PUT', path, {**crd, 'spec': spec})
        deadline = time.monotonic() + timeout
        while not _too_old(url, context, f'{watched}?watch=true&resourceVersion={before}'):
            if time.monotonic() > deadline:
                raise envassets.EnvtestError(f'The watch cache of {crd_name} is not started anew in {timeout:g} s.')
            time.sleep(0.05)


def _too_old(url: str, context: ssl.SSLContext, path: str) -> bool:
    """Whether a watch gets `410 Expired` at once (a new cache); a silent one is served (the old cache)."""
    parsed = urllib.parse.urlparse(url)
    conn = http.client.HTTPSConnection(parsed.hostname or '127.0.0.1', parsed.port, context=context, timeout=5)
    try:
        conn.request('GET', path, headers={'Accept': 'application/json'})
        response = conn.getresponse()
        if response.status != 200:  # 429 while the new cache is listed: not yet
            return response.status == 410
        assert conn.sock is not None
        conn.sock.settimeout(0.3)
        try:
            line = response.readline()
        except TimeoutError:
            return False
        return b'"code":410' in line
    finally:
        conn.close()
