"""The HTTP face of the Kubernetes API: decode a request, run the pipeline, encode the answer.

Request handlers receive a `Backend` (the state, the watch streams, the counters, the access rules),
never the server object itself.
"""
import dataclasses
import json
from collections.abc import Callable, Mapping
from typing import Any

import yaml
from aiohttp import web
from multidict import CIMultiDict

from kopf._cluster import jsoncodec, statuses
from kopf._cluster.admitting import calling, policies, reviews
from kopf._cluster.apis import routing
from kopf._cluster.apis.routing import Target
from kopf._cluster.openapi import documents
from kopf._cluster.patchtypes import jsonpatches
from kopf._cluster.pipeline import podactions, scaling, serverside, tokenrequests, writing
from kopf._cluster.pipeline.state import State
from kopf._cluster.rbac.subjects import User
from kopf._cluster.store import reading
from kopf._cluster.web import accessreviews, accessrules, apidiscovery, duplicates, protobuf, tables
from kopf._cluster.web.faults import Faults
from kopf._cluster.web.watchstreams import Streams
from kopf._shared import resourcetable

JSON_TYPE = 'application/json'
ROUTES_KEPT = 10000   # resolved request paths remembered (per catalog state)
TRUE = ('1', 't', 'T', 'true', 'TRUE', 'True')
FALSE = ('0', 'f', 'F', 'false', 'FALSE', 'False')


@dataclasses.dataclass
class Backend:
    """What request handlers may touch: no lifecycle, no control operations, no configuration."""

    state: State                          # the store and the catalog of served resources
    streams: Streams                      # watch requests (and waiting for a resourceVersion to exist)
    faults: Faults                        # per-verb counters (and the injected failures, the request log)
    access: accessrules.Access            # the users and the forbid() rules
    wake_controllers: Callable[[], None]  # after deletions: garbage collection and cleanups run soon
    webhook_services: Mapping[str, str] = dataclasses.field(default_factory=dict)  # "ns/name" -> URL
    address: str = ''                     # host:port, as discovery advertises it (set once bound)


def parse_bool(value: str | None) -> bool:
    if value is None or value == '':
        return False
    if value in TRUE:
        return True
    if value in FALSE:
        return False
    raise statuses.bad_request(f'strconv.ParseBool: parsing "{value}": invalid syntax')


def respond(code: int, data: bytes, warnings: list[str] | None = None) -> web.Response:
    """A JSON answer ending with a newline, as Go's `json.Encoder` (and so kube-apiserver) writes it."""
    data += b'\n'
    if not warnings:   # the hot path: the same headers, built once instead of twice
        return web.Response(status=code, body=data, content_type=JSON_TYPE)
    headers: CIMultiDict[str] = CIMultiDict()
    headers['Content-Type'] = JSON_TYPE
    for text in warnings or ():
        escaped = text.replace('\\', '\\\\').replace('"', '\\"')
        headers.add('Warning', f'299 - "{escaped}"')
    return web.Response(status=code, body=data, headers=headers)


def respond_error(error: statuses.ApiError) -> web.Response:
    if error.code == 406:   # no serializer was negotiated: a real server writes indented JSON, no newline
        text = json.dumps(error.status(), indent=2, ensure_ascii=False).encode()
        return web.Response(status=406, body=jsoncodec.go_escaped(text), content_type=JSON_TYPE)
    response = respond(error.code, jsoncodec.dumps(error.status()))
    response.headers.update(error.headers)
    return response


