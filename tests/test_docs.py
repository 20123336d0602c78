"""The complete examples in the format documents load as they are."""

from __future__ import annotations

import re
from pathlib import Path

from sear.project import Project
from sear.sensors.config import SENSOR_TYPES, load_sensors

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
    assert {s.TYPE for s in load_sensors(tmp_path / "sensors.xml")} == set(SENSOR_TYPES)
