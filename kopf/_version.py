"""The version of kopf: the installed package's metadata, read when first asked for.

The scheme (docs/install.md says why): `<upstream API level>+<our release>`, e.g. `1.45.2+0.1.0`. The
public part is the upstream Kopf release whose API we keep (`UPSTREAM`), so an operator that requires
`kopf>=1.38.0` (or `kopf==1.45.2`) in its metadata is satisfied by ours and pip keeps it; the PEP 440
local part after `+` is this project's own release (`RELEASE`), which upstream's versions never have.

`VERSION` is the one place to change it: setup.py puts it into the package metadata; a source tree
that is not installed reports it as it is. `kopf.__version__` is looked up lazily (the facade's
`__getattr__`), so that `import kopf` does not import `importlib.metadata`.

`KUBERNETES`: the Kubernetes versions that the test suite runs against as real API servers (envtest:
tools/envtest builds them; a test keeps this tuple equal to its version files); `kopf --version` prints them.
"""
import functools
import re

UPSTREAM = '1.45.2'   # the upstream Kopf API level that we are compatible with
RELEASE = '0.1.0'     # this project's own release
VERSION = f'{UPSTREAM}+{RELEASE}'
KUBERNETES = ('1.34.4', '1.37.2')

# PEP 440 (normalised, as metadata holds it): release, pre-release, post-release, dev-release, local part.
_PEP440 = re.compile(r'(?P<release>\d+(?:\.\d+)*)(?P<pre>(?:a|b|rc)\d+)?(?:\.(?P<post>post\d+))?'
                     r'(?:\.(?P<dev>dev\d+))?(?:\+(?P<local>[a-z0-9]+(?:\.[a-z0-9]+)*))?', re.IGNORECASE)


@functools.cache
def version() -> str:
    import importlib.metadata  # only when the version is asked for
    try:
        return importlib.metadata.version('kopf')
    except importlib.metadata.PackageNotFoundError:  # a source tree on sys.path, not installed
        return VERSION


def version_tuple(text: str) -> tuple[int | str, ...]:
    """A version as setuptools-scm's tuples are: the release numbers, then each other part as a string.

    `1.2.3` -> (1, 2, 3); `1.2.3.dev4` -> (1, 2, 3, 'dev4'); `1.45.2+0.1.0` -> (1, 45, 2, '0.1.0'): the local
    part is one item of its own, never glued to the patch number, so `>= (1, 38)` compares as upstream's does.
    """
    match = _PEP440.fullmatch(text.strip())
    if match is None:  # not PEP 440: split as it comes
        return tuple(int(part) if part.isdigit() else part for part in text.split('.'))
    numbers = tuple(int(part) for part in match['release'].split('.'))
    return numbers + tuple(match[part] for part in ('pre', 'post', 'dev', 'local') if match[part] is not None)


def version_message() -> str:
    """What `kopf --version` prints: the version line as click prints it, then the tested Kubernetes versions."""
    return f'%(prog)s, version %(version)s\nTested against Kubernetes {", ".join(KUBERNETES)} (envtest)'


def lazy(name: str) -> object:
    """`__version__` and `__version_tuple__` for the facade's module `__getattr__`."""
    if name == '__version__':
        return version()
    if name == '__version_tuple__':
        return version_tuple(version())
    raise AttributeError(f"module 'kopf' has no attribute {name!r}")
