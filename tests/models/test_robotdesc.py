"""The pure URDF model (the sear.models.robotdesc package): real descriptions from pybullet_data, a URDF
written here whose links overlap, and one clear message for each kind of bad input."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pybullet_data
import pytest
import trimesh

from sear.errors import ProjectError
from sear.models.robotdesc.parse import load_urdf
from sear.models.robotdesc.report import collision_report
from sear.models.robotdesc.wheels import propose_wheels

DATA = Path(pybullet_data.getDataPath())
HUSKY = DATA / "husky" / "husky.urdf"
RACECAR = DATA / "racecar" / "racecar.urdf"


def test_husky_tree_and_wheels() -> None:
    desc = load_urdf(HUSKY)
    assert desc.root == "base_footprint"
    assert sorted(desc.subtree(desc.root)) == sorted(desc.links) and len(desc.links) == 11  # one tree
    inertial = desc.links["base_link"].inertial
    assert inertial is not None and inertial.mass == pytest.approx(33.455)
    wheels = propose_wheels(desc)
    assert {w.joint for w in wheels.left} == {"front_left_wheel", "rear_left_wheel"}
    assert {w.joint for w in wheels.right} == {"front_right_wheel", "rear_right_wheel"}
    assert wheels.steering == ()
    # The file's own numbers: wheel joint at x 0.256, y 0.2854 on base_link (z 0.03282 above it), and
    # base_link 0.14493 above base_footprint (chassis_joint); cylinder radius 0.17775, axis +y.
    front_left = next(w for w in wheels.left if w.joint == "front_left_wheel")
    assert front_left.centre == pytest.approx((0.256, 0.2854, 0.14493 + 0.03282))
    assert front_left.radius == pytest.approx(0.17775)
    assert front_left.forward_sign == 1.0
    # The wheels' bottoms are the lowest points: wheel centre height minus radius.
    assert desc.lowest_point() == pytest.approx(0.14493 + 0.03282 - 0.17775, abs=1e-6)


def test_racecar_wheels_and_steering() -> None:
    desc = load_urdf(RACECAR)
    wheels = propose_wheels(desc)
    assert {w.joint for w in wheels.left} == {"left_rear_wheel_joint", "left_front_wheel_joint"}
    assert {w.joint for w in wheels.right} == {"right_rear_wheel_joint", "right_front_wheel_joint"}
    assert set(wheels.steering) == {"left_steering_hinge_joint", "right_steering_hinge_joint"}
    # Wheel axis z turned by roll 90° is -y in the chassis; the file's axis is 0 0 -1, so +y: forward is +.
    assert all(w.forward_sign == 1.0 for w in wheels.wheels)
    assert all(w.radius == pytest.approx(0.05) for w in wheels.wheels)
    front = next(w for w in wheels.left if w.joint == "left_front_wheel_joint")
    assert front.centre[0] == pytest.approx(0.325)
    assert collision_report(desc) == []


ROBOT = """<?xml version="1.0"?>
<robot name="t">
  <link name="base">
    <inertial><mass value="{base_mass}"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial>
    <collision><geometry><box size="0.2 0.2 0.2"/></geometry></collision>
  </link>
  <link name="arm_a">
    <inertial><mass value="1"/><inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial>
    <collision><geometry><box size="0.2 0.2 0.2"/></geometry></collision>
  </link>
  <link name="arm_b">
    <inertial><mass value="1"/><inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial>
    <collision><geometry><box size="0.2 0.2 0.2"/></geometry></collision>
  </link>
  <joint name="ja" type="fixed"><parent link="base"/><child link="arm_a"/><origin xyz="0.3 0 0"/></joint>
  <joint name="jb" type="fixed"><parent link="base"/><child link="arm_b"/><origin xyz="{b_x} 0 0"/></joint>
