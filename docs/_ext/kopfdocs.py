"""The API reference of the docs site, generated from the public names, never from private module paths.

- `.. kopf-names:: MODULE` (in an `{eval-rst}` block of docs/api.md) documents every public name of a
  public module (`kopf`, `kopf.on`, `kopf.testing`, `kopf.lifecycles`): its `__all__`, else its names
  without a leading underscore. `:group: NAME` takes one block of `kopf.__all__` (the facade marks its
  blocks with `# --- all: NAME ---` comments). Each name is documented as `MODULE.NAME` by autodoc, with
  its signature, from the live object, so moving the private modules changes nothing here.
- When the build ends, a name that no directive documented is a warning (an error with -W).
- A keyword-only `**options: Unpack[SomeOptions]` (the decorators) is shown as the keywords it stands for.
- A markdown link to a repository file outside docs/ (`../bench/results/NOTES.md`) is a download of that
  file, as MyST makes links to other files already; a missing file fails the build. A file that a page
  includes whole (`examples/README.md`, shown by docs/examples.md) is a link to that page; the links in an
  included file are resolved from where that file is.
- A type alias has no docstring of its own: its `#:` comment in the module that the public module
  imports it from is used (found from the public module's imports, not from a fixed path).
"""
import ast
import enum
import functools
import importlib
import inspect
import os
import pathlib
import re
import typing
from types import ModuleType
from typing import Any

from docutils import nodes
from docutils.statemachine import StringList
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.pycode import ModuleAnalyzer
from sphinx.transforms import SphinxTransform
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective
from sphinx.util.inspect import stringify_signature
from sphinx.util.parsing import nested_parse_to_nodes

logger = logging.getLogger(__name__)

MODULES = ('kopf', 'kopf.on', 'kopf.testing', 'kopf.lifecycles')
_GROUP = re.compile(r'#\s*(?:---\s*)?(?:(end)\s+)?(?:all:\s*)?(?P<name>[\w ]+?)\s*(?:---)?\s*$')


def public_names(module: ModuleType) -> list[str]:
    """The names a user may import from the module, in the module's own order."""
    names = getattr(module, '__all__', None)
    if names is None:
        names = [name for name, value in vars(module).items()
                 if not name.startswith('_') and not isinstance(value, ModuleType)]
    return list(names)


@functools.cache
def groups(module: ModuleType) -> dict[str, list[str]]:
    """The blocks of the module's `__all__`, by the comment above each (`''`: names before any comment)."""
    source = inspect.getsource(module)
    start = source.index('__all__ = [')
    found: dict[str, list[str]] = {}
    current = ''
    for line in source[start:source.index(']', start)].splitlines()[1:]:
        line = line.strip()
        if line.startswith('#'):
            match = _GROUP.match(line)
            current = '' if match is None or match.group(1) else match.group('name')
        for name in re.findall(r"'([\w]+)'", line.split('#')[0]):
            found.setdefault(current, []).append(name)
    return found


def _directive(module: ModuleType, name: str) -> list[str]:
    obj = getattr(module, name)
    full = f'{module.__name__}.{name}'
    if isinstance(obj, ModuleType):
        return [f'.. py:data:: {full}', '   :no-index:', '',
                f'   The module :py:mod:`{obj.__name__}`, documented in its own section.', '']
    if isinstance(obj, typing.NewType):
        return [f'.. autoclass:: {full}', '']
    if inspect.isclass(obj):
        kind = 'autoexception' if issubclass(obj, BaseException) else 'autoclass'
        options = ['   :members:']
        if issubclass(obj, enum.Enum) or typing.is_typeddict(obj):
            options.append('   :undoc-members:')
        if obj.__name__ == name and any(base.__module__.startswith('kopf._') for base in obj.__mro__[1:]):
            # The methods of a private base (`LocalCluster`'s controls) are documented here, not those
            # of public ones (documented themselves) or of Python's (`Mapping`'s).
            others = {base.__name__ for base in obj.__mro__[1:] if not base.__module__.startswith('kopf._')}
            options.append(f'   :inherited-members: {", ".join(sorted(others))}')
        wrapped = _wrapping_descriptors(obj)
        if wrapped and obj.__name__ == name:
            options.append(f'   :exclude-members: {", ".join(wrapped)}')
        return [f'.. {kind}:: {full}', *options, '', *_as_methods(wrapped), '']  # an alias says whose
    if inspect.isfunction(obj) or inspect.isfunction(getattr(obj, '__wrapped__', None)):
        return [f'.. autofunction:: {full}', '']
    return [f'.. autodata:: {full}', '']


