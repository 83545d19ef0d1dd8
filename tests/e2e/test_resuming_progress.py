"""The initial listing of many objects and their resumption are reported: progress lines at most every few
seconds while it lasts (count, rate, estimate), and once when all are resumed."""
import asyncio
import logging
import re
from typing import Any

import pytest

import kopf

from ..backends import Cluster
from .conftest import Starter, eventually, example


async def test_resuming_the_listed_objects_ends_with_one_line(cluster: Cluster, registry: kopf.OperatorRegistry,
                                                              start_operator: Starter,
                                                              caplog: pytest.LogCaptureFixture) -> None:
    for idx in range(30):
        cluster.apply(example(f'kex-{idx}'))
    resumed: set[str] = set()

    @kopf.on.create('kopfexamples', registry=registry)
    def create_fn(name: str, **_: Any) -> None:
        resumed.add(name)

    await start_operator()
    await eventually(lambda: len(resumed) == 30)

    def lines() -> list[str]:
        return [r.getMessage() for r in caplog.records if r.getMessage().startswith('Resumed ')]
    await eventually(lines)
    [line] = lines()
    assert line.startswith('Resumed 30 objects (kopfexamples.kopf.dev) in ') and line.endswith(' s.')


PROGRESS = re.compile(r'Resuming kopfexamples\.kopf\.dev: (\d+) of 12 objects \(([\d.]+)/s, ~(\d+) s left\)\.')
FINAL = re.compile(r'Resumed 12 objects \(kopfexamples\.kopf\.dev\) in (\d+\.\d) s\.')


@pytest.mark.looptime
@pytest.mark.emulator_only(reason="looptime's fake clock runs ahead of real TLS handshakes with an external API server")
async def test_a_long_resumption_logs_its_progress_every_few_seconds(
        cluster: Cluster, registry: kopf.OperatorRegistry, start_operator: Starter,
        caplog: pytest.LogCaptureFixture) -> None:
    for idx in range(12):
        cluster.apply(example(f'kex-{idx}'))

    @kopf.on.create('kopfexamples', registry=registry)
    async def create_fn(name: str, **_: Any) -> None:
        await asyncio.sleep(int(name.rpartition('-')[2]))  # one object resumed per (fake) second: ~11 s in all

    await start_operator()
    [final] = await eventually(lambda: [r for r in caplog.records if FINAL.fullmatch(r.getMessage())])
    assert final.levelno == logging.INFO  # long work: worth a line at the default level
    assert float(FINAL.fullmatch(final.getMessage()).group(1)) >= 11  # type: ignore[union-attr]
    progress = [r for r in caplog.records if r.getMessage().startswith('Resuming ')]
    assert 1 <= len(progress) <= 3, [r.getMessage() for r in progress]  # at most one per 5 s of the ~11 s
    counts = []
    for record in progress:
        found = PROGRESS.fullmatch(record.getMessage())
        assert found and record.levelno == logging.INFO, record.getMessage()
        counts.append(int(found.group(1)))
        assert float(found.group(2)) > 0
    assert counts == sorted(counts) and all(0 < count < 12 for count in counts)


@pytest.mark.parametrize('enabled', [True, False])
async def test_the_memory_of_a_large_resumption_is_given_back_once(
        cluster: Cluster, registry: kopf.OperatorRegistry, start_operator: Starter,
        caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch, enabled: bool) -> None:
    from kopf._engine import listings, memory
    releases: list[int] = []
    monkeypatch.setattr(listings, 'LARGE', 10)  # 12 objects are "large" here
    monkeypatch.setattr(memory, 'release', lambda: releases.append(1) or True)
    monkeypatch.setattr(memory, '_started', True)  # the start's own release is done (the test below)
    for idx in range(12):
        cluster.apply(example(f'kex-{idx}'))

    @kopf.on.startup(registry=registry)
    def configure(settings: kopf.OperatorSettings, **_: Any) -> None:
        settings.process.release_memory = enabled

    @kopf.on.create('kopfexamples', registry=registry)
    def create_fn(**_: Any) -> None:
        pass

    from kopf._engine import queueing
    monkeypatch.setattr(queueing, 'RELEASE_DELAY', 0.0)
    await start_operator()
    await eventually(lambda: [r for r in caplog.records if r.getMessage().startswith('Resumed 12 objects')])
    if enabled:
        await eventually(lambda: releases)  # due at once with no delay
    else:
        for _ in range(3):
            await asyncio.sleep(0)  # it would be due at once: decided when the line is logged
    assert releases == ([1] if enabled else [])


@pytest.mark.parametrize('enabled', [True, False])
async def test_the_starts_free_heap_is_given_back_once_after_the_first_listing(
        cluster: Cluster, registry: kopf.OperatorRegistry, start_operator: Starter,
        caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch, enabled: bool) -> None:
    from kopf._engine import memory, queueing
    releases: list[int] = []
    monkeypatch.setattr(memory, 'release', lambda: releases.append(1) or True)
    monkeypatch.setattr(memory, '_started', False)  # a fresh process
    monkeypatch.setattr(queueing, 'RELEASE_DELAY', 0.0)
    cluster.apply(example('kex-1'))

    @kopf.on.startup(registry=registry)
    def configure(settings: kopf.OperatorSettings, **_: Any) -> None:
        settings.process.release_memory = enabled

    @kopf.on.create('kopfexamples', registry=registry)
    def create_fn(**_: Any) -> None:
        pass

    await start_operator()
    await eventually(lambda: len([r for r in caplog.records if r.getMessage().startswith('Resumed ')]) >= 1)
    if enabled:
        await eventually(lambda: releases)
    for _ in range(3):
        await asyncio.sleep(0)
    assert releases == ([1] if enabled else [])
    assert not [r for r in caplog.records if r.getMessage().startswith('Gave the heap')]  # small: not logged


@pytest.mark.parametrize('threshold', [10_000, None])
async def test_gcs_threshold_is_raised_while_listing_and_restored_after(
        cluster: Cluster, registry: kopf.OperatorRegistry, start_operator: Starter,
        monkeypatch: pytest.MonkeyPatch, threshold: int | None) -> None:
    import gc

    from kopf._engine import memory
    started: list[int | None] = []
    handled: list[int] = []  # gc's first threshold in every create handler: all of them run while listing
    before = gc.get_threshold()
    original = memory.listing_started
    monkeypatch.setattr(memory, 'listing_started', lambda value: started.append(value) or original(value))
    for idx in range(5):
        cluster.apply(example(f'kex-{idx}'))

    @kopf.on.startup(registry=registry)
    def configure(settings: kopf.OperatorSettings, **_: Any) -> None:
        settings.process.listing_gc_threshold = threshold

    @kopf.on.create('kopfexamples', registry=registry)
    def create_fn(**_: Any) -> None:
        handled.append(gc.get_threshold()[0])

    await start_operator()
    await eventually(lambda: len(handled) == 5)
    await eventually(lambda: gc.get_threshold() == before)  # once the listing is processed
    assert started == [threshold]  # one stream, one listing
    assert handled == [threshold or before[0]] * 5
