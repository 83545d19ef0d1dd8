"""The cost of serving every built-in API: package data loads, OpenAPI documents, discovery, one create per kind.

    .venv/bin/python bench/builtins.py

Prints (never asserts): the time to read the generated resource table and the OpenAPI data (once per
process, lazily), the first and next `/openapi/v3` index (its hashes are computed once), the largest
documents over HTTP, and creates of one sample of every kind (tests/fidelity/data/builtins.yaml)
through a `LocalCluster`, with the package data's sizes.
"""
import http.client
import importlib.resources
import json
import pathlib
import statistics
import time
import urllib.parse

import yaml

ROOT = pathlib.Path(__file__).parent.parent


def _ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000


def main() -> None:
    importlib.import_module('kopf._shared.data')   # the packages' own imports are not the table's cost
    started = time.perf_counter()
    raw = importlib.resources.files('kopf._shared.data').joinpath('builtin_resources.json').read_bytes()
    json.loads(raw)
    print(f'resource table: {len(raw):,} bytes, read and parsed in {_ms(started):.1f} ms')
    from kopf._cluster.openapi import documents
    from kopf._shared import resourcetable
    started = time.perf_counter()
    count = len(documents._data()['v3'])
    print(f'OpenAPI data: {count} v3 documents, decompressed and parsed in {_ms(started):.0f} ms')
    started = time.perf_counter()
    documents.v3_index([])
    print(f'first /openapi/v3 index (hashing every document): {_ms(started):.0f} ms')
    started = time.perf_counter()
    documents.v3_index([])
    print(f'next /openapi/v3 index: {_ms(started):.2f} ms')
    from kopf.testing import LocalCluster
    samples = [doc for doc in yaml.safe_load_all((ROOT / 'tests/fidelity/data/builtins.yaml').read_text()) if doc]
    with LocalCluster() as cluster:
        url = urllib.parse.urlparse(cluster.url)

        def call(method: str, path: str, body: object = None) -> tuple[float, int, int]:
            conn = http.client.HTTPConnection(url.hostname, url.port)
            began = time.perf_counter()
            conn.request(method, path, body=json.dumps(body) if body is not None else None)
            response = conn.getresponse()
            data = response.read()
            conn.close()
            return _ms(began), response.status, len(data)

        for path in ('/openapi/v3/api/v1', '/openapi/v3/api/v1', '/openapi/v3/apis/apps/v1', '/api/v1', '/apis'):
            ms, status, size = call('GET', path)
            print(f'GET {path}: {status}, {size:,} bytes, {ms:.1f} ms')
        timings = []
        for sample in samples:
            group, _, version = sample['apiVersion'].rpartition('/')
            resource = next(r for r in resourcetable.BUILTINS if (r.group, r.version, r.kind) ==
                            (group, version, sample['kind']))
            prefix = f'/apis/{group}/{version}' if group else f'/api/{version}'
            scope = '/namespaces/default' if resource.namespaced else ''
            path = f'{prefix}{scope}/{resource.plural}'
            ms, status, _ = call('POST', path, sample)
            assert status == 201, (sample['kind'], status)
            timings.append(ms)
        print(f'create one sample of each of {len(samples)} kinds: median {statistics.median(timings):.2f} ms, '
              f'max {max(timings):.2f} ms')


if __name__ == '__main__':
    main()
