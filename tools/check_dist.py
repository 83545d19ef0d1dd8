"""Check what `make dist` built: one wheel and one sdist, with the package's data files in both.

    python tools/check_dist.py dist

The data files are every file under kopf/ that is not Python source (the emulator's OpenAPI schemas,
py.typed); each must be in the wheel (package_data) and in the sdist (MANIFEST.in), and the
sdist must carry what setup.py reads (requirements.txt, README.md). Exits 1 naming what is missing.
"""
import pathlib
import sys
import tarfile
import zipfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
PLUGIN = '_kopf_pytest.py'  # a top-level module beside the package (setup.py's py_modules)


def data_files() -> list[str]:
    """The package's files that are not Python source, relative to the repository."""
    return sorted(str(path.relative_to(ROOT)) for path in (ROOT / 'kopf').rglob('*')
                  if path.is_file() and path.suffix not in ('.py', '.pyc') and '__pycache__' not in path.parts)


def missing(dist: pathlib.Path) -> list[str]:
    wheels, sdists = sorted(dist.glob('kopf-*.whl')), sorted(dist.glob('kopf-*.tar.gz'))
    if len(wheels) != 1 or len(sdists) != 1:
        return [f'one wheel and one sdist in {dist} (found {[p.name for p in [*wheels, *sdists]]})']
    with zipfile.ZipFile(wheels[0]) as wheel:
        in_wheel = set(wheel.namelist())
    with tarfile.open(sdists[0]) as sdist:
        in_sdist = {name.partition('/')[2] for name in sdist.getnames()}
    wanted = data_files()
    problems = [f'{name} in {wheels[0].name}' for name in wanted if name not in in_wheel]
    problems += [f'{name} in {sdists[0].name}' for name in [*wanted, 'requirements.txt', 'README.md', 'setup.py']
                 if name not in in_sdist]
    if not any(name.endswith('entry_points.txt') for name in in_wheel):
        problems.append(f'the console script (entry_points.txt) in {wheels[0].name}')
    problems += [f'{PLUGIN} (the pytest plugin) in {archive}' for archive, names in
                 ((wheels[0].name, in_wheel), (sdists[0].name, in_sdist)) if PLUGIN not in names]
    return problems


def main() -> None:
    dist = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else 'dist')
    problems = missing(dist)
    for problem in problems:
        print(f'Missing: {problem}', file=sys.stderr)
    if problems:
        raise SystemExit(1)
    print(f'{dist}: {", ".join(sorted(p.name for p in dist.iterdir()))}: the data files are in both.')


if __name__ == '__main__':
    main()
