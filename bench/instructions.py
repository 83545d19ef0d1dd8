"""Instructions per lifecycle of the operator's main thread, counted by valgrind's callgrind.

    valgrind --tool=callgrind --separate-threads=yes --instr-atstart=no \\
        --callgrind-out-file=/tmp/cg.%p .venv/bin/python bench/instructions.py [--objects 100]
    PYTHONPATH=/path/to/another/checkout valgrind ... bench/instructions.py   # that tree's kopf

The scenario of `calls_per_cycle.py` (N objects created, updated, deleted; the local cluster in a
thread of its own), without cProfile: instrumentation is switched on (`callgrind_control -i on`) once
the operator is ready and off after the last deletion. Callgrind writes one file per thread; the main
thread's (`-01` suffix) `totals:` line is the operator's instructions, which this file prints divided
by N when given `--report FILE`. Instructions, not seconds: repeatable within ~1% whatever else the host
is doing, which a wall-clock CPU figure on this host is not (±12% run to run). Printed, never asserted.
"""
import argparse
import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))

import calls_per_cycle  # noqa: E402


class Toggle:
    """What `calls_per_cycle.scenario` expects of a profiler: callgrind's instrumentation on and off."""

    def _switch(self, state: str) -> None:
        done = subprocess.run(['callgrind_control', '-i', state, str(os.getpid())], capture_output=True, text=True)
        # Not under callgrind, it says 'Error: ... not detected' and still exits with 0: no figure, not a wrong one.
        if done.returncode != 0 or 'Error' in done.stdout + done.stderr:
            raise SystemExit(f'callgrind_control -i {state} failed (is this run under valgrind --tool=callgrind?): '
                             f'{(done.stderr or done.stdout).strip()}')

    def enable(self) -> None:
        self._switch('on')

    def disable(self) -> None:
        self._switch('off')


def report(path: str, objects: int) -> None:
    # With `--instr-atstart=no` the `summary:` line says 0; `totals:` holds the count.
    counts = [int(line.split()[1]) for line in pathlib.Path(path).read_text().splitlines()
              if line.startswith(('summary:', 'totals:'))]
    if not counts:
        raise SystemExit(f'{path}: no summary or totals line')
    print(f'{path}: {max(counts):,} instructions = {max(counts) / objects:,.0f} per lifecycle')


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--objects', type=int, default=100)
    parser.add_argument('--report', metavar='FILE', help='print the per-lifecycle figure of a callgrind file')
    parser.add_argument('--logs', action='store_true', help="log INFO lines as `kopf run` does (to /dev/null)")
    parser.add_argument('--burst', action='store_true', help="each step's requests from one thread at once")
    parser.add_argument('--wide', action='store_true', help='realistic specs (bench/typed_parsing.py: 20 fields)')
    parser.add_argument('--typed', action='store_true', help="the handlers' spec parsed into that model (--wide)")
    args = parser.parse_args()
    if args.report:
        report(args.report, args.objects)
        return
    calls_per_cycle.run(args.objects, Toggle(), logs=args.logs, burst=args.burst, wide=args.wide, typed=args.typed)
    print(f'kopf: {calls_per_cycle.kopf.__file__}')


if __name__ == '__main__':
    sys.exit(main())
