"""The cost of a typed handler's parsing: a realistic spec (20 fields, 2 levels of nesting) through pydantic.

    .venv/bin/python bench/typed_parsing.py [--count 20000]                    # µs per parse (wall clock)
    valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file=/tmp/tp.%p \\
        .venv/bin/python bench/typed_parsing.py --callgrind --count 2000         # instructions per parse
    .venv/bin/python bench/typed_parsing.py --report /tmp/tp.<pid> --count 2000

A typed handler's `spec: WideSpec` is parsed once per invocation, by the model's cached `TypeAdapter`
(`validate_python` of the body's dict, as the handlers receive it). Compare the instructions per parse with
`bench/instructions.py --burst`'s instructions per lifecycle (create, update, delete: each typed handler
parses once per invocation, so 3 parses per lifecycle for a create+update+delete operator).
Printed, never asserted.
"""
import argparse
import datetime
import enum
import os
import pathlib
import subprocess
import sys
import time
from typing import Annotated, Literal

from pydantic import BaseModel, Field, TypeAdapter

import kopf


class Colour(enum.Enum):
    RED = 'red'
    GREEN = 'green'


class Leaf(BaseModel):
    value: int = 0


class Port(BaseModel):
    name: Annotated[str, Field(max_length=15)]
    protocol: Literal['TCP', 'UDP'] = 'TCP'
    number: int = 80


class Scaling(BaseModel):
    minimum: Annotated[int, Field(ge=0, le=100)] = 0
    maximum: Annotated[int, Field(ge=0, le=100)] = 10


class WideSpec(BaseModel):
    """20 fields, 2 levels (a list of models, nested models), as tests/typed/corpus.py's C41Wide."""
    image: Annotated[str, Field(max_length=200)] = 'nginx:1.27'
    replicas: Annotated[int, Field(ge=0, le=100)] = 1
    port: int | str = 8080
    env: dict[str, str] = {}
    args: list[str] = []
    cpu: Annotated[str, Field(pattern=r'^\d+m?$')] = '100m'
    memory: Annotated[str, Field(pattern=r'^\d+(Mi|Gi)$')] = '128Mi'
    tier: Literal['web', 'worker', 'batch'] = 'web'
    paused: bool = False
    schedule: str | None = None
    ports: Annotated[list[Port], kopf.ListMap('name'), Field(max_length=10)] = []
    scaling: Scaling = Scaling()
    labels: dict[str, str] = {}
    annotations: dict[str, str] = {}
    timeout: Annotated[float, Field(gt=0)] = 30.0
    retries: Annotated[int, Field(ge=0, le=10)] = 3
    owner: str = 'team'
    colour: Colour = Colour.RED
    leaf: Leaf = Leaf()
    created: datetime.datetime | None = None


SPEC = {
    'image': 'registry.example.com/team/app:1.2.3', 'replicas': 3, 'port': 'http', 'env': {'A': '1', 'B': '2'},
    'args': ['--serve', '--verbose'], 'cpu': '250m', 'memory': '512Mi', 'tier': 'worker', 'paused': False,
    'schedule': '*/5 * * * *', 'ports': [{'name': 'http', 'number': 8080}, {'name': 'metrics', 'number': 9090}],
    'scaling': {'minimum': 1, 'maximum': 5}, 'labels': {'app': 'x', 'tier': 'worker'}, 'annotations': {'a': 'b'},
    'timeout': 12.5, 'retries': 2, 'owner': 'platform', 'colour': 'green', 'leaf': {'value': 7},
    'created': '2026-12-07T01:02:03Z',
}


def parse_all(count: int) -> None:
    adapter = TypeAdapter(WideSpec)
    for _ in range(count):
        adapter.validate_python(SPEC)


def callgrind(state: str) -> None:
    done = subprocess.run(['callgrind_control', '-i', state, str(os.getpid())], capture_output=True, text=True)
    if done.returncode != 0 or 'Error' in done.stdout + done.stderr:
        raise SystemExit(f'callgrind_control -i {state} failed: is this run under valgrind --tool=callgrind?')


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--count', type=int, default=20000)
    parser.add_argument('--callgrind', action='store_true', help='count the parses only (instrumentation on/off)')
    parser.add_argument('--report', metavar='FILE', help='print the per-parse figure of a callgrind file')
    args = parser.parse_args()
    if args.report:
        counts = [int(line.split()[1]) for line in pathlib.Path(args.report).read_text().splitlines()
                  if line.startswith(('summary:', 'totals:'))]
        print(f'{args.report}: {max(counts):,} instructions = {max(counts) / args.count:,.0f} per parse')
        return
    parse_all(10)   # the adapter built, the validator warm
    if args.callgrind:
        callgrind('on')
        parse_all(args.count)
        callgrind('off')
        return
    started = time.process_time()
    parse_all(args.count)
    spent = time.process_time() - started
    print(f'{args.count} parses: {spent / args.count * 1e6:.1f} µs of CPU per parse (load: {os.getloadavg()[0]:.1f})',
          file=sys.stderr)


if __name__ == '__main__':
    main()
