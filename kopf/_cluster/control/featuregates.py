"""Feature gates of the local cluster (`kopf cluster --feature-gates ShardedListAndWatch=false`): parsed and decided.

Only the gates whose behaviour the local cluster has are known; others are refused as kube-apiserver
refuses an unknown gate. `ShardedListAndWatch` (Kubernetes 1.36+, alpha, off by default in a real
server) is on by default here (the local cluster poses as 1.34 in its schemas and `/version`, and serves
it all the same); with it off, or with `--git-version` before 1.36 (which has no such gate),
`shardSelector=` is ignored as such a server ignores it: unfiltered, no `shardInfo`.
"""
from collections.abc import Mapping

KNOWN = {'ShardedListAndWatch': (1, 36)}   # gate -> the first version that has it
DEFAULTS = {'ShardedListAndWatch': True}
TRUE = ('1', 't', 'T', 'true', 'TRUE', 'True')
FALSE = ('0', 'f', 'F', 'false', 'FALSE', 'False')


class GateError(ValueError):
    """A bad `--feature-gates` value, worded as kube-apiserver words it."""


def parse(text: str) -> dict[str, bool]:
    """`A=true,B=false` (Go's strconv.ParseBool values), as kube-apiserver's flag takes it."""
    gates: dict[str, bool] = {}
    for pair in (p.strip() for p in text.split(',')):
        if not pair:
            continue
        name, eq, value = pair.partition('=')
        if not eq:
            raise GateError(f'malformed pair, expect string=bool: {pair!r}')
        if value.strip() not in TRUE + FALSE:
            raise GateError(f'invalid value of {name.strip()}={value.strip()}, err: strconv.ParseBool: '
                            f'parsing "{value.strip()}": invalid syntax')
        gates[name.strip()] = value.strip() in TRUE
    return gates


def version_of(git_version: str) -> tuple[int, int]:
    """(major, minor) of a gitVersion such as `v1.34.4` or `v1.31.0+k3s1`; unparseable parts count as 0."""
    numbers = git_version.lstrip('v').split('+')[0].split('-')[0].split('.')
    digits = [int(n) if n.isdigit() else 0 for n in (numbers + ['0', '0'])[:2]]
    return digits[0], digits[1]


def resolve(gates: Mapping[str, bool], git_version: str | None = None) -> dict[str, bool]:
    """Every known gate's state; unknown gates refused, also those newer than the version posed as (if any)."""
    version = version_of(git_version) if git_version else (99, 0)   # not posing: every gate the cluster has
    for name in gates:
        if name not in KNOWN or version < KNOWN[name]:
            raise GateError(f'unrecognized feature gate: {name}')
    return {name: version >= since and gates.get(name, DEFAULTS[name]) for name, since in KNOWN.items()}
