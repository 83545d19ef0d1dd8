"""The HTTP control API under `/_emulator/`: the same operations as the `Emulator` methods.

    POST   /_emulator/faults  {"method","path","status","count","retryAfter","text","message","latency","drop"}
    DELETE /_emulator/faults
    POST   /_emulator/watches/close     {"abort": false}
    POST   /_emulator/watches/fail      {"code": 410}   (one ERROR event to every stream, then the end)
    POST   /_emulator/history/compact   {"keep": 0}
    PUT    /_emulator/bookmark-interval {"seconds": 0.5}
    GET    /_emulator/counters          DELETE /_emulator/counters
    GET    /_emulator/events            (uid, resourceVersion, type) of persisted changes
    GET    /_emulator/requests          the recent request log
    POST   /_emulator/tokens            {"old": "t1", "new": "t2"}  (a bearer token rotated; "new": null revokes)
"""
from typing import TYPE_CHECKING, Any

from aiohttp import web

from kopf._cluster import encoding

if TYPE_CHECKING:
    from kopf._cluster.server import Emulator


def _json(data: Any, status: int = 200) -> web.Response:
    return web.Response(status=status, body=encoding.dumps(data), content_type='application/json')


async def _body(request: web.Request) -> dict[str, Any]:
    raw = await request.read()
    if not raw:
        return {}
    data = encoding.loads(raw)
    return data if isinstance(data, dict) else {}


async def serve(emu: 'Emulator', request: web.Request) -> web.Response:
    route = (request.method, request.path.rstrip('/').removeprefix('/_emulator'))
    try:
        body = await _body(request)
    except ValueError:
        return _json({'error': 'malformed JSON body'}, 400)
    if route == ('POST', '/faults'):
        rule = emu.fail(body.get('method', '*'), body.get('path', '*'), body.get('status', 500),
                        count=body.get('count', 1), retry_after=body.get('retryAfter'),
                        text=bool(body.get('text', False)), message=body.get('message'),
                        latency=float(body.get('latency', 0.0)))
        rule.drop = bool(body.get('drop', False))
        if ('status' in body and body['status'] is None) or rule.drop:
            rule.status = None
        return _json({'ok': True}, 201)
    if route == ('DELETE', '/faults'):
        emu.clear_faults()
        return _json({'ok': True})
    if route == ('POST', '/watches/close'):
        return _json({'closed': emu.close_watches(abort=bool(body.get('abort', False)))})
    if route == ('POST', '/watches/fail'):
        return _json({'failed': emu.fail_watches(int(body.get('code', 410)))})
    if route == ('POST', '/history/compact'):
        emu.compact_history(int(body.get('keep', 0)))
        return _json({'ok': True})
    if route in (('PUT', '/bookmark-interval'), ('POST', '/bookmark-interval')):
        emu.set_bookmark_interval(float(body['seconds']))
        return _json({'ok': True})
    if route == ('GET', '/counters'):
        return _json(emu.counters())
    if route == ('DELETE', '/counters'):
        emu.reset_counters()
        return _json({'ok': True})
    if route == ('GET', '/events'):
        return _json([list(entry) for entry in emu.event_log()])
    if route == ('GET', '/requests'):
        return _json(emu.request_log())
    if route == ('POST', '/tokens'):
        new = body.get('new')
        if not isinstance(body.get('old'), str) or not (new is None or isinstance(new, str)):
            return _json({'error': 'expected {"old": "<token>", "new": "<token>" or null}'}, 400)
        try:
            emu.rotate_token(body['old'], new)
        except ValueError as exc:
            return _json({'error': str(exc)}, 400)
        return _json({'ok': True})
    return _json({'error': f'no such control endpoint: {request.method} {request.path}'}, 404)
