"""docs/adding-a-sensor-type.md is true: its code registers a type that loads, samples and logs."""

from __future__ import annotations

import re
import sys
import types
from pathlib import Path

import numpy as np
import pytest

from sear.sensors import registry
from sear.sensors.base import SensorContext
from sear.sensors.files import load_sensors
from sear.state import VehicleState

PAGE = Path(__file__).resolve().parents[2] / "docs" / "adding-a-sensor-type.md"


def _code() -> str:
    blocks = re.findall(r"```python\n(.*?)```", PAGE.read_text(encoding="utf-8"), flags=re.S)
    assert len(blocks) == 1
    return blocks[0]


@pytest.fixture
def page_namespace():
    module = types.ModuleType("adding_a_sensor_type_doc")
    assert "altimeter" not in registry.models()
    sys.modules[module.__name__] = module  # dataclasses look their module up while the code runs
    try:
        exec(compile(_code(), str(PAGE), "exec"), module.__dict__)
        yield module.__dict__
    finally:
        registry.unregister("altimeter")
        del sys.modules[module.__name__]


def test_the_page_example_loads_samples_and_presents(page_namespace, tmp_path):
    sensor_cls = page_namespace["AltimeterSensor"]
    assert registry.model("altimeter") is sensor_cls
    path = tmp_path / "s.xml"
    path.write_text('<?xml version="1.0"?>\n<sear-sensors version="1">\n  <altimeter name="alt">\n'
                    "    <offset_m>1.5</offset_m>\n  </altimeter>\n</sear-sensors>\n", encoding="utf-8")
    (config,) = load_sensors(path)
    assert (config.name, config.offset_m, config.update_rate_hz) == ("alt", 1.5, 20.0)
    sensor = sensor_cls(config, np.random.default_rng(0), SensorContext())
    assert sensor.hud_text(None) == "—" and sensor.log_cells(None) == ["", ""]
    state = VehicleState(time=0.5, position=np.array([1.0, 2.0, 0.25]), orientation=np.array([0.0, 0.0, 0.0, 1.0]),
                         linear_velocity=np.array([0.0, 0.0, -0.5]), angular_velocity=np.zeros(3),
                         wheel_angles={}, wheel_radii={})
    sensor.sample(state, None)
    assert sensor.log_cells(sensor.reading) == ["1.75", "-0.5"]
    assert sensor.hud_text(sensor.reading) == "1.750 m, climbing -0.50 m/s"
