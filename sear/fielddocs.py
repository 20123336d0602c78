"""The docstrings written under dataclass fields, for tooltips and generated forms (pure Python)."""

from __future__ import annotations

import ast
import dataclasses
import inspect
import itertools
import textwrap
from functools import cache


@cache
def field_docs(cls: type) -> dict[str, str]:
    """Field name -> its docstring (whitespace collapsed), including inherited dataclass fields."""
    out: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        if not dataclasses.is_dataclass(klass):
            continue
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(klass)))
        except (OSError, TypeError):
            continue
        body = tree.body[0].body  # type: ignore[attr-defined]
        for node, following in itertools.pairwise(body):
            if (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
                    and isinstance(following, ast.Expr) and isinstance(following.value, ast.Constant)
                    and isinstance(following.value.value, str)):
                out[node.target.id] = " ".join(following.value.value.split())
    return out
