"""The corpus of typed models (tests/typed/corpus.py) against the cluster: every generated CRD is accepted, and
pydantic (strict, on JSON) and the server agree on generated valid and invalid objects.

With `--backend=envtest`, "the server" is the real kube-apiserver 1.34.4: the agreement is the one that
docs/models.md promises. With the emulator, it checks the local cluster's validation against pydantic
(CEL rules aside: the local cluster does not evaluate them yet). The objects are created with
`dryRun=All` (validated and defaulted, never stored); pydantic is given the object as the server would store
it when the server accepts it (a null in an optional field that is not nullable is dropped by the server, or
replaced by the default: what the handlers will see), and as it was sent when the server refuses it. The
differences allowed are the validators that one
side cannot express: the corpus marks them per case (`server_only`, `pydantic_only`).
"""
import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pydantic
import pytest

from kopf._typed import declaring, definitions
from kopf.testing import LocalCluster

from .. import backends
from ..backends import Cluster
from ..typed import corpus, sampling

Obj = dict[str, Any]
ASSEMBLED = definitions.assemble([case.cls for case in corpus.CASES])
NO_CEL_GROUP = f'nocel.{corpus.GROUP}'   # the same CRDs without their CEL rules: is a refusal the rules' only?

# What the local cluster does differently from kube-apiserver 1.34.4 here (found by this test on envtest): the
# objects are allowed to differ on the emulator backend only, and must still differ there (so a fix is noticed).
EMULATOR_DIFFERS = {
    # An embedded resource's `metadata` must be an object: kube-apiserver refuses a string or a null there.
    'C26EmbeddedModel': {'spec.object.metadata: a wrong type', 'spec.object.metadata: a null'},
}


def _without_cel(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _without_cel(item) for key, item in value.items() if key != 'x-kubernetes-validations'}
    if isinstance(value, list):
        return [_without_cel(item) for item in value]
    return value


def _no_cel_crd(crd: Obj) -> Obj:
    crd = _without_cel(crd)
    crd['spec']['group'] = NO_CEL_GROUP
    crd['metadata']['name'] = f'{crd["spec"]["names"]["plural"]}.{NO_CEL_GROUP}'
    return crd


NO_CEL_CRDS = [_no_cel_crd(crd) for crd in ASSEMBLED.crds]


@pytest.fixture(scope='module')
def corpus_cluster(request: pytest.FixtureRequest) -> Iterator[Cluster]:
    """One cluster for the module with all the corpus's CRDs (removed at the end on envtest)."""
    if backends.backend(request.config) == 'envtest':
        shared = request.getfixturevalue('envtest_cluster')
        with backends.cluster_cleaned(shared):
            shared.apply(*ASSEMBLED.crds, *NO_CEL_CRDS)
            yield shared
        return
    with LocalCluster() as local:
        local.apply(*ASSEMBLED.crds, *NO_CEL_CRDS)
        yield local


def test_the_corpus_covers_forty_crds() -> None:
    assert len(ASSEMBLED.crds) >= 40
    assert len({case.cls for case in corpus.CASES}) == len(corpus.CASES)


def test_every_generated_crd_is_accepted_and_served(corpus_cluster: Cluster) -> None:
    for crd in ASSEMBLED.crds:
        stored = corpus_cluster.get('apiextensions.k8s.io/v1', 'CustomResourceDefinition', crd['metadata']['name'])
        assert stored is not None
        conditions = {c['type']: c['status'] for c in stored['status']['conditions']}
        assert conditions.get('Established') == 'True', crd['metadata']['name']
        assert conditions.get('NamesAccepted') == 'True', crd['metadata']['name']
        assert [v['name'] for v in stored['spec']['versions']] == [v['name'] for v in crd['spec']['versions']]


def _post(cluster: Cluster, path: str, body: Obj) -> tuple[int, Any]:
    if backends.is_envtest(cluster):
        return cluster.request('POST', path, body, check=False)
    data = json.dumps(body).encode()
    req = urllib.request.Request(cluster.url + path, data=data, method='POST',
                                 headers={'Content-Type': 'application/json'})
    try:
        with urllib.request.urlopen(req, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b'null')


