"""The public surface stays what it is: every name of `kopf.__all__`, `kopf.on`, `kopf.testing` and
`kopf.lifecycles` with its kind and signature, and every CLI command's `--help`, compared with a snapshot
(tests/surface/). Internal module paths are left out (a class moving between private packages is no change).

After an intended change of the surface: `python tests/test_surface.py` writes the snapshot anew; review the diff.
"""
import inspect
import json
import pathlib
import re
import sys
from typing import Any

import click.testing

SNAPSHOT = pathlib.Path(__file__).parent / 'surface'
_PRIVATE_PATH = re.compile(r'\bkopf(\._[a-z_]+)+\.')   # kopf._core.bodies.Body -> Body


def _describe(obj: Any) -> str:
    kind = ('class' if inspect.isclass(obj) else 'function' if callable(obj) else
            'module' if inspect.ismodule(obj) else type(obj).__name__)
    try:
        signature = str(inspect.signature(obj)) if callable(obj) and not inspect.ismodule(obj) else ''
    except (TypeError, ValueError):
        signature = '(?)'
    return _PRIVATE_PATH.sub('', f'{kind}{signature}')


def surface() -> dict[str, dict[str, str]]:
    import kopf
    import kopf.lifecycles
    import kopf.on
    import kopf.testing
    spaces = {'kopf': (kopf, kopf.__all__), 'kopf.on': (kopf.on, kopf.on.__all__),
              'kopf.testing': (kopf.testing, [n for n in vars(kopf.testing) if not n.startswith('_')]),
              'kopf.lifecycles': (kopf.lifecycles, [n for n in vars(kopf.lifecycles) if not n.startswith('_')])}
    return {space: {name: _describe(getattr(module, name)) for name in sorted(names)}
            for space, (module, names) in spaces.items()}


def helps() -> dict[str, str]:
    from kopf.cli import main
    runner = click.testing.CliRunner()
    found = {'kopf': runner.invoke(main, ['--help'], terminal_width=100).output}
    for name in sorted(main.commands):
        found[f'kopf {name}'] = runner.invoke(main, [name, '--help'], terminal_width=100).output
    return found


def test_the_public_names_and_signatures_are_unchanged() -> None:
    assert surface() == json.loads((SNAPSHOT / 'names.json').read_text())


def test_every_cli_commands_help_is_unchanged() -> None:
    assert helps() == json.loads((SNAPSHOT / 'helps.json').read_text())


if __name__ == '__main__':
    SNAPSHOT.mkdir(exist_ok=True)
    (SNAPSHOT / 'names.json').write_text(json.dumps(surface(), indent=1, sort_keys=True) + '\n')
    (SNAPSHOT / 'helps.json').write_text(json.dumps(helps(), indent=1, sort_keys=True) + '\n')
    sys.exit(0)
