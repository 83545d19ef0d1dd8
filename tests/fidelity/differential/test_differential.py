"""The differential fidelity suite: every step to both backends, the answers compared (see compare.py).

Without `--backend=envtest` it is one skipped test (one line); the allow-list's own checks always run.
"""
import pathlib

import pytest

from . import known, shardsteps, steps, steps_cel, steps_quota, steps_rbac
from .conftest import tally
from .harness import Step, run

DOCS = pathlib.Path(__file__).parents[3] / 'docs' / 'local-cluster.md'
#: (category, steps, the fixture of the two backends): a category may take more than one run.
RUNS: list[tuple[str, list[Step], str]] = [
    ('discovery', steps.DISCOVERY, 'pair'), ('crud', steps.CRUD, 'pair'), ('patch', steps.PATCHES, 'pair'),
    ('apply', steps.APPLIES, 'pair'),
    ('subresources', steps.SUB, 'pair'), ('crd-schema', steps.SCHEMA, 'pair'), ('deletion', steps.DELETION, 'pair'),
    ('watch', steps.WATCH, 'pair'), ('watch', steps.EXPIRED, 'expiring'), ('selectors', steps.SELECTORS, 'pair'),
    ('tables', steps.TABLES, 'pair'), ('dry-run', steps.DRYRUN, 'pair'), ('admission', steps.ADMISSION, 'admitting'),
    ('bad-input', steps.BAD_INPUT, 'pair'), ('cel', steps_cel.CEL, 'ruled'),
    ('cel', steps_cel.POLICY_STEPS, 'policed'), ('sharding', shardsteps.SHARDING, 'sharding_pair'),
    ('rbac', steps_rbac.RBAC_STEPS, 'authorizing'), ('quota', steps_quota.QUOTA_STEPS, 'pair'),
]


@pytest.mark.parametrize('category, sequence, backends', RUNS, ids=[f'{c}-{f}' for c, _, f in RUNS])
def test_category(category: str, sequence: list[Step], backends: str, request: pytest.FixtureRequest) -> None:
    sides = request.getfixturevalue(backends)
    counted = tally(category)
    run(sequence, *sides, counted)
    assert not counted.failures, '\n'.join(counted.failures)
    assert not counted.bytes_failures, '\n'.join(counted.bytes_failures)


def test_categories_are_big_enough() -> None:
    sizes: dict[str, int] = {}
    for category, sequence, _ in RUNS:
        sizes[category] = sizes.get(category, 0) + len(sequence)
    assert all(size >= 25 for size in sizes.values()), sizes
    assert sum(sizes.values()) >= 400, sizes


def test_every_cited_difference_is_listed() -> None:
    cited = {k for _, sequence, _ in RUNS for step in sequence for k in step.known}
    assert cited <= set(known.KNOWN), cited - set(known.KNOWN)
    assert set(known.KNOWN) <= cited, set(known.KNOWN) - cited
    cited_bytes = {k for _, sequence, _ in RUNS for step in sequence for k in step.known_bytes} | {'message'}
    assert cited_bytes == set(known.BYTES_KNOWN), cited_bytes ^ set(known.BYTES_KNOWN)


def test_docs_table_is_generated_from_the_allow_list() -> None:
    text = DOCS.read_text()
    start, end = text.find(known.BEGIN), text.find(known.END)
    assert 0 <= start < end, f'{DOCS}: no {known.BEGIN} ... {known.END} section'
    assert text[start:end + len(known.END)] == known.render(), (
        f'{DOCS}: the known-differences table drifted: run `python -m tests.fidelity.differential.known`')
