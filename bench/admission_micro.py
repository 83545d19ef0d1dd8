"""The operator's own work per admission review, in-process (no TLS, no sockets): µs per review by handler kind.

    .venv/bin/python bench/admission_micro.py [--reviews N] [--rounds R]

`kopf._admission.servers`' request callback (`_serve_review`: JSON in, the framework's review, JSON out) with
the `Admission` of an operator context that has bench/admission.py's two trivial validating handlers, the
log configured as `kopf run` does (INFO, the full format, to a file): the same path as a review that the
webhook server has parsed, minus the server's HTTP/TLS (its log lines included). The sync handler's figure
includes its hop to the executor and back. Printed: per round, µs per review (median of the rounds last), and
the Python calls per review in the loop's thread (cProfile over one more round: a count, steady where the µs
are not); never asserted.
"""
import argparse
import asyncio
import cProfile
import logging
import pathlib
import pstats
import statistics
import sys
import tempfile
import time
from typing import Any

import admission as bench_admission

import kopf
from kopf._admission import answering as admission
from kopf._admission import httpserving, servers
from kopf._core import progress, registries, resources, settings
from kopf._engine import contexts, loggers

RESOURCE = resources.Resource('kopf.dev', 'v1', 'kopfbenches', kind='KopfBench')


def operator_admission() -> admission.Admission:
    registry = registries.OperatorRegistry()

    @kopf.on.validate('kopf.dev', 'v1', 'kopfbenches', registry=registry, id='check')
    def check(spec: Any, **_: Any) -> None:
        if spec.get('field') == 'wrong':
            raise kopf.AdmissionError('spec.field must not be "wrong".', code=422)

    @kopf.on.validate('kopf.dev', 'v1', 'kopfbenches', registry=registry, id='check_async')
    async def check_async(spec: Any, **_: Any) -> None:
        if spec.get('field') == 'wrong':
            raise kopf.AdmissionError('spec.field must not be "wrong".', code=422)

    ctx = contexts.OperatorContext(settings=settings.OperatorSettings(), registry=registry, client=None,  # type: ignore[arg-type]
                                   memo=kopf.Memo(), lifecycle=progress.all_at_once)
    served = admission.Admission(ctx)
    served.resources = {RESOURCE: None}
    return served


def requests_for(webhook: str, reviews: int) -> list[httpserving.Request]:
    """CREATE reviews as the webhook server hands them over, parsed (bench/admission.py's, each with its uid)."""
    requests = []
    for i in range(reviews):
        raw = bench_admission.review(f'micro-{webhook}-{i}', webhook=webhook)
        _, body = raw.split(b'\r\n\r\n', 1)
        requests.append(httpserving.Request('POST', f'/{webhook}', {'Content-Type': 'application/json'}, body, {}))
    return requests


async def one_round(served: admission.Admission, requests: list[httpserving.Request]) -> float:
    """µs per review, one after another."""
    t0 = time.perf_counter()
    for request in requests:
        answer = await servers._serve_review(served.review, '', request)
        assert answer[0] == 200
        if len(answer) > 2:
            answer[2]()  # the outcome lines, which the server logs once the answer is written: CPU all the same
    return (time.perf_counter() - t0) / len(requests) * 1e6


async def main(args: argparse.Namespace) -> None:
    served = operator_admission()
    for webhook in ('check', 'check_async'):
        figures = [await one_round(served, requests_for(webhook, args.reviews)) for _ in range(args.rounds)]
        requests = requests_for(webhook, args.reviews)
        profile = cProfile.Profile()
        profile.enable()
        await one_round(served, requests)
        profile.disable()
        calls = pstats.Stats(profile).total_calls / args.reviews  # type: ignore[attr-defined]
        print(f'{webhook:12} µs per review: ' + ' '.join(f'{x:.1f}' for x in figures)
              + f'; median {statistics.median(figures):.1f}; {calls:.1f} calls per review')


if __name__ == '__main__':
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--reviews', type=int, default=3000)
    parser.add_argument('--rounds', type=int, default=5)
    parser.add_argument('--no-uvloop', action='store_true')
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, open(pathlib.Path(tmp) / 'log', 'w') as out:
        sys.stderr, stderr = out, sys.stderr
        loggers.configure()
        sys.stderr = stderr
        if options.no_uvloop:
            asyncio.run(main(options))
        else:
            import uvloop
            uvloop.run(main(options))
        logging.getLogger().handlers.clear()
