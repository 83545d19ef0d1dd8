"""The sharding category: `shardSelector=` against kube-apiserver 1.37.2 with ShardedListAndWatch (a table of steps).

Namespace names are the same on both sides, so ranges of `object.metadata.namespace` select the same
objects; uids differ, so ranges of `object.metadata.uid` are built per side from the saved uid's hash
(`{x_hash}`: 16 hex digits, `{x_next}`: the hash plus one): a range one hash wide must return exactly
that object from the real server too, which checks the hash as well.
"""
import urllib.parse

from kopf._cluster.store.shardselectors import hash_field

from .harness import TABLE, Step
from .steps import core, diff, diffs

UID = 'object.metadata.uid'
NS = 'object.metadata.namespace'
NAMESPACES = [f'd-shard-{letter}' for letter in 'abcdef']
#: The namespaces in hash order; the lower three and the upper three, split at the fourth one's hash.
ORDER = sorted(NAMESPACES, key=hash_field)
SPLIT = hash_field(ORDER[3])
LOWER = f"shardRange({NS}, '0x0000000000000000', '0x{SPLIT}')"
UPPER = f"shardRange({NS}, '0x{SPLIT}', '0x10000000000000000')"
ALL = f"shardRange({UID}, '0x0000000000000000', '0x10000000000000000')"
ONE = f"shardRange({UID}, '0x{{x_hash}}', '0x{{x_next}}')"
OTHERS = f"shardRange({UID}, '0x0000000000000000', '0x{{x_hash}}') || shardRange({UID}, '0x{{x_next}}', " \
         "'0x10000000000000000')"
# Not the label of tests/fidelity/test_sharding.py's objects, which may be left on the same server.
MINE = 'sharded%3Ddifferential'
BAD = [
    '', ' ', 'x', f"shardRange({NS}, '0x0', '0x1')", f"shardRange({UID}, '0x8000000000000000', '0x0000000000000000')",
    "shardRange(object.metadata.name, '0x0000000000000000', '0x8000000000000000')",
    f"shardRange({UID}, '0x0000000000000000', '0x8000000000000000'", f"{LOWER} && {UPPER}", f'{LOWER} | {UPPER}',
    f"{LOWER} || shardRange({UID}, '0x0000000000000000', '0x1000000000000000')",
    f"shardRange({UID}, '0x000000000000000A', '0x8000000000000000')",
]


def q(selector: str) -> str:
    """A selector for a query string (the `{saved}` placeholders are kept for the harness to fill)."""
    return urllib.parse.quote(selector, safe='{}')


def all_cms(query: str) -> str:
    return f'/api/v1/configmaps?labelSelector={MINE}&{query}'


def labelled(name: str) -> dict[str, object]:
    return {'apiVersion': 'v1', 'kind': 'ConfigMap', 'metadata': {'name': name, 'labels': {'sharded': 'differential'}},
            'data': {'a': '1'}}