def decode(raw: bytes, content_type: str) -> Any:
    """The request body as JSON-like values; malformed or too deeply nested bodies are a 400."""
    if not raw:
        return None
    if 'protobuf' in content_type:
        body = protobuf.decode(raw)
    else:
        try:
            body = yaml.safe_load(raw) if 'yaml' in content_type else jsoncodec.loads(raw)
        except (ValueError, yaml.YAMLError) as exc:
            raise statuses.bad_request(f'error decoding request body: {exc}') from None
        except RecursionError:   # the YAML parser recurses per level
            raise statuses.bad_request(too_deep()) from None
    if jsoncodec.fast() and 'yaml' not in content_type and 'protobuf' not in content_type:
        if jsoncodec.may_nest_deeper(raw) and jsoncodec.nests_deeper(body):   # orjson checked the strings
            raise statuses.bad_request(too_deep())
        return body
    try:   # YAML, protobuf, the standard library's JSON: can it be sent back at all?
        jsoncodec.dumps_kept(body)
    except jsoncodec.TooDeep:
        raise statuses.bad_request(too_deep()) from None
    except (TypeError, ValueError) as exc:   # e.g. a lone surrogate (`"\ud83d"` in YAML): not UTF-8
        raise statuses.bad_request(f'error decoding request body: {exc}') from None
    return body


def too_deep() -> str:
    return (f'error decoding request body: exceeded max depth: the object is nested deeper than '
            f'{jsoncodec.MAX_DEPTH} levels (the limit of the local cluster)')


OPTIONS_KINDS = {'create': 'CreateOptions', 'update': 'UpdateOptions', 'patch': 'PatchOptions',
                 'delete': 'DeleteOptions', 'deletecollection': 'DeleteOptions'}
UNKNOWN_MANAGER = 'unknown'   # a write with no fieldManager and no User-Agent: a real server's name for it
_PLAIN_OPTIONS: dict[str, writing.Options] = {}   # by User-Agent: the options of writes without a query


def options(params: Mapping[str, str], body: Any = None, agent: str = '', repeated: list[str] | None = None,
            user: User | None = None) -> writing.Options:
    """Write options from the query (and a DeleteOptions body); `agent` (User-Agent) names unnamed managers;
    `repeated`: the body's duplicate fields; `user`: who writes (only others than `system:masters` are checked)."""
    if user is not None and not user.privileged:
        return dataclasses.replace(options(params, body, agent, repeated), user=user)
    if repeated:
        return dataclasses.replace(options(params, body, agent), duplicates=tuple(repeated))
    if not params and body is None:   # the hot path: the same (frozen) options for every such write
        plain = _PLAIN_OPTIONS.get(agent)
        if plain is None:
            if len(_PLAIN_OPTIONS) > 100:
                _PLAIN_OPTIONS.clear()
            plain = _PLAIN_OPTIONS[agent] = writing.Options(manager=agent.split('/')[0] or UNKNOWN_MANAGER)
        return plain
    body = body if isinstance(body, Mapping) else {}
    validation = params.get('fieldValidation') or 'Warn'
    if validation not in ('Strict', 'Warn', 'Ignore'):
        raise statuses.bad_request(f'fieldValidation parameter unsupported: {validation}')
    dry_run = body.get('dryRun') or params.get('dryRun')
    return writing.Options(
        validation=validation,
        dry_run=bool(dry_run),
        propagation=_propagation(params, body),
        preconditions=dict(body.get('preconditions') or {}),
        manager=params.get('fieldManager') or agent.split('/')[0] or UNKNOWN_MANAGER,
        force=parse_bool(params.get('force')),
    )


def _propagation(params: Mapping[str, str], body: Mapping[str, Any]) -> str:
    """propagationPolicy from the body or the query; the deprecated orphanDependents means Orphan/Background."""
    policy = body.get('propagationPolicy') or params.get('propagationPolicy')
    if policy and policy not in ('Foreground', 'Background', 'Orphan'):
        raise statuses.invalid('DeleteOptions', 'meta.k8s.io', '', [statuses.cause(
            'FieldValueNotSupported', 'propagationPolicy', f'Unsupported value: "{policy}": supported values: '
            '"Foreground", "Background", "Orphan", "nil"')])
    if policy:
        return str(policy)
    orphan = body.get('orphanDependents', params.get('orphanDependents'))
    if orphan is None:
        return ''
    return 'Orphan' if orphan is True or (isinstance(orphan, str) and parse_bool(orphan)) else 'Background'


