"""SEAR's drive proposal for URDF robots (issue 24 item 3): the drive type from the wheels, a force from the
URDF's mass, wheel places and friction, wheels whose axle does not lie across the robot refused by joint and
axis, and `sear validate` warning of a drive that cannot steer."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pybullet_data
import pytest
from lxml import etree

from sear.errors import ProjectError
from sear.loading import load_project
from sear.models.robotdesc.drive import drive_facts, propose_drive
from sear.models.robotdesc.parse import load_urdf
from sear.models.robotdesc.wheels import choose_wheels, propose_wheels
from sear.project import Project
from tests.physics.helpers import plane_mesh

DATA = Path(pybullet_data.getDataPath())
R2D2_WHEELS = ("right_front_wheel_joint", "right_back_wheel_joint", "left_front_wheel_joint", "left_back_wheel_joint")


def _urdf_masses(path: Path) -> float:
    """kg: every <inertial> mass of the file, and 1 kg for each link without one (pybullet's default),
    read straight from the XML."""
    root = etree.parse(str(path)).getroot()
    return sum(float(link.find("inertial/mass").get("value")) if link.find("inertial") is not None else 1.0
               for link in root.iterfind("link"))


def test_the_husky_is_proposed_skid_steer_with_the_force_its_turning_resistance_asks():
    desc = load_urdf(DATA / "husky" / "husky.urdf")
    facts = drive_facts(desc, propose_wheels(desc))
    proposal = propose_drive(facts)
    assert proposal is not None and proposal.drive_type == "skid"
    # husky.urdf: wheels at x ±0.256, y ±0.2854; their links' <contact> lateral_friction 1.0, the ground 0.5.
    assert facts.mass == pytest.approx(_urdf_masses(DATA / "husky" / "husky.urdf"))
    mu_m_g = 1.0 * 0.5 * facts.mass * 9.81
    # Each wheel holds F/4 along and the side force F·b/(4a) that keeps it from turning, within μ·m·g/4.
    breaks_loose = mu_m_g / math.sqrt(1 + (0.2854 / 0.256) ** 2)
    assert breaks_loose < proposal.engine_force <= mu_m_g
    assert proposal.engine_force == pytest.approx(1.25 * breaks_loose, abs=0.5)


def test_a_heavier_husky_is_proposed_a_larger_force(tmp_path):
    """Positive control that the force follows the URDF's mass (not a constant): the base link 4 times as
    heavy asks for proportionally more."""
    text = (DATA / "husky" / "husky.urdf").read_text().replace('<mass value="33.455"/>', '<mass value="133.82"/>')
    text = re.sub(r'filename="meshes/', f'filename="{DATA / "husky" / "meshes"}/', text)
    heavy = tmp_path / "heavy.urdf"
    heavy.write_text(text)
    light_desc, heavy_desc = load_urdf(DATA / "husky" / "husky.urdf"), load_urdf(heavy)
    light = propose_drive(drive_facts(light_desc, propose_wheels(light_desc)))
    big = propose_drive(drive_facts(heavy_desc, propose_wheels(heavy_desc)))
    assert light is not None and big is not None
    ratio = _urdf_masses(heavy) / _urdf_masses(DATA / "husky" / "husky.urdf")
    assert big.engine_force / light.engine_force == pytest.approx(ratio, rel=0.01)


def test_the_racecar_is_proposed_a_car():
    desc = load_urdf(DATA / "racecar" / "racecar.urdf")
    proposal = propose_drive(drive_facts(desc, propose_wheels(desc)))
    assert proposal is not None and proposal.drive_type == "car" and proposal.engine_force > 0


def test_two_wheels_and_a_caster_are_proposed_differential(tmp_path):
    """The diff-drive robot of docs/urdf.md: two wheels on continuous joints and a caster ball."""
    text = (Path(__file__).parents[2] / "docs" / "urdf.md").read_text()
    urdf = text[text.index('<?xml version="1.0"?>\n<robot name="diffbot">'):text.index("</robot>") + len("</robot>")]
    path = tmp_path / "diffbot.urdf"
    path.write_text(urdf)
    desc = load_urdf(path)
    proposal = propose_drive(drive_facts(desc, propose_wheels(desc)))
    assert proposal is not None and proposal.drive_type == "differential"


def test_r2d2s_sideways_wheels_are_refused_naming_each_joint_and_its_axis():
    desc = load_urdf(DATA / "r2d2.urdf")
    proposal = propose_wheels(desc)
    assert not proposal.left and not proposal.right
    assert [name for name, _ in proposal.refused] == list(R2D2_WHEELS)
    for name, why in proposal.refused:
        assert f"'{name}'" in why and "axis (1.00 0.00 0.00)" in why and "sideways" in why
    with pytest.raises(ProjectError) as raised:
        choose_wheels(desc, None, None, None)
    assert "right_front_wheel_joint" in raised.value.message and "(1.00 0.00 0.00)" in raised.value.message


def test_r2d2s_wheels_named_by_hand_are_refused_naming_the_joint_and_its_axis():
    desc = load_urdf(DATA / "r2d2.urdf")
    with pytest.raises(ProjectError) as raised:
        choose_wheels(desc, ("left_front_wheel_joint",), ("right_front_wheel_joint",), ())
    assert raised.value.field == "body.left_wheels"
    assert "'left_front_wheel_joint'" in raised.value.message and "(1.00 0.00 0.00)" in raised.value.message


def test_r2d2_turned_as_the_message_says_is_proposed_skid_steer(tmp_path):
    """The refusal's advice works: r2d2 under a new root link, turned 90° about z by a fixed joint, has its
    wheel axles along y and gets two wheels a side."""
    text = (DATA / "r2d2.urdf").read_text()
    text = text.replace('filename="', f'filename="{DATA}/')
    text = text.replace('<robot name="physics">', '<robot name="physics">\n  <link name="turned_base"/>\n'
                        '  <joint name="turn" type="fixed"><parent link="turned_base"/><child link="base_link"/>'
                        '<origin rpy="0 0 1.5708"/></joint>', 1)
    path = tmp_path / "r2d2_turned.urdf"
    path.write_text(text)
    desc = load_urdf(path)
    wheels = propose_wheels(desc)
    assert len(wheels.left) == 2 and len(wheels.right) == 2 and not wheels.refused
    proposal = propose_drive(drive_facts(desc, wheels))
    assert proposal is not None and proposal.drive_type == "skid"


def _project(folder: Path, urdf: Path, drive_type: str, force: float) -> Project:
    folder.mkdir(parents=True, exist_ok=True)
    plane_mesh(20.0).export(folder / "ground.obj")
    (folder / "user_code.py").write_text("def init(sim):\n    pass\n\n\ndef main_loop(sim):\n    pass\n")
    project = Project(name="drive")
    project.terrain.file = folder / "ground.obj"
    project.body.file = urdf
    project.code.user_code = folder / "user_code.py"
    project.dynamics.drive_type = drive_type
    project.dynamics.engine_force = force
    project.path = folder / "drive.prj"
    return project


def test_validate_warns_of_a_car_without_steering_joints_and_of_a_force_that_cannot_turn(tmp_path):
    husky = DATA / "husky" / "husky.urdf"
    car = load_project(_project(tmp_path / "car", husky, "car", 40.0))
    assert car.ok  # warnings, not problems: it still runs
    assert any("Car" in w and "no steering joint" in w for w in car.drive_warnings)
    assert any("40 N is below" in w for w in car.drive_warnings)
    weak = load_project(_project(tmp_path / "weak", husky, "skid", 40.0))
    assert [w for w in weak.drive_warnings if "below" in w] and not [w for w in weak.drive_warnings if "Car" in w]
    # control: the proposed drive draws no warning, nor does a racecar as a car
    assert load_project(_project(tmp_path / "ok", husky, "skid", 205.0)).drive_warnings == []
    assert load_project(_project(tmp_path / "rc", DATA / "racecar" / "racecar.urdf", "car", 4.0)).drive_warnings == []


def test_sear_validate_prints_the_warning(tmp_path, capsys):
    from sear.cli import main

    project = _project(tmp_path, DATA / "husky" / "husky.urdf", "car", 40.0)
    project.save(project.path)
    assert main(["validate", str(project.path)]) == 0
    out = capsys.readouterr().out
    assert "may not steer" in out and "no steering joint" in out and ": OK (" in out
