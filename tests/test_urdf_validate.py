"""`sear validate` on URDF bodies: the collision report printed (a warning, the project still valid), and
bad URDF input as one clear line naming the file, line and element, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pybullet_data
import pytest

from sear.cli import main
from sear.project import Project
from sear.sensors.files import load_sensors, save_sensors
from tests.models.test_robotdesc import BAD, ROBOT


def _urdf_demo(demo_copy: Path, urdf: Path) -> Path:
    project = Project.load(demo_copy / "demo.prj")
    project.body.file = urdf
    return project.save()


WHEELS = """  <link name="wheel_l">
    <inertial><mass value="1"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>
    <collision><origin rpy="1.5708 0 0"/><geometry><cylinder radius="0.1" length="0.05"/></geometry></collision>
  </link>
  <link name="wheel_r">
    <inertial><mass value="1"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>
    <collision><origin rpy="1.5708 0 0"/><geometry><cylinder radius="0.1" length="0.05"/></geometry></collision>
  </link>
  <joint name="jl" type="continuous"><parent link="base"/><child link="wheel_l"/><origin xyz="0 0.2 0"/>
    <axis xyz="0 1 0"/></joint>
  <joint name="jr" type="continuous"><parent link="base"/><child link="wheel_r"/><origin xyz="0 -0.2 0"/>
    <axis xyz="0 1 0"/></joint>
</robot>"""


def test_validate_prints_the_overlapping_pair(demo_copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    urdf = demo_copy / "robot.urdf"
    # arm_a and arm_b overlap by 50 mm; the two wheels are children of base, which they overlap.
    urdf.write_text(ROBOT.format(base_mass=10, b_x=0.45).replace("</robot>", WHEELS))
    assert main(["validate", str(_urdf_demo(demo_copy, urdf))]) == 0
    out = capsys.readouterr().out
    assert "collision report of the URDF (1 finding(s))" in out
    assert "links 'arm_a' and 'arm_b' overlap at the zero pose" in out
    assert "OK" in out and "URDF robot 't' (5 links)" in out


def test_validate_of_the_husky_reports_nothing_and_accepts_it(demo_copy: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    husky = Path(pybullet_data.getDataPath()) / "husky" / "husky.urdf"
    assert main(["validate", str(_urdf_demo(demo_copy, husky))]) == 0
    out = capsys.readouterr().out
    assert "collision report" not in out and "URDF robot 'husky_robot' (11 links)" in out


@pytest.mark.parametrize("case", ["malformed", "missing link", "cycle", "missing mesh"])
def test_validate_names_bad_urdf_input_in_one_line(demo_copy: Path, capsys: pytest.CaptureFixture[str],
                                                    case: str) -> None:
    text, line, words = BAD[case]
    urdf = demo_copy / "bad.urdf"
    urdf.write_text(text)
    assert main(["validate", str(_urdf_demo(demo_copy, urdf))]) == 1
    err = capsys.readouterr().err
    assert "1 problem(s)" in err and "Traceback" not in err
    problem = next(row for row in err.splitlines() if row.startswith("  - "))
    assert str(urdf) in problem and words in problem
    if line is not None:
        assert f"line {line}" in problem


def test_validate_names_a_wheel_joint_the_urdf_lacks(demo_copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    project = Project.load(_urdf_demo(demo_copy, Path(pybullet_data.getDataPath()) / "husky" / "husky.urdf"))
    project.body.left_wheels = "front_left_wheel rear_left_whel"
    project.save()
    assert main(["validate", str(project.path)]) == 1
    err = capsys.readouterr().err
    assert "Robot Body Model: left wheels: the left wheel joint 'rear_left_whel' is not a joint of husky.urdf" in err


def test_validate_refuses_a_sensor_link_on_a_mesh_body(demo_copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Positive control first: the demo (a mesh body, no <link>) is valid.
    assert main(["validate", str(demo_copy / "demo.prj")]) == 0
    sensors = load_sensors(demo_copy / "sensors.xml")
    sensors[0].link = "base_link"
    save_sensors(demo_copy / "sensors.xml", sensors)
    assert main(["validate", str(demo_copy / "demo.prj")]) == 1
    err = capsys.readouterr().err
    assert f"sensor '{sensors[0].name}' is mounted on link 'base_link', but the robot body is a mesh" in err


def test_validate_says_xacro_is_not_expanded(demo_copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    xacro = demo_copy / "robot.urdf.xacro"
    xacro.write_text('<robot name="x" xmlns:xacro="http://www.ros.org/wiki/xacro"><link name="a"/></robot>\n')
    assert main(["validate", str(_urdf_demo(demo_copy, xacro))]) == 1
    err = capsys.readouterr().err
    assert "xacro files are not expanded by SEAR" in err and "1 problem(s)" in err