SHARDING = [
    *[Step('POST', '/api/v1/namespaces', {'apiVersion': 'v1', 'kind': 'Namespace', 'metadata': {'name': name}})
      for name in NAMESPACES],
    *[Step('POST', f'/api/v1/namespaces/{name}/configmaps', labelled(f'cm-{i}'))
      for name in NAMESPACES for i in range(2)],
    Step('GET', '/api/v1/namespaces/d-shard-a/configmaps/cm-0', save='x'),
    # lists: by namespace (the same on both sides), paged; by uid (per side); normal forms in shardInfo
    Step('GET', all_cms(f'shardSelector={q(LOWER)}')),
    Step('GET', all_cms(f'shardSelector={q(UPPER)}')),
    Step('GET', all_cms(f'shardSelector={q(LOWER + " || " + UPPER)}')),
    Step('GET', all_cms(f'limit=2&shardSelector={q(LOWER)}'), save='p1'),
    Step('GET', all_cms(f'limit=2&shardSelector={q(LOWER)}&continue={{p1_continue}}'), save='p2'),
    Step('GET', all_cms(f'limit=2&shardSelector={q(LOWER)}&continue={{p2_continue}}')),
    Step('GET', all_cms(f'limit=4&shardSelector={q(UPPER)}'), save='p3'),
    Step('GET', all_cms(f'limit=4&shardSelector={q(UPPER)}&continue={{p3_continue}}')),
    Step('GET', core('shard-a', 'configmaps', query=f'shardSelector={q(ONE)}')),
    Step('GET', core('shard-a', 'configmaps', query=f'shardSelector={q(OTHERS)}')),
    Step('GET', core('shard-a', 'configmaps', query=f'shardSelector={q(ALL)}&labelSelector={MINE}')),
    Step('GET', core('shard-a', 'configmaps', query='shardSelector=' + q(
        f'  ( shardRange( {UID} , "0x0000000000000000", r\'0x10000000000000000\' ) )') + f'&labelSelector={MINE}')),
    Step('GET', core('shard-a', 'configmaps', query=f'shardSelector={q(ONE)}&fieldSelector=metadata.name%3Dcm-1')),
    Step('GET', core('shard-a', 'configmaps', query=f'shardSelector={q(ONE)}'), accept=TABLE),
    Step('GET', core('shard-a', 'configmaps', 'cm-0', query='shardSelector=garbage')),
    Step('GET', f'/api/v1/namespaces?shardSelector={q(ALL)}&fieldSelector=metadata.name%3Dd-shard-a'),
    Step('GET', '/api/v1/namespaces?fieldSelector=metadata.name%3Dd-shard-a&shardSelector=' + q(
        f"shardRange({NS}, '0x{hash_field('')}', '0x{int(hash_field(''), 16) + 1:016x}')")),
    # custom resources: filtered too
    Step('POST', diffs('shard-a'), diff('dx'), save='x'),
    Step('POST', diffs('shard-a'), diff('dy')),
    Step('GET', diffs('shard-a', query=f'shardSelector={q(ONE)}')),
    Step('GET', diffs('shard-a', query=f'shardSelector={q(OTHERS)}')),
    # watches: filtered initial events and changes; a bad selector before the stream starts
    Step('GET', all_cms(f'shardSelector={q(UPPER)}'), save='w'),
    *[Step('POST', f'/api/v1/namespaces/{name}/configmaps', labelled('late')) for name in NAMESPACES[:3]],
    Step('GET', all_cms(f'watch=1&timeoutSeconds=2&resourceVersion={{w}}&shardSelector={q(UPPER)}'), events=3),
    Step('GET', all_cms(f'watch=1&timeoutSeconds=2&resourceVersion={{w}}&shardSelector={q(LOWER)}'), events=3),
    Step('GET', diffs('shard-a', query=f'watch=1&timeoutSeconds=2&sendInitialEvents=true&resourceVersionMatch='
                                     f'NotOlderThan&allowWatchBookmarks=true&shardSelector={q(OTHERS)}'), events=2),
    Step('GET', all_cms(f'watch=1&timeoutSeconds=2&shardSelector={q(BAD[2])}')),
    # the errors: worded by the parser; the handler's own checks come first
    *[Step('GET', core('shard-a', 'configmaps', query=f'shardSelector={q(text)}')) for text in BAD],
    Step('GET', core('shard-a', 'configmaps', query='shardSelector=x&labelSelector=%3D%3D%3D')),
    Step('GET', core('shard-a', 'configmaps', query='shardSelector=x&continue=garbage')),
    Step('GET', core('shard-a', 'configmaps', query='shardSelector=x&limit=abc')),
    # a collection deleted by shards, then what is left
    Step('GET', core('shard-b', 'configmaps', 'cm-1'), save='x'),
    Step('DELETE', core('shard-b', 'configmaps', query=f'shardSelector={q(ONE)}&labelSelector={MINE}')),
    Step('GET', core('shard-b', 'configmaps', query=f'labelSelector={MINE}')),
]
