"""CEL in the local cluster: rules evaluated per second, and what 20 rules add to a create.

    .venv/bin/python bench/cel.py [--evals N] [--creates N] [--libraries PYTHON]

1. Rules per second: 8 Kubernetes-style rules (comparisons, string functions, macros over a list, `has`,
   optional chaining, a regex, a quantity), each compiled once and evaluated `--evals` times over one
   object (the CRD path: the schema's value conversion included), our evaluator only.
2. Create latency: `--creates` POSTs of a small custom object to a local cluster (over loopback HTTP, one
   connection), for a CRD with no rules and for the same CRD with 20 rules at three levels; the median
   and the ratio. (Rules compile once, when the CRD is written; the ratio is what each create pays.)
   `--server-instructions`: the same creates to a `kopf cluster` process run under valgrind's callgrind,
   counted in the server's instructions between `callgrind_control -i on/off` (the host's load does not
   move them): the creates' whole cost on the server, HTTP included, per CRD; and `--callgrind KIND`
   (`plain`/`ruled`, itself run under callgrind): the write pipeline alone, in-process, without HTTP.
3. With `--libraries PYTHON` (a throw-away venv with `common-expression-language`, `cel-python` and
   `cel-expr-python` installed), the same rules through the three libraries: how many evaluate as
   Kubernetes does, and their speed (for docs/design/decisions.md, decision 16).

Figures are printed, never asserted; time figures move with the host's load (`uptime` is printed beside).
"""
import argparse
import http.client
import json
import os
import statistics
import subprocess
import sys
import time
from typing import Any

from kopf._cluster.cel import crdrules, crdvalidation

SCHEMA: dict[str, Any] = {'type': 'object', 'properties': {'spec': {'type': 'object', 'properties': {
    'replicas': {'type': 'integer'}, 'name': {'type': 'string', 'maxLength': 63},
    'items': {'type': 'array', 'maxItems': 16, 'items': {'type': 'integer'}},
    'memory': {'type': 'string', 'maxLength': 16},
    'spec': {'type': 'object', 'properties': {'x': {'type': 'string', 'maxLength': 8}}},
}}}}
RULES = [
    'self.replicas >= 0 && self.replicas <= 10',
    "self.name.startsWith('a') && size(self.name) < 10",
    'self.items.all(x, x > 0)',
    "has(self.spec) && self.spec.x == 'y'",
    "self.?spec.?x.orValue('z') == 'y'",
    "self.name.matches('^[a-z]+$')",
    'self.items.map(x, x * 2).filter(y, y > 2).size() >= 0',
    "quantity(self.memory).isLessThan(quantity('1Gi'))",
]
SPEC = {'replicas': 3, 'name': 'abc', 'items': list(range(1, 11)), 'memory': '512Mi', 'spec': {'x': 'y'}}


def rules_per_second(evals: int) -> None:
    print(f'rules per second (each rule alone, {evals} evaluations, the CRD path):')
    total = 0.0
    for rule in RULES:
        schema = {**SCHEMA, 'properties': {'spec': {**SCHEMA['properties']['spec'],
                                                    'x-kubernetes-validations': [{'rule': rule}]}}}
        crdrules.tree(schema)   # compiled once, as when the CRD is written
        obj = {'spec': SPEC}
        started = time.perf_counter()
        for _ in range(evals):
            causes, _ = crdvalidation.validate(schema, obj)
        elapsed = time.perf_counter() - started
        assert not causes, causes
        total += elapsed
        print(f'  {evals / elapsed:10,.0f}/s  {rule}')
    print(f'  {evals * len(RULES) / total:10,.0f}/s  all eight')