def _wrapping_descriptors(cls: type) -> dict[str, Any]:
    """Methods made by a descriptor from a function of its own (`.fn`), which autodoc takes for attributes.

    `LocalCluster.fail` and the other controls: the function's first argument is what the method is bound to.
    """
    found = {}
    for name in dir(cls):
        value = inspect.getattr_static(cls, name, None)
        if (not name.startswith('_') and not inspect.isfunction(value) and hasattr(type(value), '__get__')
                and inspect.isfunction(getattr(value, 'fn', None)) and value.fn.__doc__):
            found[name] = value.fn
    return found


def _as_methods(functions: dict[str, Any]) -> list[str]:
    lines = []
    for name, fn in functions.items():
        signature = inspect.signature(fn)
        signature = signature.replace(parameters=list(signature.parameters.values())[1:])
        lines += [f'   .. py:method:: {name}{stringify_signature(signature, unqualified_typehints=True)}', '']
        lines += [f'      {line}'.rstrip() for line in inspect.cleandoc(fn.__doc__).splitlines()] + ['']
    return lines


class KopfNames(SphinxDirective):
    required_arguments = 1
    option_spec = {'group': lambda text: (text or '').strip()}

    def run(self) -> list[nodes.Node]:
        module = importlib.import_module(self.arguments[0])
        if 'group' in self.options:
            names = groups(module).get(self.options['group'])
            if not names:
                logger.warning('kopf-names: %s has no block %r in __all__', module.__name__, self.options['group'],
                               location=self.get_location())
                return []
        else:
            names = public_names(module)
        _documented(self.env).setdefault(self.env.docname, set()).update(f'{module.__name__}.{name}' for name in names)
        lines = [line for name in names for line in _directive(module, name)]
        return nested_parse_to_nodes(self.state, StringList(lines, source=f'<kopf-names {module.__name__}>'))


def expand_unpacked_options(app: Sphinx, what: str, name: str, obj: Any, options: Any,
                            signature: str | None, return_annotation: str) -> tuple[str, str] | None:
    """`create(arg1, arg2, arg3, /, **options: Unpack[ResourceOptions])` → `create(..., /, *, id=None, ...)`.

    A protocol (`kopf.WebhookFn`) is never instantiated: no `(*args, **kwargs)` after its name.
    """
    if what == 'class' and getattr(obj, '_is_protocol', False):
        return '', return_annotation
    if what not in {'function', 'decorator', 'method'} or not callable(obj):
        return None
    try:
        sig = inspect.signature(obj)
        hints = typing.get_type_hints(obj, include_extras=True)
    except (TypeError, ValueError, NameError):
        return None
    params = list(sig.parameters.values())
    last = params[-1] if params else None
    if last is None or last.kind is not inspect.Parameter.VAR_KEYWORD:
        return None
    annotation = hints.get(last.name)
    if typing.get_origin(annotation) is not typing.Unpack:
        return None
    options_type = typing.get_args(annotation)[0]
    known = {param.name for param in params}
    keywords = [inspect.Parameter(key, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=hint)
                for key, hint in typing.get_type_hints(options_type).items() if key not in known]
    expanded = sig.replace(parameters=[*params[:-1], *keywords])
    text = stringify_signature(expanded, show_return_annotation=False, unqualified_typehints=True)
    return text, return_annotation


def alias_docs(app: Sphinx, what: str, name: str, obj: Any, options: Any, lines: list[str]) -> None:
    """A type alias or a constant of a public module: the `#:` comment where it is defined, if any.

    Never the docstring of its type (`dict`'s for `dict[str, Any]`, `NewType`'s, an enum's for its member).
    """
    if what != 'data' and not isinstance(obj, typing.NewType):
        return
    module_name, _, attr = name.rpartition('.')
    if module_name not in MODULES:
        return
    origin, original = _imported_from(module_name).get(attr, (module_name, attr))
    lines[:] = ModuleAnalyzer.for_module(origin).find_attr_docs().get(('', original), [])