def _server_accepts(cluster: Cluster, cls: type, fields: Obj, index: int, *,
                    group: str | None = None) -> tuple[bool, str, Obj]:
    """Whether the server accepts the object; why not; and the object as it would store it (pruned, defaulted)."""
    declaration = declaring.declaration_of(cls)
    assert declaration is not None
    api_version = f'{group or declaration.group}/{declaration.version}'
    where = '/namespaces/default' if declaration.scope == 'Namespaced' else ''
    path = f'/apis/{api_version}{where}/{declaration.plural}?dryRun=All'
    body = {'apiVersion': api_version, 'kind': declaration.kind, 'metadata': {'name': f'sample-{index}'}, **fields}
    status, answer = _post(cluster, path, body)
    assert status in (200, 201, 422, 400), (status, answer)
    if status >= 300:
        return False, str(answer.get('message')), fields
    return True, '', {key: value for key, value in answer.items() if key not in sampling.RESERVED}


def _pydantic_accepts(cls: type, fields: Obj) -> tuple[bool, str]:
    try:
        pydantic.TypeAdapter(cls).validate_json(json.dumps(fields), strict=True)
    except pydantic.ValidationError as exc:
        return False, str(exc).splitlines()[1] if len(str(exc).splitlines()) > 1 else str(exc)
    return True, ''


def _samples(case: corpus.Case) -> list[tuple[str, Obj]]:
    schema = definitions.generating.resource_schema(case.cls).schema
    fields = {name: prop for name, prop in schema['properties'].items() if name not in sampling.RESERVED}
    top = {**schema, 'properties': fields}
    base = case.valid if case.valid is not None else sampling.valid(top)
    declaration = declaring.declaration_of(case.cls)
    skipped = ('status',) if 'status' in fields and declaration and declaration.status_subresource is not False \
        else ()   # a create ignores the status when it is a subresource: only the status endpoint checks it
    samples = [('the valid object', base)]
    for path, what, replacement in sampling.variants(top, base):
        if not path or path[0] in skipped:   # the top: not an object, or without apiVersion & kind
            continue
        samples.append((f'{sampling.format_path(path) or "the object"}: {what}',
                        sampling.replaced(base, path, replacement)))
    return samples


SERVED = [case for case in corpus.CASES if getattr(declaring.declaration_of(case.cls), 'served', True)]


@pytest.mark.parametrize('case', SERVED, ids=[case.cls.__name__ for case in SERVED])
def test_pydantic_and_the_server_agree(corpus_cluster: Cluster, case: corpus.Case,
                                       request: pytest.FixtureRequest) -> None:
    """Every generated object: accepted by both or refused by both; or refused by the server for a CEL rule only
    (the same CRD without its rules accepts it), which pydantic cannot evaluate (docs/models.md)."""
    disagreements, by_cel = [], []
    outcomes = set()
    for index, (what, fields) in enumerate(_samples(case)):
        server, server_says, stored = _server_accepts(corpus_cluster, case.cls, fields, index)
        python, python_says = _pydantic_accepts(case.cls, stored)
        outcomes.add(server)
        if server == python:
            continue
        if not server and _server_accepts(corpus_cluster, case.cls, fields, index, group=NO_CEL_GROUP)[0]:
            by_cel.append(what)
            continue
        disagreements.append(f'{what}: server {"accepts" if server else "refuses"} ({server_says}), '
                             f'pydantic {"accepts" if python else "refuses"} ({python_says}): {fields}')
    known = EMULATOR_DIFFERS.get(case.cls.__name__, set()) if not backends.is_envtest(corpus_cluster) else set()
    assert sorted(what.split(': server')[0] for what in disagreements) == sorted(known)
    assert outcomes == {True, False}   # the samples cross the constraints: some are valid, some not
    assert not by_cel or _has_rules(case.cls)


def _has_rules(cls: type) -> bool:
    return 'x-kubernetes-validations' in json.dumps(definitions.generating.resource_schema(cls).schema)


@pytest.mark.parametrize('case', [c for c in SERVED if c.server_only or c.pydantic_only],
                         ids=[c.cls.__name__ for c in SERVED if c.server_only or c.pydantic_only])
def test_the_allowed_differences_are_what_docs_say(corpus_cluster: Cluster, case: corpus.Case,
                                                   request: pytest.FixtureRequest) -> None:
    """A CEL rule or a format is the server's only; a Python validator is pydantic's only (docs/models.md)."""
    evaluates_cel = backends.backend(request.config) == 'envtest'
    for index, fields in enumerate(case.server_only):
        assert _pydantic_accepts(case.cls, fields)[0], fields
        if evaluates_cel:
            assert not _server_accepts(corpus_cluster, case.cls, fields, 1000 + index)[0], fields
    for index, fields in enumerate(case.pydantic_only):
        assert not _pydantic_accepts(case.cls, fields)[0], fields
        assert _server_accepts(corpus_cluster, case.cls, fields, 2000 + index)[0], fields