async def api(backend: Backend, request: web.Request) -> web.StreamResponse:
    """Everything under /api and /apis: discovery documents and resource requests."""
    catalog = backend.state.catalog
    routed: tuple[Target, bool] | None = catalog.routes.get(request.path)
    if routed is None:
        routed = routing.object_route(catalog.routes, request.path)
    if routed is None:
        parts = [p for p in request.path.split('/') if p]
        if request.method == 'GET' and _is_discovery(parts):
            backend.faults.count('get', 'discovery')
            if len(parts) == 1 and apidiscovery.wants_aggregated(request.headers.get('Accept', '')):
                document = apidiscovery.aggregated(catalog, core=parts == ['api'])
                return web.Response(status=200, body=jsoncodec.dumps(document),
                                    headers={'Content-Type': apidiscovery.AGGREGATED_TYPE, 'Vary': 'Accept'})
            return respond(200, jsoncodec.dumps(_discovery(backend, parts)))
        path, legacy = routing.legacy_watch(parts)
        routed = routing.resolve(catalog, path), legacy   # unknown paths raise: only served ones are kept
        if len(catalog.routes) >= ROUTES_KEPT:
            catalog.routes.clear()
        catalog.routes[request.path] = routed
        routing.remember_collection(catalog, catalog.routes, request.path, routed)
    target, legacy_watch = routed
    params = request.query
    watch = request.method == 'GET' and (legacy_watch or parse_bool(params.get('watch')))
    verb = routing.verb_of(request.method, target, watch)
    plural = target.resource.plural + (f'/{target.subresource}' if target.subresource else '')
    backend.faults.count(verb, plural)
    routing.check_allowed(request.method, target, verb)
    if watch:
        return await backend.streams.serve(request, target, params)
    return await _serve(backend, request, target, verb)


async def _read(backend: Backend, request: web.Request, target: Target, verb: str) -> web.Response:
    """A get or a list: the object(s) as JSON, or as a Table if the client asks for one; a scale's view."""
    store = backend.state.store
    params = request.query
    if verb == 'get' and target.subresource == 'scale':
        return respond(200, jsoncodec.dumps(scaling.view(target.resource, reading.get_object(store, target))))
    version = tables.negotiate(request.headers.get('Accept', ''))   # a Table's, or None; unacceptable: a 406
    table = version is not None and target.subresource is None
    version = version or 'v1'
    if verb == 'list' and params.get('resourceVersionMatch') != 'Exact':
        await backend.streams.wait_for_rv(params.get('resourceVersion') or '')
    include = tables.include_object(params) if table else ''
    if verb == 'get' and table:
        obj = reading.get_object(store, target)
        meta = {'resourceVersion': obj['metadata']['resourceVersion']}
        return respond(200, jsoncodec.dumps(tables.table(target.resource, [obj], meta, include=include,
                                                         version=version)))
    if verb == 'get':
        return respond(200, jsoncodec.dumps(reading.get_object(store, target)))
    shards = backend.state.settings.shard_selectors
    if table:   # a Table has no `shardInfo` (a real server copies only the other list fields)
        items, meta = reading.select(store, target, params, shards)
        return respond(200, jsoncodec.dumps(tables.table(target.resource, items, meta, include=include,
                                                         version=version)))
    return respond(200, reading.list_objects(store, target, params, shards))


