"""The motor fields and presets (sear.motors): half-given motors refused by field, presets in SI with sources."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from sear.loading import load_project
from sear.motors import PRESETS, GearMotor, motor_of
from sear.project import Dynamics, Project


def test_a_motor_from_its_constants_has_the_textbook_ends():
    """kt = 0.02 N·m/A, ke = 0.02 V·s/rad, R = 2 Ω at 12 V behind 30:1 at 90 %: the motor stalls at
    kt·V/R = 0.12 N·m, 0.9 · 30 · 0.12 = 3.24 N·m at the output, and runs free at V/ke = 600 rad/s, 20 rad/s
    at the output."""
    motor = GearMotor.from_constants(kt=0.02, ke=0.02, resistance=2.0, voltage=12.0, internal_ratio=30.0,
                                     internal_efficiency=0.9)
    assert motor.stall_torque == pytest.approx(3.24)
    assert motor.no_load_speed == pytest.approx(20.0)
    assert motor.wheel_torque(1.0, 10.0) == pytest.approx(3.24 / 2)  # half the no-load speed: half the torque
    assert motor.wheel_torque(0.5, 0.0) == pytest.approx(3.24 / 2)  # half the voltage: half the stall torque
    assert motor.wheel_torque(2.0, 0.0) == pytest.approx(3.24)  # the duty is at most 1


@pytest.mark.parametrize(("index", "kg_mm", "rpm", "volts"), [(0, 140, 330, 12), (1, 210, 200, 12), (2, 10, 450, 12)])
def test_pololu_presets_are_their_datasheet_figures_in_si(index, kg_mm, rpm, volts):
    preset = PRESETS[index]
    assert preset.name.startswith("Pololu")
    assert preset.stall_torque == pytest.approx(kg_mm / 1000 * 9.80665)  # kgf·mm: standard gravity
    assert preset.no_load_speed == pytest.approx(rpm * 2 * math.pi / 60)
    assert preset.rated_voltage == volts
    assert f"{rpm} RPM" in preset.source


def test_the_mini_plastic_preset_converts_ounce_inches():
    preset = PRESETS[3]
    assert preset.stall_torque == pytest.approx(25 * 0.0283495231 * 9.80665 * 0.0254)  # ozf·in
    assert "25 oz·in" in preset.source


def test_every_preset_names_its_source():
    assert len(PRESETS) >= 3
    for preset in PRESETS:
        assert "pololu" in preset.source.lower() and ("http" in preset.source or "datasheet" in preset.source)


def test_no_motor_fields_no_motor_and_defaults_fill_in():
    assert motor_of(Dynamics()) is None
    motor = motor_of(replace(Dynamics(), motor_stall_torque=1.0, motor_no_load_speed=10.0, motor_rated_voltage=6.0))
    assert motor == GearMotor(1.0, 10.0, 6.0, 6.0, 1.0, 1.0)


def test_a_motor_without_its_no_load_speed_is_refused_naming_the_field(tmp_path):
    project = Project(name="m")
    project.dynamics.motor_stall_torque = 1.0
    project.dynamics.motor_rated_voltage = 12.0
    path = project.save(tmp_path / "m.prj")
    problems = load_project(path).problems
    motor = [p for p in problems if p.field == "dynamics.motor_no_load_speed"]
    assert len(motor) == 1 and "no-load speed is missing" in motor[0].message and motor[0].file == path
    project.dynamics.motor_no_load_speed = 20.0  # the positive control: a whole motor is no problem
    project.save(path)
    assert not [p for p in load_project(path).problems if (p.field or "").startswith("dynamics.motor")]


def test_an_impossible_efficiency_is_refused_naming_the_file_and_field(tmp_path):
    from sear.errors import ProjectError

    path = tmp_path / "e.prj"
    Project(name="e").save(path)
    text = path.read_text().replace("</dynamics>", "<motor_efficiency>1.5</motor_efficiency></dynamics>")
    path.write_text(text)
    with pytest.raises(ProjectError) as caught:
        Project.load(path)
    assert "motor_efficiency" in str(caught.value) and "e.prj" in str(caught.value)


def test_a_half_given_motor_is_refused_when_a_robot_is_built_from_a_bare_project():
    """Scripts and tests build worlds without loading: the robot's motor is refused there too, by field."""
    from sear.errors import ProjectError

    with pytest.raises(ProjectError) as caught:
        motor_of(replace(Dynamics(), motor_stall_torque=1.0, motor_no_load_speed=10.0))
    assert caught.value.field == "dynamics.motor_rated_voltage"


def test_a_motor_by_its_constants_is_the_motor_of_its_line():
    """kt, ke and R at the rated voltage V give the line T_s = kt·V/R, ω_0 = V/ke (Hughes & Drury ch. 3):
    the same GearMotor as those two figures, drive train included."""
    kt, ke, resistance, volts = 0.02, 0.025, 1.6, 12.0
    train = dict(motor_rated_voltage=volts, motor_supply_voltage=9.0, motor_gear_ratio=3.0, motor_efficiency=0.9)
    by_constants = motor_of(replace(Dynamics(), motor_torque_constant=kt, motor_back_emf_constant=ke,
                                    motor_resistance=resistance, **train))
    by_line = motor_of(replace(Dynamics(), motor_stall_torque=kt * volts / resistance,
                               motor_no_load_speed=volts / ke, **train))
    assert by_constants is not None and by_line is not None
    assert by_constants.wheel_stall_torque == pytest.approx(by_line.wheel_stall_torque)
    assert by_constants.wheel_no_load_speed == pytest.approx(by_line.wheel_no_load_speed)
    assert by_constants.wheel_stall_torque == pytest.approx(0.9 * 3.0 * kt * 9.0 / resistance)


def test_a_motor_given_both_ways_or_half_by_its_constants_is_refused_naming_the_field(tmp_path):
    from sear.errors import ProjectError

    whole = dict(motor_torque_constant=0.02, motor_back_emf_constant=0.025, motor_resistance=1.6,
                 motor_rated_voltage=12.0)
    assert motor_of(replace(Dynamics(), **whole)) is not None  # the positive control
    with pytest.raises(ProjectError) as caught:
        motor_of(replace(Dynamics(), **whole, motor_stall_torque=1.0))
    assert "both" in str(caught.value) and caught.value.field == "dynamics.motor_torque_constant"
    with pytest.raises(ProjectError) as caught:
        motor_of(replace(Dynamics(), **{**whole, "motor_resistance": None}))
    assert "resistance is missing" in str(caught.value) and caught.value.field == "dynamics.motor_resistance"
    project = Project(name="m")
    for name, value in whole.items():
        setattr(project.dynamics, name, value)
    project.dynamics.motor_back_emf_constant = None
    path = project.save(tmp_path / "m.prj")
    assert [p.field for p in load_project(path).problems
            if (p.field or "").startswith("dynamics.motor")] == ["dynamics.motor_back_emf_constant"]
