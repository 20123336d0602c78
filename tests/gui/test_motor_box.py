"""The Vehicle Dynamics tab's Wheel motors box: presets fill the datasheet figures (RPM shown, rad/s saved),
None clears them, a typed figure makes the motor Custom, and Undo takes a preset back."""

from __future__ import annotations

import math

import pytest

from sear.motors import PRESETS
from sear.project import Project

pytestmark = pytest.mark.gl


def test_a_preset_is_saved_in_si_and_shown_in_rpm(window, demo_copy, tmp_path, answers):
    answers.open_path = str(demo_copy / "demo.prj")
    assert window.open_project()
    box = window.dynamics_tab.motor_box
    assert box.choice.currentData() == "none" and not box.fields["motor_stall_torque"].isEnabled()
    box.choice.setCurrentIndex(box.choice.findData(0))  # Pololu 37D 30:1: 330 RPM, 140 kg·mm at 12 V
    dynamics = window.project.dynamics
    assert dynamics.motor_no_load_speed == pytest.approx(330 * 2 * math.pi / 60)
    assert dynamics.motor_stall_torque == pytest.approx(0.140 * 9.80665)
    assert box.fields["motor_no_load_speed"].value() == pytest.approx(330.0)
    assert "Pololu" in box.source.text() and window.dirty
    box.fields["motor_supply_voltage"].setValue(9.0)  # a figure of the drive train: still the preset
    assert box.choice.currentData() == 0 and dynamics.motor_supply_voltage == 9.0
    box.fields["motor_no_load_speed"].setValue(300.0)  # a datasheet figure changed: custom
    assert box.choice.currentData() == "custom"
    assert dynamics.motor_no_load_speed == pytest.approx(300 * 2 * math.pi / 60)
    answers.save_path = str(tmp_path / "motor.prj")
    assert window.save_as()
    saved = Project.load(tmp_path / "motor.prj").dynamics
    assert saved.motor_no_load_speed == pytest.approx(300 * 2 * math.pi / 60) and saved.motor_rated_voltage == 12.0
    box.choice.setCurrentIndex(box.choice.findData("none"))
    assert all(getattr(dynamics, name) is None for name in ("motor_stall_torque", "motor_no_load_speed",
                                                            "motor_rated_voltage", "motor_supply_voltage"))


def test_undo_takes_a_preset_back(window, demo_copy, answers):
    answers.open_path = str(demo_copy / "demo.prj")
    assert window.open_project()
    box = window.dynamics_tab.motor_box
    box.choice.setCurrentIndex(box.choice.findData(len(PRESETS) - 1))
    assert window.project.dynamics.motor_rated_voltage == PRESETS[-1].rated_voltage
    window.commands["undo"].trigger()
    assert window.project.dynamics.motor_stall_torque is None
    assert box.choice.currentData() == "none"


def test_the_motor_given_by_its_constants_is_the_same_motor(window, demo_copy, answers):
    """'Given as' constants writes kt = ke = V/ω_0 and R = kt·V/T_s (the same line: T_s = kt·V/R,
    ω_0 = V/ke), greys the stall torque and no-load speed (which show the motor's), and back again."""
    answers.open_path = str(demo_copy / "demo.prj")
    assert window.open_project()
    box = window.dynamics_tab.motor_box
    box.choice.setCurrentIndex(box.choice.findData(0))  # Pololu 37D 30:1: 330 RPM, 140 kg·mm at 12 V
    dynamics = window.project.dynamics
    stall, no_load = 0.140 * 9.80665, 330 * 2 * math.pi / 60
    box.form.setCurrentIndex(box.form.findData("constants"))
    assert dynamics.motor_stall_torque is None and dynamics.motor_no_load_speed is None
    assert dynamics.motor_back_emf_constant == pytest.approx(12.0 / no_load)
    assert dynamics.motor_torque_constant * 12.0 / dynamics.motor_resistance == pytest.approx(stall)
    assert not box.fields["motor_stall_torque"].isEnabled() and box.fields["motor_resistance"].isEnabled()
    assert box.fields["motor_no_load_speed"].value() == pytest.approx(330.0)  # shown, greyed
    assert box.choice.currentData() == "custom"
    box.fields["motor_resistance"].setValue(dynamics.motor_resistance * 2)  # half the stall torque
    box.form.setCurrentIndex(box.form.findData("curve"))
    assert dynamics.motor_torque_constant is None and dynamics.motor_stall_torque == pytest.approx(stall / 2, rel=1e-5)
    assert dynamics.motor_no_load_speed == pytest.approx(no_load)
    window.commands["undo"].trigger()
    undone = window.project.dynamics
    assert undone.motor_stall_torque is None and undone.motor_resistance is not None
    assert box.form.currentData() == "constants"