def ruled_crd(name: str, rules: int) -> dict[str, Any]:
    plural = name.split('.')[0]
    spec_rules = [{'rule': f'self.replicas >= {-i}', 'message': f'rule {i}'} for i in range(rules // 2)]
    field_rules = [{'rule': f"self.size() < {100 + i}"} for i in range(rules - rules // 2 - rules // 4)]
    list_rules = [{'rule': f'self.all(x, x > {-i})'} for i in range(rules // 4)]
    props = {'replicas': {'type': 'integer'},
             'name': {'type': 'string', 'maxLength': 63, 'x-kubernetes-validations': field_rules},
             'items': {'type': 'array', 'maxItems': 16, 'items': {'type': 'integer'},
                       'x-kubernetes-validations': list_rules}}
    spec = {'type': 'object', 'properties': props, 'x-kubernetes-validations': spec_rules}
    if not rules:
        for prop in props.values():
            prop.pop('x-kubernetes-validations', None)
        spec.pop('x-kubernetes-validations')
    return {'apiVersion': 'apiextensions.k8s.io/v1', 'kind': 'CustomResourceDefinition', 'metadata': {'name': name},
            'spec': {'group': 'kopf.dev', 'scope': 'Namespaced',
                     'names': {'plural': plural, 'singular': plural[:-1], 'kind': plural.capitalize()[:-1]},
                     'versions': [{'name': 'v1', 'served': True, 'storage': True,
                                   'schema': {'openAPIV3Schema': {'type': 'object', 'properties': {'spec': spec}}}}]}}


def create_latency(creates: int) -> None:
    """Wall-clock medians over HTTP, the two CRDs' creates interleaved (so that load drifts hit both alike)."""
    from kopf.testing import LocalCluster
    with LocalCluster() as cluster:
        host, port = cluster.url.split('//')[1].split(':')
        conn = http.client.HTTPConnection(host, int(port))
        kinds = {}
        for plural, rules in (('plains', 0), ('ruleds', 20)):
            crd = ruled_crd(f'{plural}.kopf.dev', rules)
            cluster.apply(crd)
            kinds[rules] = (plural, crd['spec']['names']['kind'])
        times: dict[int, list[float]] = {0: [], 20: []}
        for i in range(creates):
            for rules, (plural, kind) in kinds.items():
                body = {'apiVersion': 'kopf.dev/v1', 'kind': kind, 'metadata': {'name': f'o{i}'},
                        'spec': {'replicas': 1, 'name': 'abc', 'items': [1, 2, 3]}}
                started = time.perf_counter()
                post(conn, f'/apis/kopf.dev/v1/namespaces/default/{plural}', body)
                times[rules].append(time.perf_counter() - started)
        medians = {rules: statistics.median(found[creates // 10:]) for rules, found in times.items()}
        for rules, median in medians.items():
            print(f'  CRD with {rules:2} rules: create median {median * 1e3:.3f} ms ({creates} creates)')
        print(f'  20 rules add {(medians[20] / medians[0] - 1) * 100:.1f}% to a create (wall clock)')


def instructions(kind: str, creates: int) -> None:
    """Under callgrind: `creates` in-process creates for the CRD without (`plain`) or with 20 rules (`ruled`)."""
    from kopf._cluster.apis.routing import Target
    from kopf._cluster.control.emulator import Emulator
    from kopf._cluster.pipeline import writing
    plural = 'plains' if kind == 'plain' else 'ruleds'
    emulator = Emulator()
    crd = ruled_crd(f'{plural}.kopf.dev', 0 if kind == 'plain' else 20)
    emulator.apply(crd)
    resource = emulator.state.catalog.lookup('kopf.dev', 'v1', plural)
    assert resource is not None
    kind_name = crd['spec']['names']['kind']

    def create(i: int) -> None:
        body = {'apiVersion': 'kopf.dev/v1', 'kind': kind_name, 'metadata': {'name': f'o{i}'},
                'spec': {'replicas': 1, 'name': 'abc', 'items': [1, 2, 3]}}
        writing.create(emulator.state, Target(resource, 'default', None), body, writing.Options())
    create(-1)   # warm: the rules compile with the CRD, the caches fill
    subprocess.run(['callgrind_control', '-i', 'on', str(os.getpid())], capture_output=True, check=True)
    for i in range(creates):
        create(i)
    subprocess.run(['callgrind_control', '-i', 'off', str(os.getpid())], capture_output=True, check=True)


def server_instructions(creates: int) -> None:
    """Per create, the instructions of a `kopf cluster` process under callgrind: plain CRD vs 20 rules."""
    import socket
    import tempfile
    figures = {}
    for plural, rules in (('plains', 0), ('ruleds', 20)):
        with socket.socket() as probe:
            probe.bind(('127.0.0.1', 0))
            port = probe.getsockname()[1]
        out = os.path.join(tempfile.mkdtemp(), 'callgrind.out')
        server = subprocess.Popen(['valgrind', '--tool=callgrind', '--instr-atstart=no', f'--callgrind-out-file={out}',
                                   sys.executable, '-m', 'kopf', 'cluster', '--port', str(port)],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            conn = wait_for_server(port)
            crd = ruled_crd(f'{plural}.kopf.dev', rules)
            post(conn, '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd)
            kind = crd['spec']['names']['kind']
            path = f'/apis/kopf.dev/v1/namespaces/default/{plural}'
            post(conn, path, {'apiVersion': 'kopf.dev/v1', 'kind': kind, 'metadata': {'name': 'warm'},
                              'spec': {'replicas': 1, 'name': 'abc', 'items': [1, 2, 3]}})
            subprocess.run(['callgrind_control', '-i', 'on', str(server.pid)], capture_output=True, check=True)
            for i in range(creates):
                post(conn, path, {'apiVersion': 'kopf.dev/v1', 'kind': kind, 'metadata': {'name': f'o{i}'},
                                  'spec': {'replicas': 1, 'name': 'abc', 'items': [1, 2, 3]}})
            subprocess.run(['callgrind_control', '-i', 'off', str(server.pid)], capture_output=True, check=True)
        finally:
            server.terminate()
            server.wait()
        totals = [int(line.split()[1]) for line in open(out) if line.startswith('totals:')]
        figures[rules] = max(totals) / creates
        print(f'  CRD with {rules:2} rules: {figures[rules]:,.0f} server instructions per HTTP create')
    print(f'  20 rules add {(figures[20] / figures[0] - 1) * 100:.1f}% to a create (instructions)')


def wait_for_server(port: int) -> http.client.HTTPConnection:
    deadline = time.monotonic() + 300   # a server under valgrind starts slowly
    while True:
        try:
            conn = http.client.HTTPConnection('127.0.0.1', port, timeout=60)
            conn.request('GET', '/version')
            conn.getresponse().read()
            return conn
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(1)


def post(conn: http.client.HTTPConnection, path: str, body: Any) -> None:
    conn.request('POST', path, json.dumps(body), {'Content-Type': 'application/json'})
    response = conn.getresponse()
    response.read()
    assert response.status == 201, (path, response.status)


def libraries_fidelity_of_ours() -> None:
    """Ours on cel_libraries.py's rules (`self` as dyn, as the libraries get it): as Kubernetes, and speed."""
    sys.path.insert(0, os.path.dirname(__file__))
    import cel_libraries

    from kopf._cluster.cel import celtypes, environment
    from kopf._cluster.cel.nodes import Issues

    def ours(rule: str) -> Any:
        env = environment.base_env().copy()
        env.add_ident('self', celtypes.DynType)
        compiled = environment.compile(rule, env)
        if isinstance(compiled, Issues):
            raise ValueError(str(compiled))
        program = compiled.program
        return lambda obj: program.eval({'self': obj})
    ok, of = cel_libraries.fidelity(ours)
    speed = cel_libraries.speed(ours, 20000)
    print(f'{"kopf._cluster.cel (ours)":28} as Kubernetes: {ok:2}/{of}   {speed:9,.0f} evals/s')


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument('--evals', type=int, default=20000)
    parser.add_argument('--creates', type=int, default=2000)
    parser.add_argument('--libraries', default='', help='a python with the three CEL libraries installed')
    parser.add_argument('--callgrind', choices=['plain', 'ruled'], help='in-process creates, under callgrind')
    parser.add_argument('--server-instructions', action='store_true', help='a kopf cluster under callgrind')
    args = parser.parse_args()
    if args.server_instructions:
        print('server instructions per create (callgrind):')
        server_instructions(args.creates)
        return
    if args.callgrind:
        instructions(args.callgrind, args.creates)
        return
    print('host load:', os.getloadavg())
    rules_per_second(args.evals)
    print('create latency on a local cluster:')
    create_latency(args.creates)
    libraries_fidelity_of_ours()
    if args.libraries:
        script = os.path.join(os.path.dirname(__file__), 'cel_libraries.py')
        subprocess.run([args.libraries, '-I', script], check=True)   # -I: not bench/operator.py as `operator`


if __name__ == '__main__':
    sys.exit(main())