@functools.cache
def _imported_from(module_name: str) -> dict[str, tuple[str, str]]:
    """Public name → (the module it is imported from, its name there), read from the public module's source."""
    module = importlib.import_module(module_name)
    tree = ast.parse(inspect.getsource(module))
    found: dict[str, tuple[str, str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                found[alias.asname or alias.name] = (node.module, alias.name)
    return found


def _documented(env: Any) -> dict[str, set[str]]:
    """The names documented so far, by page (kept in the environment, so parallel reads merge them)."""
    if not hasattr(env, 'kopf_documented'):
        env.kopf_documented = {}
    found: dict[str, set[str]] = env.kopf_documented
    return found


def check_every_name(app: Sphinx, env: Any) -> None:
    documented = set().union(*_documented(env).values())
    for module_name in MODULES:
        module = importlib.import_module(module_name)
        for name in public_names(module):
            if f'{module_name}.{name}' not in documented:
                logger.warning('the API reference does not document %s.%s (docs/api.md: add it to a kopf-names '
                               'directive)', module_name, name)


def merge_documented(app: Sphinx, env: Any, docnames: set[str], other: Any) -> None:
    _documented(env).update({name: found for name, found in _documented(other).items() if name in docnames})


def purge_documented(app: Sphinx, env: Any, docname: str) -> None:
    _documented(env).pop(docname, None)


class RepositoryFilesAsDownloads(SphinxTransform):
    """Links to files of the repository outside docs/ are downloads of those files, checked to exist.

    MyST takes `[x](../examples/README.md)` for a page of the site (it is not one), and resolves the links
    of an included file (`examples/README.md` in docs/examples.md) from the including page, not from
    the file that has them.
    """
    default_priority = 500  # while reading, so that the downloads are collected (and checked)

    def apply(self, **kwargs: Any) -> None:
        srcdir = pathlib.Path(self.env.srcdir).resolve()
        page = pathlib.Path(self.env.doc2path(self.env.docname)).resolve()
        included = _included_files(srcdir)
        for node in list(self.document.findall(addnodes.pending_xref)):
            if node.get('reftype') != 'myst':
                continue
            target = self._target(node, srcdir, page)
            if target is not None and target.resolve() in included:  # a page shows it: a link to that page
                node['reftarget'] = included[target.resolve()]
                continue
            if target is not None:
                download = addnodes.download_reference('', '', *node.children, refdomain=None, reftype='myst',
                                                       reftarget=os.path.relpath(target, page.parent),
                                                       refdoc=self.env.docname, refexplicit=node.get('refexplicit'))
                download['classes'] = ['xref', 'download', 'myst']
                node.replace_self(download)

    @staticmethod
    def _target(node: addnodes.pending_xref, srcdir: pathlib.Path, page: pathlib.Path) -> pathlib.Path | None:
        if node.get('refdomain') == 'doc':  # an absolute docname outside docs/: a `.md` file of the repository
            docname = pathlib.Path(node['reftarget'])
            outside = docname.is_absolute() and not docname.resolve().is_relative_to(srcdir)
            return docname.with_name(f'{docname.name}.md') if outside else None
        source = pathlib.Path(node.source or page).resolve()
        if node.get('refdomain') is None and source != page:  # a link of an included file, from that file
            target = source.parent / node['reftarget'].partition('#')[0]
            return target if target.is_file() else None
        return None


@functools.cache
def _included_files(srcdir: pathlib.Path) -> dict[pathlib.Path, str]:
    """The files of the repository that a page includes whole (docs/examples.md: examples/README.md), to its docname."""
    found = {}
    for path in srcdir.rglob('*.md'):
        for included in re.findall(r'^```\{include\} (\S+)$', path.read_text(), flags=re.M):
            found[(path.parent / included).resolve()] = path.relative_to(srcdir).with_suffix('').as_posix()
    return found


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_transform(RepositoryFilesAsDownloads)
    app.add_directive('kopf-names', KopfNames)
    app.connect('autodoc-process-signature', expand_unpacked_options)
    app.connect('autodoc-process-docstring', alias_docs)
    app.connect('env-merge-info', merge_documented)
    app.connect('env-purge-doc', purge_documented)
    app.connect('env-check-consistency', check_every_name)
    return {'version': '1', 'parallel_read_safe': True, 'parallel_write_safe': True}
