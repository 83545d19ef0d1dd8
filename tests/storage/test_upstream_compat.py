"""Byte-for-byte compatibility of our storages with upstream Kopf 1.45.2.

The fixtures were recorded by `bench/compat/fixtures.py`, which ran the very same scenarios
(`bench/compat/scenarios.py`, public API only) on upstream Kopf 1.45.2 in a throw-away virtualenv.
Here the scenarios run on our `kopf`; every output (patches, annotation keys, exact JSON strings,
fetched records, essences and their key order) must equal upstream's.
A scenario whose public names are not in our `kopf` yet is skipped, never xfailed.
"""
import importlib.util
import json
import pathlib
import sys
from types import ModuleType
from typing import Any

import pytest

import kopf

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCENARIOS_PATH = ROOT / 'bench' / 'compat' / 'scenarios.py'
FIXTURE_PATH = pathlib.Path(__file__).resolve().parent / 'fixtures' / 'upstream-1.45.2.json'


def _load_scenarios() -> ModuleType:
    name = 'compat_scenarios'
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, SCENARIOS_PATH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


scenarios = _load_scenarios()
EXPECTED: dict[str, Any] = json.loads(FIXTURE_PATH.read_text(encoding='utf-8'))['scenarios']


def _differences(expected: Any, actual: Any, path: str = '') -> list[str]:
    """Human-readable differences: `path: upstream X, ours Y` (dict key order is not compared here;
    where order matters, the scenarios capture the exact JSON strings)."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        diffs: list[str] = []
        for key in expected:
            if key not in actual:
                diffs.append(f'{path}/{key}: upstream {expected[key]!r}, ours <missing>')
            else:
                diffs.extend(_differences(expected[key], actual[key], f'{path}/{key}'))
        diffs.extend(f'{path}/{key}: upstream <missing>, ours {actual[key]!r}' for key in actual if key not in expected)
        return diffs
    if isinstance(expected, list) and isinstance(actual, list) and len(expected) == len(actual):
        return [d for i, (e, a) in enumerate(zip(expected, actual, strict=True))
                for d in _differences(e, a, f'{path}[{i}]')]
    if type(expected) is not type(actual) or expected != actual:
        return [f'{path or "/"}: upstream {expected!r}, ours {actual!r}']
    return []


def test_fixtures_cover_all_scenarios() -> None:
    assert sorted(EXPECTED) == sorted(scenarios.SCENARIOS), (
        'The fixtures are stale: regenerate them with `python3 bench/compat/fixtures.py`.'
    )


@pytest.mark.parametrize('name', sorted(EXPECTED))
def test_same_as_upstream(name: str) -> None:
    scenario = scenarios.SCENARIOS.get(name)
    if scenario is None:
        pytest.fail(f'Scenario {name!r} is in the fixtures but not in bench/compat/scenarios.py.')
    for required in scenario.requires:
        if not hasattr(kopf, required):
            pytest.skip(f'kopf.{required} not implemented yet')
    actual = scenarios.run_one(kopf, name)
    diffs = _differences(EXPECTED[name], actual)
    assert not diffs, f'{name}: differs from upstream Kopf 1.45.2:\n' + '\n'.join(diffs)