async def _serve(backend: Backend, request: web.Request, target: Target, verb: str) -> web.Response:
    if verb in ('get', 'list'):
        return await _read(backend, request, target, verb)
    params = request.query
    tables.negotiate(request.headers.get('Accept', ''))   # an unacceptable one: a 406, for writes too
    headers = request.headers
    raw_type = headers.get('Content-Type', '')
    # A real server's 415 (also for form-urlencoded, the default of urllib and `curl -d`).
    if verb in ('create', 'update') and raw_type and not any(t in raw_type for t in ('json', 'yaml', 'protobuf')):
        raise statuses.unsupported_media(['application/json', 'application/yaml',
                                          'application/vnd.kubernetes.protobuf'])
    raw = await request.read()
    body = decode(raw, raw_type)
    repeated = duplicates.duplicates(raw, body, jsoncodec.dumps) if verb in ('create', 'update') and raw and not any(
        t in raw_type for t in ('yaml', 'protobuf')) else []
    unstored = _unstored(backend, request, target, body)
    if unstored is not None:
        return unstored
    content_type = raw_type.split(';')[0].strip()
    agent = headers.get('User-Agent', '')
    user = accessrules.user_of(request)
    if verb == 'patch':
        serverside.check(content_type, params.get('fieldManager') or '', parse_bool(params.get('force')))
    if params.get('dryRun') not in (None, 'All') and verb in OPTIONS_KINDS:
        raise statuses.invalid(OPTIONS_KINDS[verb], 'meta.k8s.io', '', [statuses.cause(
            'FieldValueNotSupported', 'dryRun', f'Unsupported value: ["{params["dryRun"]}"]: supported values: "All"')])
    outcome: writing.Outcome
    if verb == 'create' and podactions.handles(target):
        outcome = podactions.act(backend.state, target, body, options(params, agent=agent, user=user))
    elif verb != 'deletecollection' and target.subresource != 'scale' and (
            reviews.configured(backend.state) or policies.configured(backend.state)):
        outcome = await _admitted(backend, request, target, verb, body)
    elif verb == 'create':
        outcome = writing.create(backend.state, target, body,
                                 options(params, agent=agent, repeated=repeated, user=user))
    elif verb == 'update':
        outcome = writing.replace(backend.state, target, body,
                                  options(params, agent=agent, repeated=repeated, user=user))
    elif verb == 'patch' and content_type == jsonpatches.APPLY and target.subresource != 'scale':
        outcome = _apply(backend, target, raw, body, options(params, agent=agent, user=user))
    elif verb == 'patch':
        outcome = writing.patch(backend.state, target, content_type, body, options(params, agent=agent, user=user))
    elif verb == 'delete':
        outcome = writing.delete(backend.state, target, options(params, body, user=user))
        backend.wake_controllers()
    else:
        return respond(200, _delete_collection(backend, target, params, body))
    return respond(outcome.code, outcome.data, outcome.warnings)


def _apply(backend: Backend, target: Target, raw: bytes, body: Any, opts: writing.Options) -> writing.Outcome:
    """A server-side apply; its YAML's duplicate keys are go-yaml's strict errors (Strict: a 400; Warn: warnings)."""
    repeated = duplicates.yaml_duplicates(raw) if opts.validation != 'Ignore' and b':' in raw else []
    text = 'error converting YAML to JSON: yaml: unmarshal errors:\n' + '\n'.join(f'  {line}' for line in repeated)
    if repeated and opts.validation == 'Strict':
        raise statuses.bad_request(f'error strict decoding YAML: {text}')
    outcome = serverside.apply(backend.state, target, body, opts)
    if repeated:   # a header holds no newline
        outcome.warnings = [*outcome.warnings, text.replace('\n', ' ')]
    return outcome
def _unstored(backend: Backend, request: web.Request, target: Target, body: Any) -> web.Response | None:
    """The access reviews and TokenRequests: create-only (the routing allows nothing else), answered, never stored."""
    kind = accessreviews.KINDS.get(target.resource.key)
    if kind is not None and tables.negotiate(request.headers.get('Accept', '')):   # no Table of the unstored
        raise statuses.not_acceptable(('application/json', 'application/yaml', 'application/vnd.kubernetes.protobuf'))
    if kind is not None:
        answered = accessreviews.review(kind, body, accessrules.user_of(request), backend.access, target.namespace,
                                        _manager(request))
        return respond(201, jsoncodec.dumps(answered))
    if target.subresource == 'token':
        return respond(201, jsoncodec.dumps(tokenrequests.issue(backend.state, target, body, _manager(request))))
    return None