</robot>
"""


def _write(tmp_path: Path, text: str, name: str = "robot.urdf") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_overlapping_links_are_named(tmp_path: Path) -> None:
    # arm_a spans x 0.2..0.4 and arm_b 0.35..0.55: a 0.05 m slab in common, so the largest ball in both
    # has a diameter of 0.05 m. base (x -0.1..0.1) touches neither non-adjacent... and is their parent.
    desc = load_urdf(_write(tmp_path, ROBOT.format(base_mass=10, b_x=0.45)))
    report = collision_report(desc)
    overlaps = [f for f in report if f.kind == "overlap"]
    assert [f.links for f in overlaps] == [("arm_a", "arm_b")]
    assert "'arm_a' and 'arm_b'" in overlaps[0].message and "50 mm" in overlaps[0].message
    assert report == overlaps


def test_links_apart_or_touching_or_adjacent_are_not_reported(tmp_path: Path) -> None:
    # arm_b at 0.5 touches arm_a (faces at x = 0.4) and at 0.6 lies apart; both are children of base,
    # which overlaps neither; a parent/child overlap (base and a child at 0.1) is left out as pybullet does.
    for b_x in (0.5, 0.6):
        assert collision_report(load_urdf(_write(tmp_path, ROBOT.format(base_mass=10, b_x=b_x)))) == []
    parent_child = ROBOT.format(base_mass=10, b_x=0.6).replace('<origin xyz="0.3 0 0"/>', '<origin xyz="0.1 0 0"/>')
    assert collision_report(load_urdf(_write(tmp_path, parent_child))) == []


@pytest.mark.parametrize("mass", [0, -2, 1500])
def test_suspicious_mass_is_reported(tmp_path: Path, mass: float) -> None:
    report = collision_report(load_urdf(_write(tmp_path, ROBOT.format(base_mass=mass, b_x=0.6))))
    assert [(f.kind, f.links) for f in report] == [("mass", ("base",))]
    assert f"{mass:g} kg" in report[0].message


def test_missing_and_unphysical_inertia_are_reported(tmp_path: Path) -> None:
    text = ROBOT.format(base_mass=10, b_x=0.6)
    text = text.replace('<inertial><mass value="1"/><inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" '
                        'izz="0.1"/></inertial>\n    <collision><geometry><box size="0.2 0.2 0.2"/></geometry>'
                        '</collision>\n  </link>\n  <link name="arm_b">',
                        '<collision><geometry><box size="0.2 0.2 0.2"/></geometry></collision>\n  </link>\n'
                        '  <link name="arm_b">', 1)
    text = text.replace('iyy="0.1" iyz="0" izz="0.1"', 'iyy="0.1" iyz="0" izz="0.5"')  # 0.5 > 0.1 + 0.1
    report = collision_report(load_urdf(_write(tmp_path, text)))
    assert sorted((f.kind, f.links) for f in report) == [("inertia", ("arm_a",)), ("inertia", ("arm_b",))]
    assert "no <inertial>" in next(f.message for f in report if f.links == ("arm_a",))


def test_open_collision_mesh_is_reported(tmp_path: Path) -> None:
    tube = trimesh.creation.annulus(r_min=0.04, r_max=0.05, height=0.1)
    keep = np.abs(tube.face_normals[:, 2]) < 0.5  # the two rings' walls without the end caps: open
    trimesh.Trimesh(tube.vertices, tube.faces[keep]).export(tmp_path / "tube.stl")
    closed = trimesh.creation.box(extents=(0.1, 0.1, 0.1))
    closed.export(tmp_path / "closed.stl")
    text = ROBOT.format(base_mass=10, b_x=0.6)
    text = text.replace('<link name="arm_a">\n    <inertial>', '<link name="arm_a">\n    <collision><geometry>'
                        '<mesh filename="tube.stl"/></geometry></collision>\n    <inertial>')
    text = text.replace('<link name="arm_b">\n    <inertial>', '<link name="arm_b">\n    <collision><geometry>'
                        '<mesh filename="closed.stl"/></geometry></collision>\n    <inertial>')
    report = collision_report(load_urdf(_write(tmp_path, text)))
    meshes = [f for f in report if f.kind == "mesh"]
    assert [f.links for f in meshes] == [("arm_a",)] and "tube.stl" in meshes[0].message


def test_package_paths_resolve_against_roots_and_the_urdf_folder(tmp_path: Path) -> None:
    (tmp_path / "mybot" / "meshes").mkdir(parents=True)
    trimesh.creation.box(extents=(0.1, 0.1, 0.1)).export(tmp_path / "mybot" / "meshes" / "b.stl")
    text = ROBOT.format(base_mass=10, b_x=0.6).replace(
        '<box size="0.2 0.2 0.2"/></geometry></collision>\n  </link>\n  <link name="arm_a">',
        '<mesh filename="package://mybot/meshes/b.stl"/></geometry></collision>\n  </link>\n  <link name="arm_a">')
    elsewhere = tmp_path / "other"
    elsewhere.mkdir()
    urdf = _write(elsewhere, text)
    with pytest.raises(ProjectError) as error:
        load_urdf(urdf)
    assert "package://mybot/meshes/b.stl" in error.value.message and error.value.line == 5
    assert error.value.field == "link 'base'" and str(urdf) in str(error.value)
    desc = load_urdf(urdf, package_roots=[tmp_path])
    assert desc.links["base"].collisions[0].mesh == tmp_path / "mybot" / "meshes" / "b.stl"
    assert str(tmp_path / "mybot" / "meshes" / "b.stl").encode() in desc.resolved
    # A ROS layout without roots: mybot/urdf/robot.urdf finds package://mybot/ above itself.
    (tmp_path / "mybot" / "urdf").mkdir()
    assert load_urdf(_write(tmp_path / "mybot" / "urdf", text)).links["base"].collisions[0].mesh is not None


BAD = {
    "malformed": ('<robot name="x">\n<link name="a">\n</robot>\n', 3, "not well-formed XML"),
    "missing link": ('<robot name="x">\n<link name="a"/>\n<joint name="j" type="fixed">\n<parent link="a"/>\n'
                     '<child link="nowhere"/>\n</joint>\n</robot>\n', 5, "'nowhere' does not exist"),
    "everything a child": ('<robot name="x">\n<link name="a"/>\n<link name="b"/>\n'
                           '<joint name="j1" type="fixed"><parent link="a"/><child link="b"/></joint>\n'
                           '<joint name="j2" type="fixed"><parent link="b"/><child link="a"/></joint>\n</robot>\n',
                           4, "no base link"),
    "two parts": ('<robot name="x">\n<link name="r"/>\n<link name="a"/>\n</robot>\n', 3, "joined to nothing"),
    "cycle": ('<robot name="x">\n<link name="r"/>\n<link name="a"/>\n<link name="b"/>\n'
              '<joint name="j1" type="fixed"><parent link="a"/><child link="b"/></joint>\n'
              '<joint name="j2" type="fixed"><parent link="b"/><child link="a"/></joint>\n</robot>\n', None,
              "loop"),
    "two parents": ('<robot name="x">\n<link name="r"/>\n<link name="a"/>\n'
                    '<joint name="j1" type="fixed"><parent link="r"/><child link="a"/></joint>\n'
                    '<joint name="j2" type="fixed"><parent link="r"/><child link="a"/></joint>\n</robot>\n', 5,
                    "child of two joints"),
    "missing mesh": ('<robot name="x">\n<link name="r">\n<visual><geometry>\n<mesh filename="gone.stl"/>\n'
                     '</geometry></visual>\n</link>\n</robot>\n', 4, "'gone.stl' was not found"),
    "bad number": ('<robot name="x">\n<link name="r"/>\n<link name="a"/>\n<joint name="j" type="fixed">\n'
                   '<origin xyz="0 zero 0"/><parent link="r"/><child link="a"/></joint>\n</robot>\n', 5,
                   "3 finite numbers"),
    "not a robot": ('<sdf/>\n', 1, "not a URDF"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_input_gives_one_clear_message(tmp_path: Path, case: str) -> None:
    text, line, words = BAD[case]
    path = _write(tmp_path, text)
    with pytest.raises(ProjectError) as error:
        load_urdf(path)
    assert error.value.file == path and words in error.value.message
    if line is not None:
        assert error.value.line == line
    if case == "cycle":
        assert "a -> b -> a" in error.value.message or "b -> a -> b" in error.value.message
