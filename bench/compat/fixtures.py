"""Record upstream Kopf 1.45.2's storage outputs as fixtures: `tests/storage/fixtures/upstream-1.45.2.json`.

Usage (from the repo root, with any Python 3.11+; needs PyPI access unless --python is given):

    python3 bench/compat/fixtures.py                      # fresh throw-away venv in a temp dir
    python3 bench/compat/fixtures.py --venv /tmp/upstream-venv   # create/reuse that venv
    python3 bench/compat/fixtures.py --python /tmp/upstream-venv/bin/python  # an existing interpreter
    python3 bench/compat/fixtures.py --check              # compare only; exit 1 if the file would change

Upstream is only installed and called through its public API (the scenarios in `scenarios.py`);
its code is never read.  It is never installed into the project's own `.venv`.
"""
import argparse
import json
import pathlib
import subprocess
import sys
import tempfile
from typing import Any

UPSTREAM_VERSION = '1.45.2'
HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent
SCENARIOS_PATH = HERE / 'scenarios.py'
DEFAULT_OUTPUT = ROOT / 'tests' / 'storage' / 'fixtures' / f'upstream-{UPSTREAM_VERSION}.json'

# Runs inside the upstream interpreter (isolated mode: neither the cwd nor PYTHONPATH is on sys.path,
# so the repo's own `kopf` package cannot be imported by accident).
RUNNER = r'''
import importlib.util, json, sys
spec = importlib.util.spec_from_file_location('compat_scenarios', sys.argv[1])
scenarios = importlib.util.module_from_spec(spec)
sys.modules['compat_scenarios'] = scenarios
spec.loader.exec_module(scenarios)
import kopf
out = {'version': kopf.__version__, 'file': kopf.__file__, 'scenarios': {}}
for i, name in enumerate(scenarios.SCENARIOS, 1):
    out['scenarios'][name] = scenarios.run_one(kopf, name)
    if i % 100 == 0:
        print(f'  ... {i}/{len(scenarios.SCENARIOS)} scenarios', file=sys.stderr, flush=True)
json.dump(out, sys.stdout)
'''


def log(msg: str) -> None:
    print(f'[compat] {msg}', file=sys.stderr, flush=True)


def ensure_venv(venv: pathlib.Path) -> pathlib.Path:
    if (ROOT / '.venv').resolve() == venv.resolve():
        raise SystemExit("Refusing to install upstream kopf into the project's own .venv.")
    python = venv / 'bin' / 'python'
    if not python.exists():
        log(f'creating a throw-away virtualenv at {venv}')
        subprocess.run([sys.executable, '-m', 'venv', str(venv)], check=True)
    log(f'installing kopf=={UPSTREAM_VERSION} into {venv}')
    subprocess.run([str(python), '-m', 'pip', 'install', '--quiet', '--disable-pip-version-check',
                    f'kopf=={UPSTREAM_VERSION}'], check=True)
    return python


def run_upstream(python: pathlib.Path) -> dict[str, Any]:
    log(f'running the scenarios with {python}')
    with tempfile.TemporaryDirectory(prefix='kopf-compat-cwd-') as cwd:
        proc = subprocess.run([str(python), '-I', '-c', RUNNER, str(SCENARIOS_PATH)],
                              cwd=cwd, check=True, stdout=subprocess.PIPE, text=True)
    result: dict[str, Any] = json.loads(proc.stdout)
    if result['version'] != UPSTREAM_VERSION:
        raise SystemExit(f"Expected upstream kopf {UPSTREAM_VERSION}, got {result['version']} at {result['file']}")
    if pathlib.Path(result['file']).resolve().is_relative_to(ROOT):
        raise SystemExit(f"The interpreter imported the repo's own kopf ({result['file']}), not upstream's.")
    log(f"upstream kopf {result['version']}: {len(result['scenarios'])} scenarios")
    return result


def render(result: dict[str, Any]) -> str:
    document = {
        'upstream': f'kopf=={UPSTREAM_VERSION}',
        'generated_by': 'bench/compat/fixtures.py (see bench/compat/README.md)',
        'scenarios': dict(sorted(result['scenarios'].items())),
    }
    return json.dumps(document, indent=2, ensure_ascii=False) + '\n'


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    source = parser.add_mutually_exclusive_group()
    source.add_argument('--python', type=pathlib.Path, help='an interpreter that already has kopf==1.45.2')
    source.add_argument('--venv', type=pathlib.Path, help='create (or reuse) the throw-away venv here and keep it')
    parser.add_argument('--output', type=pathlib.Path, default=DEFAULT_OUTPUT)
    parser.add_argument('--check', action='store_true', help='do not write; exit 1 if the fixtures are stale')
    args = parser.parse_args()

    if args.python is not None:
        result = run_upstream(args.python)
    elif args.venv is not None:
        result = run_upstream(ensure_venv(args.venv))
    else:
        with tempfile.TemporaryDirectory(prefix='kopf-upstream-venv-') as tmp:
            result = run_upstream(ensure_venv(pathlib.Path(tmp)))

    text = render(result)
    output: pathlib.Path = args.output
    old = output.read_text(encoding='utf-8') if output.exists() else None
    if old == text:
        log(f'{output} is up to date ({len(result["scenarios"])} scenarios)')
        return 0
    if args.check:
        log(f'{output} is stale: regenerate it with `python3 bench/compat/fixtures.py`')
        return 1
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(text, encoding='utf-8')
    log(f'wrote {output} ({len(result["scenarios"])} scenarios, {len(text.encode())} bytes)')
    return 0


if __name__ == '__main__':
    sys.exit(main())
