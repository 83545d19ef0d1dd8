"""Shard selectors as kube-apiserver 1.37 parses them: every case of the oracle's data, then matching objects.

tests/cluster/data/shard_selectors.json holds k8s.io/apiserver v0.37.2's answers (the normal form or the
error text) for written and fuzzed selectors, and k8s.io/apimachinery's hash of each input string
(tools/generate_shard_vectors.py runs the Go code). The hashes of real objects' uids, as a real server
sorts them into ranges, are checked on envtest 1.37.2 (tests/fidelity/test_sharding.py).
"""
import json
import pathlib

import pytest

from kopf._cluster.store import shardselectors
from kopf._cluster.store.shardselectors import ShardSelectorError

DATA = json.loads((pathlib.Path(__file__).parent / 'data' / 'shard_selectors.json').read_text())
CASES = DATA['cases']
HALF = "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')"


def test_the_data_has_every_kind_of_answer() -> None:
    assert len(CASES) > 700
    assert sum('normalized' in c for c in CASES) >= 20
    assert sum(c.get('error', '').startswith('CEL parse error: Syntax error: ') for c in CASES) > 300
    assert sum('error' in c and not c['error'].startswith('CEL') for c in CASES) > 50


def answer(text: str) -> dict[str, str]:
    try:
        return {'normalized': str(shardselectors.parse(text))}
    except ShardSelectorError as exc:
        return {'error': str(exc)}


def test_parsed_as_the_real_parser_does() -> None:
    differing = [(c['input'], c.get('error') or c['normalized'], answer(c['input'])) for c in CASES
                 if answer(c['input']) != {k: v for k, v in c.items() if k in ('error', 'normalized')}]
    assert differing == []


def test_hashed_as_the_real_hash_does() -> None:
    assert [c['input'] for c in CASES if shardselectors.hash_field(c['input']) != c['hash']] == []


@pytest.mark.parametrize('uid, inside', [
    ('', False),                                        # 0xcbf29ce484222325: the upper half
    ('a0ace722', None),
])
def test_matching_by_the_uid_hash(uid: str, inside: bool | None) -> None:
    value = int(shardselectors.hash_field(uid), 16)
    expected = value < 1 << 63 if inside is None else inside
    assert shardselectors.parse(HALF).matches({'metadata': {'uid': uid}}) is expected


def test_ranges_are_start_inclusive_end_exclusive() -> None:
    value = int(shardselectors.hash_field('some-uid'), 16)
    exact = f"shardRange(object.metadata.uid, '0x{value:016x}', '0x{value + 1:016x}')"
    below = f"shardRange(object.metadata.uid, '0x0000000000000000', '0x{value:016x}')"
    assert shardselectors.parse(exact).matches({'metadata': {'uid': 'some-uid'}})
    assert not shardselectors.parse(below).matches({'metadata': {'uid': 'some-uid'}})


def test_the_full_range_ends_at_two_to_the_64th() -> None:
    everything = "shardRange(object.metadata.uid, '0x0000000000000000', '0x10000000000000000')"
    assert all(shardselectors.parse(everything).matches({'metadata': {'uid': f'u{i}'}}) for i in range(50))


def test_any_of_the_ranges_matches() -> None:
    upper = "shardRange(object.metadata.uid, '0x8000000000000000', '0x10000000000000000')"
    both = shardselectors.parse(f'{HALF} || {upper}')
    assert all(both.matches({'metadata': {'uid': f'u{i}'}}) for i in range(50))


def test_namespaces_hash_their_name_and_cluster_scoped_objects_the_empty_string() -> None:
    def sel(value: str) -> str:
        h = int(value, 16)
        return f"shardRange(object.metadata.namespace, '0x{h:016x}', '0x{h + 1:016x}')"
    prod = shardselectors.parse(sel(shardselectors.hash_field('prod')))
    assert prod.matches({'metadata': {'namespace': 'prod', 'uid': 'x'}})
    assert not prod.matches({'metadata': {'namespace': 'dev', 'uid': 'x'}})
    empty = shardselectors.parse(sel(shardselectors.hash_field('')))
    assert empty.matches({'metadata': {'name': 'cluster-wide'}})


@pytest.mark.parametrize('text, quoted', [
    ('uid', '"uid"'), ('a"b', '"a\\"b"'), ('\n', '"\\n"'), ('\x00', '"\\x00"'), ('Σ', '"Σ"'), ('\x7f', '"\\x7f"'),
    ('\u200b', '"\\u200b"'), ('\\', '"\\\\"'),
])
def test_go_quoting(text: str, quoted: str) -> None:
    assert shardselectors.go_quote(text) == quoted


def test_go_trims_its_own_spaces_only() -> None:
    with pytest.raises(ShardSelectorError, match='empty shard selector'):
        shardselectors.parse(' \t\n\u3000')
    with pytest.raises(ShardSelectorError, match='token recognition error'):
        shardselectors.parse('\x1c')   # Python would strip it; Go does not
