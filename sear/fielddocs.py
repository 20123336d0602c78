"""The docstrings written under dataclass fields, for tooltips and generated forms (pure Python).

They are read when a window asks for a field's tooltip (sear.fields.FieldInfo.help), not when a run
generates the schemas it checks files against (no schema holds them). Each module's source is parsed once
(not once per class, as `inspect.getsource` does for every class it is asked for), and only its
statements are walked to find the classes.
"""

from __future__ import annotations

import ast
import dataclasses
import itertools
import linecache
import sys
from functools import cache

_BODIES = ("body", "orelse", "finalbody", "handlers")
"""The fields of a statement that hold statements (an if's, a try's, a with's, a loop's blocks)."""


def _find_classes(statements: list[ast.stmt], path: list[str], classes: dict[str, ast.ClassDef]) -> None:
    """Every class among `statements` and the statements nested in them, by __qualname__ (the first
    definition of a name, as `inspect.getsource` finds it: functions add '<locals>' to the path). Only
    statements are walked, never expressions, which are most of a module's nodes: a class is a statement."""
    for node in statements:
        if isinstance(node, ast.ClassDef):
            classes.setdefault(".".join([*path, node.name]), node)
            _find_classes(node.body, [*path, node.name], classes)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            _find_classes(node.body, [*path, node.name, "<locals>"], classes)
        else:
            for name in _BODIES:
                for child in getattr(node, name, None) or ():
                    _find_classes(child.body if isinstance(child, ast.ExceptHandler) else [child], path, classes)


@cache
def _classes_in(filename: str) -> dict[str, ast.ClassDef]:
    """The class definitions in the source file `filename` by qualified name ({} when it has none
    or cannot be read or parsed)."""
    source = "".join(linecache.getlines(filename))
    if not source:
        return {}
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return {}
    classes: dict[str, ast.ClassDef] = {}
    _find_classes(tree.body, [], classes)
    return classes


def _class_node(klass: type) -> ast.ClassDef | None:
    """The definition of `klass` in its module's source, or None where there is no source."""
    filename = getattr(sys.modules.get(klass.__module__), "__file__", None)
    if not isinstance(filename, str) or not filename.endswith(".py"):
        return None
    return _classes_in(filename).get(klass.__qualname__)


@cache
def field_docs(cls: type) -> dict[str, str]:
    """Field name -> its docstring (whitespace collapsed), including inherited dataclass fields."""
    out: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        if not dataclasses.is_dataclass(klass):
            continue
        node = _class_node(klass)
        if node is None:
            continue
        for field, following in itertools.pairwise(node.body):
            if (isinstance(field, ast.AnnAssign) and isinstance(field.target, ast.Name)
                    and isinstance(following, ast.Expr) and isinstance(following.value, ast.Constant)
                    and isinstance(following.value.value, str)):
                out[field.target.id] = " ".join(following.value.value.split())
    return out
