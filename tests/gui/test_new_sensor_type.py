"""Acceptance: a sensor type declared in this file alone loads, samples, logs, shows in the HUD and gets a
wizard tab, with no edit anywhere else (issue 10, item 3)."""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from typing import Any, ClassVar, NamedTuple

import numpy as np
import pytest

from sear.errors import ProjectError
from sear.fields import param
from sear.project import Project
from sear.sensors import registry
from sear.sensors.base import RayHits, Sensor
from sear.sensors.config import SensorConfig
from sear.sensors.files import load_sensors
from sear.state import VehicleState

pytestmark = pytest.mark.gl


# --- the new type: definition, model, presentation --------------------------------------------------------

@dataclass
class AltimeterConfig(SensorConfig):
    """Altimeter: height of the robot's body origin (world z) plus a calibration offset."""

    TYPE: ClassVar[str] = "altimeter"

    offset_m: float = param(0.0, minimum=-10.0, maximum=10.0, label="Calibration offset")
    """Added to every reading, metres."""
    update_rate_hz: float = param(20.0, kind="positive")
    """Samples per second."""


class Altitude(NamedTuple):
    height: float
    """m."""
    climb: float
    """Vertical speed, m/s."""


class AltimeterSensor(Sensor):
    TYPE = "altimeter"
    TITLE = "Altimeter"
    DEFINITION = AltimeterConfig
    FIELDS = ("height", "climb")
    config: AltimeterConfig

    def sample(self, state: VehicleState, hits: RayHits | None) -> None:
        self.reading = Altitude(float(state.position[2]) + self.config.offset_m, float(state.linear_velocity[2]))

    def hud_text(self, reading: Any) -> str:
        if not isinstance(reading, Altitude):
            return super().hud_text(reading)
        return f"{reading.height:.3f} m, climbing {reading.climb:+.2f} m/s"


# --- the checks ----------------------------------------------------------------------------------------------

@pytest.fixture
def altimeter():
    registry.register(AltimeterSensor)
    yield AltimeterSensor
    registry.unregister("altimeter")
    assert "altimeter" not in registry.models()


def _sensors_file(demo_copy, offset: str = "0.5") -> Any:
    """The demo's sensors plus an altimeter sampling on every physics step (240 Hz)."""
    text = (demo_copy / "sensors.xml").read_text(encoding="utf-8")
    altimeter = (f'  <altimeter name="alt">\n    <offset_m>{offset}</offset_m>\n'
                 "    <update_rate_hz>240</update_rate_hz>\n  </altimeter>\n</sear-sensors>")
    path = demo_copy / "sensors_alt.xml"
    path.write_text(text.replace("</sear-sensors>", altimeter), encoding="utf-8")
    return path


def test_unregistered_type_is_refused(demo_copy):
    # Control for the tests below: without registering, the same file does not load.
    with pytest.raises(ProjectError, match="unknown element <altimeter>"):
        load_sensors(_sensors_file(demo_copy))


def test_loads_from_xml_with_its_declared_limits(altimeter, demo_copy):
    sensors = load_sensors(_sensors_file(demo_copy))
    alt = sensors[-1]
    assert isinstance(alt, AltimeterConfig) and alt.name == "alt"
    assert (alt.offset_m, alt.update_rate_hz) == (0.5, 240.0)
    assert [s.TYPE for s in sensors[:-1]] == [s.TYPE for s in load_sensors(demo_copy / "sensors.xml")]
    with pytest.raises(ProjectError) as info:
        load_sensors(_sensors_file(demo_copy, offset="50"))
    assert info.value.field == "altimeter.offset_m"
    assert "expected a number from -10 to 10, found '50'" in str(info.value)


def test_samples_logs_and_reads(altimeter, demo_copy, tmp_path):
    from sear.runtime.simulation import Simulation

    project = Project.load(demo_copy / "demo.prj")
    sim = Simulation(project, seed=3, log_path=tmp_path / "log.csv",
                     sensor_configs=load_sensors(_sensors_file(demo_copy)))
    try:
        sim.run(1.0)  # 240 steps: the last is a control tick, so the log's last row is this state
        position, _orientation = sim.world.vehicles[0].pose()
        velocity = sim.world.vehicles[0].state(sim.world.time).linear_velocity
        expected_height, expected_climb = float(position[2]) + 0.5, float(velocity[2])
        reading = sim.sim.read("alt")
        assert reading.height == pytest.approx(expected_height, abs=1e-9)
        assert reading.climb == pytest.approx(expected_climb, abs=1e-9)
        assert 0.0 < expected_height < 5.0  # the robot stands on the terrain
    finally:
        sim.close()
    with open(tmp_path / "log.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 60
    assert float(rows[-1]["alt.height"]) == pytest.approx(expected_height, abs=1e-8)
    assert float(rows[-1]["alt.climb"]) == pytest.approx(expected_climb, abs=1e-8)
    assert float(rows[-1]["alt.height"]) - 0.5 == pytest.approx(float(rows[-1]["truth.z"]), abs=1e-6)


def test_shows_in_the_hud(altimeter, demo_copy, qtbot):
    from sear.gui.simwindow import SimulationWindow
    from sear.runtime.simulation import Simulation

    sim = Simulation(Project.load(demo_copy / "demo.prj"), seed=3,
                     sensor_configs=load_sensors(_sensors_file(demo_copy)))
    window = SimulationWindow(sim)
    qtbot.addWidget(window)
    window.show()
    try:
        window.timer.stop()
        window.advance(1.0)
        z = float(sim.world.vehicles[0].pose()[0][2])
        line = next(line for line in window.hud.text().splitlines() if line.startswith("alt "))
        assert f"{z + 0.5:.3f} m, climbing" in line
        assert sim.sensors.sensor("alt").hud_text(sim.sensors.read("alt")) in line
    finally:
        window.timer.stop()
        sim.close()


def test_gets_a_wizard_tab(altimeter, tmp_path, qtbot, answers):
    from sear.gui.widgets import NumberField
    from sear.gui.wizard import SensorWizard

    project = Project(name="w")
    project.save(tmp_path / "w.prj")
    wizard = SensorWizard(project)
    qtbot.addWidget(wizard)
    titles = [wizard.tabs.tabText(i) for i in range(wizard.tabs.count())]
    assert titles[-1] == "Altimeter" and titles.count("Altimeter") == 1
    form = wizard.forms[-1]
    # Its own fields, and the latency every sensor type has (sear.sensors.config).
    assert set(form.editors) == {"offset_m", "update_rate_hz", "latency_s"}
    offset = form.editors["offset_m"]
    assert isinstance(offset, NumberField) and (offset.minimum(), offset.maximum()) == (-10.0, 10.0)
    offset.setValue(50.0)  # refused: held at the declared maximum
    assert offset.value() == 10.0
    offset.setValue(-2.5)
    assert offset.value() == -2.5
    assert form.rows["offset_m"][0].text() == "Calibration offset:"
    wizard.tabs.setCurrentIndex(len(titles) - 1)
    form.name_edit.setText("alt")
    assert wizard.add_current()
    answers.save_path = str(tmp_path / "s.xml")
    wizard.save_and_close()
    saved = load_sensors(tmp_path / "s.xml")
    assert saved == [AltimeterConfig(name="alt", offset_m=-2.5)]
    assert math.isclose(saved[0].update_rate_hz, 20.0) and np.isfinite(saved[0].offset_m)
