"""The differential fidelity suite: every step to both backends, the answers compared (see compare.py)."""
import pathlib

import pytest

from . import known, steps
from .conftest import tally
from .harness import Backend, Step, run

DOCS = pathlib.Path(__file__).parents[3] / 'docs' / 'local-cluster.md'
CATEGORIES: dict[str, list[Step]] = {
    'discovery': steps.DISCOVERY, 'crud': steps.CRUD, 'patch': steps.PATCHES, 'subresources': steps.SUB,
    'crd-schema': steps.SCHEMA, 'deletion': steps.DELETION, 'watch': steps.WATCH,
    'selectors': steps.SELECTORS, 'tables': steps.TABLES, 'dry-run': steps.DRYRUN, 'bad-input': steps.BAD_INPUT,
}


@pytest.mark.parametrize('category', list(CATEGORIES))
def test_category(category: str, pair: tuple[Backend, Backend]) -> None:
    counted = tally(category)
    run(CATEGORIES[category], *pair, counted)
    assert not counted.failures, '\n'.join(counted.failures)


def test_admission_webhooks(admitting: tuple[Backend, Backend]) -> None:
    counted = tally('admission')
    run(steps.ADMISSION, *admitting, counted)
    assert not counted.failures, '\n'.join(counted.failures)


def test_watch_from_a_compacted_history(expiring: tuple[Backend, Backend]) -> None:
    counted = tally('watch')
    run(steps.EXPIRED, *expiring, counted)
    assert not counted.failures, '\n'.join(counted.failures)


def test_categories_are_big_enough() -> None:
    sizes = {k: len(s) for k, s in CATEGORIES.items()} | {'watch': len(steps.WATCH) + len(steps.EXPIRED),
                                                          'admission': len(steps.ADMISSION)}
    assert all(size >= 25 for size in sizes.values()), sizes
    assert sum(sizes.values()) >= 400, sizes


def test_every_cited_difference_is_listed() -> None:
    everything = [*CATEGORIES.values(), steps.EXPIRED, steps.ADMISSION]
    cited = {k for s in everything for step in s for k in step.known}
    assert cited <= set(known.KNOWN), cited - set(known.KNOWN)
    assert set(known.KNOWN) <= cited, set(known.KNOWN) - cited


def test_docs_table_is_generated_from_the_allow_list() -> None:
    text = DOCS.read_text()
    start, end = text.find(known.BEGIN), text.find(known.END)
    assert 0 <= start < end, f'{DOCS}: no {known.BEGIN} ... {known.END} section'
    assert text[start:end + len(known.END)] == known.render(), (
        f'{DOCS}: the known-differences table drifted: run `python -m tests.fidelity.differential.known`')
