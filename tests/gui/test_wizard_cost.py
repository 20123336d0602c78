"""The Sensor Wizard states what each ray sensor costs, live, and what the added ones cost together.

The cost model is pinned to round figures (1 ms a sample, 1 µs a ray) so the shares are worked by hand
here whatever bench/bench_rays.py last measured."""

from __future__ import annotations

import pytest

from sear.gui.sensorform import COST_STYLE, COST_WARNING_STYLE
from sear.gui.wizard import SensorWizard
from sear.project import Project
from sear.sensors import cost
from sear.sensors.cost import CasterCost
from sear.sensors.range import InfraredConfig

pytestmark = pytest.mark.gl

D435 = "Intel RealSense D435 (depth, 424×240)"


@pytest.fixture(autouse=True)
def round_costs(monkeypatch):
    """The cost model pinned to 1 ms a sample and 1 µs a ray, before the wizard (conftest's) is built."""
    monkeypatch.setattr(cost, "RAY_CASTER_COST", CasterCost(per_sample_s=1e-3, per_ray_s=1e-6))


def _preset(wizard, type_name: str, part: str):
    """Show `type_name`'s tab with preset `part` chosen, as a user picks it; its form."""
    index = wizard.type_names.index(type_name)
    wizard.tabs.setCurrentIndex(index)
    form = wizard.forms[index]
    combo = form.model_combo.findText(part)
    assert combo > 0, part
    form.model_combo.setCurrentIndex(combo)
    form.model_combo.activated.emit(combo)
    return form


def test_a_vlp16_states_its_rays_per_second_and_follows_the_rate(wizard):
    form = _preset(wizard, "lidar", "Velodyne VLP-16")
    label = form.cost_label
    assert label.isVisible()
    # 16 layers x 360/0.2 = 1,800 beams; 10 Hz; 10 x (1 ms + 28,800 µs) = 0.298 of a core
    assert label.text() == "Ray cost: 28,800 rays × 10 Hz = 288,000 rays/s · about 30 % of one core at real time"
    assert label.property("warning") is False and label.styleSheet() == COST_STYLE
    form.editors["update_rate_hz"].setValue(20.0)  # 20 x 29.8 ms = 0.596 of a core
    assert label.text().startswith("Ray cost: 28,800 rays × 20 Hz = 576,000 rays/s · about 60 % of one core")
    assert "More than half a core" in label.text()
    assert label.property("warning") is True and label.styleSheet() == COST_WARNING_STYLE


def test_a_d435_is_a_warning_until_its_rate_or_size_comes_down(wizard):
    form = _preset(wizard, "depth_camera", D435)
    label = form.cost_label
    # 424 x 240 = 101,760 rays; 15 Hz; 15 x (1 ms + 101,760 µs) = 1.5414 cores
    assert label.text() == ("Ray cost: 101,760 rays × 15 Hz = 1,526,400 rays/s · about 154 % of one core at real "
                            "time. This sensor alone keeps the simulation below real time on one core.")
    assert label.property("warning") is True and label.styleSheet() == COST_WARNING_STYLE
    form.editors["update_rate_hz"].setValue(4.0)  # 4 x 102.76 ms = 0.411
    assert label.text() == "Ray cost: 101,760 rays × 4 Hz = 407,040 rays/s · about 41 % of one core at real time"
    assert label.property("warning") is False
    form.editors["width_px"].setValue(212)  # 212 x 240 = 50,880 rays; 4 x 51.88 ms = 0.2075
    assert label.text() == "Ray cost: 50,880 rays × 4 Hz = 203,520 rays/s · about 21 % of one core at real time"


def test_fields_that_disagree_say_so_instead_of_a_cost(wizard):
    form = _preset(wizard, "lidar", "SICK LMS200")
    form.editors["min_range_m"].setValue(90.0)  # above the 80 m maximum
    assert form.cost_label.text().startswith("Ray cost: worked out once the fields agree (the minimum range")
    assert form.cost_label.property("warning") is False


def test_sensors_that_cast_no_rays_show_no_cost(wizard):
    for type_name in ("gps", "accelerometer", "gyroscope", "compass", "odometer"):
        index = wizard.type_names.index(type_name)
        wizard.tabs.setCurrentIndex(index)
        label = wizard.forms[index].cost_label
        assert not label.isVisible() and label.text() == "", type_name
    for type_name in ("infrared", "ultrasonic", "lidar", "depth_camera"):
        index = wizard.type_names.index(type_name)
        wizard.tabs.setCurrentIndex(index)
        assert wizard.forms[index].cost_label.isVisible(), type_name


def test_the_list_states_the_added_ray_sensors_together(wizard):
    total = wizard.cost_total
    assert not total.isVisible()  # nothing added
    wizard.tabs.setCurrentIndex(wizard.type_names.index("gps"))
    wizard.form.name_edit.setText("gps")
    assert wizard.add_current()
    assert not total.isVisible()  # a GPS casts no rays
    form = _preset(wizard, "lidar", "Velodyne VLP-16")
    form.name_edit.setText("vlp")
    assert wizard.add_current()
    assert total.isVisible()
    assert total.text() == ("Ray cost: 1 ray sensor: 28,800 rays a sample, 288,000 rays/s · about 30 % of one core "
                            "at real time")
    wizard.tabs.setCurrentIndex(wizard.type_names.index("infrared"))
    wizard.form.set_config(InfraredConfig(name="ir", beam_width_cm=6.0, resolution_cm=1.0, update_rate_hz=26.0))
    assert wizard.add_current()
    # + 55 rays at 26 Hz (1,430 rays/s, 26 x 1.055 ms = 0.0274): 0.3254 of a core
    assert total.text() == ("Ray cost: 2 ray sensors together: 28,855 rays a sample, 289,430 rays/s · about 33 % of "
                            "one core at real time")
    assert total.property("warning") is False
    form = _preset(wizard, "depth_camera", D435)
    form.name_edit.setText("d435")
    assert wizard.add_current()
    assert total.property("warning") is True and total.styleSheet() == COST_WARNING_STYLE
    assert "These sensors alone keep the simulation below real time on one core." in total.text()
    wizard.list.setCurrentRow(3)  # the D435
    wizard.remove()
    assert total.property("warning") is False and "289,430 rays/s" in total.text()


def test_a_rate_above_the_project_s_physics_rate_counts_as_the_physics_rate(qtbot, answers, monkeypatch):
    monkeypatch.setattr(cost, "RAY_CASTER_COST", CasterCost(per_sample_s=1e-3, per_ray_s=1e-6))
    project = Project(name="slow")
    project.simulation.physics_hz = 120.0
    w = SensorWizard(project)
    qtbot.addWidget(w)
    form = w.forms[w.type_names.index("lidar")]
    form.editors["angle_step_deg"].setValue(1.0)
    form.editors["spread_deg"].setValue(90.0)
    form.editors["update_rate_hz"].setValue(500.0)
    assert form.cost_label.text().startswith("Ray cost: 90 rays × 120 Hz (the physics rate) = 10,800 rays/s")