def _manager(request: web.Request) -> str:
    """The field manager of a request: `fieldManager`, else the User-Agent's product, else `unknown`."""
    return request.query.get('fieldManager') or request.headers.get('User-Agent', '').split('/')[0] or UNKNOWN_MANAGER


async def _admitted(backend: Backend, request: web.Request, target: Target, verb: str, body: Any) -> writing.Outcome:
    """The same writes, through the admission webhooks (only when any are configured)."""
    user = accessrules.user_of(request)
    admitter = calling.Admitter(backend.state, backend.webhook_services, policies.Subject(user.name, user.groups),
                                backend.access)
    params = request.query
    agent = request.headers.get('User-Agent', '')
    if verb == 'create':
        return await admitter.create(target, body, options(params, agent=agent, user=user))
    if verb == 'update':
        return await admitter.update(target, None, body, options(params, agent=agent, user=user))
    if verb == 'patch':
        content_type = request.headers.get('Content-Type', '').split(';')[0].strip()
        return await admitter.update(target, content_type, body, options(params, agent=agent, user=user))
    outcome = await admitter.delete(target, options(params, body, user=user))
    backend.wake_controllers()
    return outcome


def _delete_collection(backend: Backend, target: Target, params: Mapping[str, str], body: Any) -> bytes:
    """Delete every object matching the query's selectors, each as a single DELETE would."""
    match = reading.object_matcher(target, params, backend.state.settings.shard_selectors)
    user = None
    deleted: list[Any] = []
    for obj in list(backend.state.store.iterate(target.resource.key, target.namespace)):
        if match(obj):
            meta = obj['metadata']
            one = routing.Target(target.resource, meta.get('namespace') or None, meta['name'])
            outcome = writing.delete(backend.state, one, options(params, body, user=user))
            deleted.append(outcome.obj or obj)
    backend.wake_controllers()
    list_meta: dict[str, Any] = {'resourceVersion': str(backend.state.store.rv)}
    if backend.state.settings.shard_selectors and params.get('shardSelector') and not target.resource.custom:
        list_meta['shardInfo'] = {'selector': str(reading.shard_selector(params))}   # as its list says
    return jsoncodec.dumps(reading.listing(target.resource, deleted, list_meta))


def _is_discovery(parts: list[str]) -> bool:
    return parts in (['api'], ['apis']) or (parts[:1] == ['api'] and len(parts) == 2) or (
        parts[:1] == ['apis'] and len(parts) in (2, 3))


def _discovery(backend: Backend, parts: list[str]) -> dict[str, Any]:
    catalog = backend.state.catalog
    if parts == ['api']:
        return apidiscovery.core_versions(backend.address)
    if parts == ['apis']:
        return apidiscovery.group_list(catalog)
    if parts[0] == 'api':
        return apidiscovery.resource_list(catalog, '', parts[1])
    if len(parts) == 2:
        return apidiscovery.group(catalog, parts[1])
    return apidiscovery.resource_list(catalog, parts[1], parts[2])


async def openapi(backend: Backend, request: web.Request) -> web.Response:
    """`/openapi/v2` (JSON; an empty document for protobuf-only clients), the `/openapi/v3` index and documents."""
    crds = list(backend.state.store.iterate(resourcetable.CRDS.key))
    if request.path == '/openapi/v2':
        accept = request.headers.get('Accept', '')
        if accept and 'json' not in accept and '*/*' not in accept:   # protobuf only: we do not encode it
            return web.Response(status=200, body=b'', headers={'Content-Type': 'application/octet-stream'})
        return respond(200, jsoncodec.dumps(documents.v2_document(crds)))
    name = request.path.removeprefix('/openapi/v3').strip('/')
    found = documents.v3_index(crds) if not name else documents.v3_document(name, crds)
    if found is None:
        raise statuses.generic_not_found()
    return respond(200, jsoncodec.dumps(found))
