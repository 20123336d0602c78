"""sear.fielddocs reads the docstring under each dataclass field from the class's own source: checked
against the documentation read independently, with inspect.getsource on that class alone."""

from __future__ import annotations

import ast
import dataclasses
import inspect
import itertools
import textwrap

import pytest

from sear import project
from sear.fielddocs import field_docs
from sear.sensors.registry import builtin_definitions


def _docs_by_inspect(cls: type) -> dict[str, str]:
    """The same documentation read the slow, obvious way: each class's own source block, parsed alone."""
    out: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        if not dataclasses.is_dataclass(klass):
            continue
        body = ast.parse(textwrap.dedent(inspect.getsource(klass))).body[0].body  # type: ignore[attr-defined]
        for node, following in itertools.pairwise(body):
            if (isinstance(node, ast.AnnAssign) and isinstance(following, ast.Expr)
                    and isinstance(following.value, ast.Constant) and isinstance(following.value.value, str)):
                out[node.target.id] = " ".join(following.value.value.split())  # type: ignore[union-attr]
    return out


def _project_dataclasses() -> list[type]:
    return [c for c in vars(project).values()
            if isinstance(c, type) and dataclasses.is_dataclass(c) and c.__module__ == project.__name__]


@pytest.mark.parametrize("cls", _project_dataclasses() + list(builtin_definitions().values()),
                         ids=lambda c: c.__name__)
def test_every_model_class_has_the_docs_its_source_gives(cls: type) -> None:
    assert field_docs(cls) == _docs_by_inspect(cls)


def test_classes_in_functions_and_nested_classes_are_found() -> None:
    @dataclasses.dataclass
    class Local:
        speed: float = 1.0
        """How fast,   in m/s."""
        name: str = ""

    @dataclasses.dataclass
    class Derived(Local):
        size: float = 2.0
        """How big, m."""

    assert field_docs(Local) == {"speed": "How fast, in m/s."}
    assert field_docs(Derived) == {"speed": "How fast, in m/s.", "size": "How big, m."}


def test_a_class_made_at_run_time_has_no_docs() -> None:
    assert field_docs(dataclasses.make_dataclass("Made", [("x", float)])) == {}
