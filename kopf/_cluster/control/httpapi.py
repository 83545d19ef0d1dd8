"""The HTTP control API under `/_emulator/`: the routes of the control operations (`operations.Controls`).

Which routes exist, their bodies and their answers are declared with the operations themselves
(`operations.routes_help()` lists them). A malformed JSON body is a 400, an unknown route a 404,
arguments an operation refuses (e.g. an unknown token) a 400, all with `{"error": "..."}`.
"""
from typing import Any

from aiohttp import web

from kopf._cluster import jsoncodec
from kopf._cluster.control import operations

PREFIX = '/_emulator'


def _json(data: Any, status: int = 200) -> web.Response:
    return web.Response(status=status, body=jsoncodec.dumps(data), content_type='application/json')


async def _body(request: web.Request) -> dict[str, Any]:
    raw = await request.read()
    if not raw:
        return {}
    data = jsoncodec.loads(raw)
    if not isinstance(data, dict):
        raise operations.BadBody('the body must be a JSON object')
    return data


async def serve(emu: operations.Controlled, request: web.Request) -> web.Response:
    try:
        body = await _body(request)
    except operations.BadBody as exc:
        return _json({'error': str(exc)}, 400)
    except ValueError:
        return _json({'error': 'malformed JSON body'}, 400)
    operation = operations.find(request.method, request.path.rstrip('/').removeprefix(PREFIX))
    if operation is None or operation.route is None:
        return _json({'error': f'no such control endpoint: {request.method} {request.path}'}, 404)
    try:
        kwargs = operation.route.args(body)
    except operations.BadBody as exc:
        return _json({'error': str(exc)}, 400)
    try:
        result = operation.fn(emu, **kwargs)
    except ValueError as exc:   # the operation refused the arguments (e.g. an unknown token)
        return _json({'error': str(exc)}, 400)
    status, answer = operation.route.answer(result)
    return _json(answer, status)
