"""The complete examples in the format documents load as they are."""

from __future__ import annotations

import re
from pathlib import Path

from sear.project import Project
from sear.sensors.files import load_sensors
from sear.sensors.registry import definitions

DOCS = Path(__file__).resolve().parent.parent / "docs"


def _xml_blocks(name: str) -> list[str]:
    return re.findall(r"```xml\n(.*?)```", (DOCS / name).read_text(encoding="utf-8"), flags=re.S)


def test_project_format_example_loads(tmp_path):
    (block,) = _xml_blocks("project-format.md")
    (tmp_path / "example.prj").write_text(block, encoding="utf-8")
    project = Project.load(tmp_path / "example.prj")
    assert project.name == "SEAR demo" and project.dynamics.mass == 20.0
    assert project.terrain.file == tmp_path / "terrain.obj"


def test_sensors_format_example_loads_with_every_type(tmp_path):
    (block,) = _xml_blocks("sensors-format.md")
    (tmp_path / "sensors.xml").write_text(block, encoding="utf-8")
    assert {s.TYPE for s in load_sensors(tmp_path / "sensors.xml")} == set(definitions())


def _field_names(cls: type) -> set[str]:
    """Every XML element name a dataclass (and the dataclasses inside it) contributes."""
    import dataclasses
    import typing

    names: set[str] = set()
    for f in dataclasses.fields(cls):
        if f.name == "path":
            continue
        names.add(f.name)
        tp = typing.get_type_hints(cls)[f.name]
        for inner in (tp, *typing.get_args(tp)):
            if dataclasses.is_dataclass(inner):
                names |= _field_names(inner)
    return names


def test_every_field_is_documented():
    from sear.project import Wheel

    project_doc = (DOCS / "project-format.md").read_text(encoding="utf-8")
    missing = sorted(n for n in _field_names(Project) | _field_names(Wheel)
                     if f"`{n}`" not in project_doc and f"`<{n}>`" not in project_doc)
    assert missing == [], f"project-format.md does not document {missing}"
    sensors_doc = (DOCS / "sensors-format.md").read_text(encoding="utf-8")
    for cls in definitions().values():
        missing = sorted(n for n in _field_names(cls) if f"`{n}`" not in sensors_doc and f"`<{n}>`" not in sensors_doc)
        assert missing == [], f"sensors-format.md does not document {cls.TYPE}: {missing}"


def test_local_links_in_readme_and_docs_resolve():
    root = DOCS.parent
    for page in [root / "README.md", *DOCS.glob("*.md")]:
        for target in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", page.read_text(encoding="utf-8")):
            assert (page.parent / target).exists(), f"{page.name} links to {target}, which does not exist"


def test_user_code_doc_example_is_valid_user_code(tmp_path):
    from sear.codecheck import check_user_code

    blocks = re.findall(r"```python\n(.*?)```", (DOCS / "user-code.md").read_text(encoding="utf-8"), flags=re.S)
    assert blocks
    for i, block in enumerate(blocks):
        path = tmp_path / f"example{i}.py"
        path.write_text(block, encoding="utf-8")
        assert check_user_code(path) == []
