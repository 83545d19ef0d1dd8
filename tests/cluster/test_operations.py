"""The table of control operations: one declaration for the Python methods, the HTTP routes and the docs."""
import pathlib

import pytest

from kopf._cluster.control import operations
from kopf._cluster.control.emulator import Emulator
from kopf.testing import LocalCluster

DOCS = pathlib.Path(__file__).parent.parent.parent / 'docs' / 'local-cluster.md'
OPERATIONS = operations.operations()


def test_routes_are_unique() -> None:
    routes = [(method, op.route.path) for op in OPERATIONS if op.route for method in op.route.methods]
    assert len(routes) == len(set(routes))


@pytest.mark.parametrize('operation', OPERATIONS, ids=lambda op: op.name)
def test_each_operation_is_a_documented_method_of_both_faces(operation: operations.Operation[..., object]) -> None:
    for face in (Emulator, LocalCluster):
        assert getattr(face, operation.name) is operation
    assert f'`{operation.name}(' in DOCS.read_text()


@pytest.mark.parametrize('operation', [op for op in OPERATIONS if op.route], ids=lambda op: op.name)
def test_each_route_is_documented(operation: operations.Operation[..., object]) -> None:
    assert operation.route is not None
    assert f'/_emulator{operation.route.path}`' in DOCS.read_text()


def test_a_method_call_runs_the_operation_on_the_emulator() -> None:
    emulator = Emulator()
    rule = emulator.throttle('GET', '/api/*', count=2)
    assert emulator.faults.rules == [rule] and rule.status == 429 and rule.text and rule.count == 2
    emulator.clear_faults()
    assert emulator.faults.rules == []


def test_the_help_lists_every_route() -> None:
    rows = dict(operations.routes_help())
    assert 'POST /_emulator/faults' in rows and 'PUT|POST /_emulator/bookmark-interval' in rows
    assert len(rows) == len([op for op in OPERATIONS if op.route])
