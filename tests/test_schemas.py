"""The shipped XSD files are what the generator writes from the field declarations."""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from typing import ClassVar

import pytest
from lxml import etree

from sear import xmlio
from sear.fields import FORMAT_VERSION, KINDS, field_info, param
from sear.project import Dynamics, Terrain
from sear.schemas import generate
from sear.sensors import registry
from sear.sensors.base import Sensor
from sear.sensors.config import SensorConfig


@pytest.mark.parametrize("name", generate.NAMES)
def test_shipped_schema_is_the_generated_one(name):
    shipped = resources.files("sear.schemas").joinpath(name).read_text(encoding="utf-8")
    assert shipped == generate.builtin_texts()[name], f"run: python -m sear.schemas.generate ({name} is stale)"


def test_check_mode_reports_a_stale_file(tmp_path, monkeypatch, capsys):
    for name, text in generate.builtin_texts().items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    monkeypatch.setattr(generate, "_folder", lambda: tmp_path)
    assert generate.main(["--check"]) == 0  # positive control: fresh files pass
    (tmp_path / "sensors.xsd").write_text("<stale/>", encoding="utf-8")
    assert generate.main(["--check"]) == 1
    assert "sensors.xsd" in capsys.readouterr().err
    assert (tmp_path / "sensors.xsd").read_text() == "<stale/>"  # --check writes nothing


def test_shipped_files_are_valid_schemas():
    folder = resources.files("sear.schemas")
    for name in generate.NAMES:
        with resources.as_file(folder.joinpath(name)) as path:
            etree.XMLSchema(etree.parse(str(path)))  # raises on a broken schema


def test_one_format_version_in_files_and_schemas():
    for name in ("project.xsd", "sensors.xsd"):
        assert f"format version {FORMAT_VERSION}." in generate.builtin_texts()[name]


def test_field_metadata_gives_the_bounds_the_schema_checks():
    # Declared once: a latitude is -90..90, a mass > 0; the editors' limits come from the same place.
    lat = field_info(Terrain, "latitude")
    assert (lat.minimum, lat.maximum, lat.unit) == (-90, 90, "°")
    assert lat.bounds()[3] == KINDS["latitude"].meaning
    mass = field_info(Dynamics, "mass")
    lo, _hi, excluded, _meaning = mass.bounds()
    assert (lo, excluded) == (0.0, True)  # greater than 0
    assert mass.unit == "kg" and mass.label == "Mass"
    assert 'name="mass" type="positive"/>' in generate.builtin_texts()["project.xsd"]
    assert xmlio.schema("project.xsd") is xmlio.schema("project.xsd")  # parsed once


def test_the_loading_schema_follows_the_registry():
    @dataclass
    class ProbeConfig(SensorConfig):
        TYPE: ClassVar[str] = "probe"
        depth_m: float = param(1.0, kind="positive")

    class ProbeSensor(Sensor):
        TYPE = "probe"
        DEFINITION = ProbeConfig

    def element_names() -> set[str]:
        doc = etree.fromstring(generate.schema_text("sensors.xsd").encode())
        return {el.get("name") for el in doc.iter("{http://www.w3.org/2001/XMLSchema}element")}

    before = xmlio.schema("sensors.xsd")
    assert "probe" not in element_names()
    registry.register(ProbeSensor)
    try:
        assert "probe" in element_names() and "depth_m" in element_names()
        assert xmlio.schema("sensors.xsd") is not before  # regenerated for the new type
        with pytest.raises(ValueError, match="registered already"):
            registry.register(type("Other", (ProbeSensor,), {}))
    finally:
        registry.unregister("probe")
    assert "probe" not in element_names()
    # The shipped file describes the built-in types whatever is registered.
    assert "probe" not in generate.builtin_texts()["sensors.xsd"]
