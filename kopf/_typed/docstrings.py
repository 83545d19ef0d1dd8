"""Descriptions from the source: a class's own docstring, and the docstrings under its fields (kube-rs and
controller-gen take the doc comments; Python's equivalent is a string literal right after an attribute)."""
import ast
import functools
import inspect
import itertools
import textwrap


def class_description(cls: type) -> str | None:
    """The class's own docstring, not an inherited one, nor the signature that `@dataclass` puts there."""
    doc = cls.__dict__.get('__doc__')
    if not isinstance(doc, str) or not doc.strip():
        return None
    if doc.startswith(f'{cls.__name__}(') and doc.rstrip().endswith(')'):   # dataclasses' generated one
        return None
    return inspect.cleandoc(doc)


def field_descriptions(cls: type) -> dict[str, str]:
    """`{field: docstring}` of the class and its bases (the nearest wins); empty if the source is not available."""
    found: dict[str, str] = {}
    for base in reversed(cls.__mro__):
        if base is not object:
            found.update(_own_field_descriptions(base))
    return found


@functools.cache
def _own_field_descriptions(cls: type) -> dict[str, str]:
    try:
        source = textwrap.dedent(inspect.getsource(cls))
    except (OSError, TypeError):   # classes made in a REPL or by exec(): no source to read
        return {}
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return {}
    body = next((node.body for node in tree.body if isinstance(node, ast.ClassDef)), [])
    found = {}
    for node, after in itertools.pairwise(body):
        if (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
                and isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant)
                and isinstance(after.value.value, str)):
            found[node.target.id] = inspect.cleandoc(after.value.value)
    return found
