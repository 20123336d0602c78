"""Fuzzing URDF files: every variant is refused with one ProjectError naming the file (and the line, for an
element), or it is read, its collision report and wheels are made without an exception, and pybullet's
URDF loader (as the simulation calls it) loads it: validation OK means the run starts.

A seeded RNG mutates a small robot (a base, two wheels, a caster, an arm of three links, a mesh link) one
to four times: attributes set to hostile values (nan, 1e999, negative, empty, too few numbers, a name of
300 bytes), elements removed or repeated (<inertia>, <mass>, <geometry>, <parent>, whole links and
joints), joint types and axes changed, loops and second parents made, and sometimes the robot grown
past the link limit. `make test-slow` (marker `slow`) checks all VARIANTS; the default tier the first
DEFAULT_VARIANTS.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
import trimesh
from lxml import etree

from sear.errors import ProjectError
from sear.models.loaded import urdf_robot_models
from sear.models.robotdesc.parse import MAX_LINKS, load_urdf
from sear.models.robotdesc.report import collision_report
from sear.models.robotdesc.wheels import choose_wheels
from tests.models.test_urdf_limits import _pybullet_loads

SEED = 20261127
VARIANTS = 300
DEFAULT_VARIANTS = 30

INERTIAL = '<inertial><mass value="1"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>'
BASE = f'''<?xml version="1.0"?>
<robot name="fuzz">
  <link name="base_link">{INERTIAL}
    <visual><geometry><box size="0.4 0.3 0.1"/></geometry></visual>
    <collision><geometry><box size="0.4 0.3 0.1"/></geometry></collision></link>
  <link name="left_wheel">{INERTIAL}
    <collision><origin rpy="1.5708 0 0"/><geometry><cylinder radius="0.08" length="0.04"/></geometry></collision></link>
  <link name="right_wheel">{INERTIAL}
    <collision><origin rpy="1.5708 0 0"/><geometry><cylinder radius="0.08" length="0.04"/></geometry></collision></link>
  <link name="caster">{INERTIAL}<collision><geometry><sphere radius="0.03"/></geometry></collision></link>
  <link name="arm1">{INERTIAL}<collision><geometry><box size="0.05 0.05 0.2"/></geometry></collision></link>
  <link name="arm2">{INERTIAL}<collision><geometry><box size="0.05 0.05 0.2"/></geometry></collision></link>
  <link name="sensor">{INERTIAL}<visual><geometry><mesh filename="part.stl" scale="0.1 0.1 0.1"/></geometry></visual>
    <collision><geometry><mesh filename="part.stl" scale="0.1 0.1 0.1"/></geometry></collision></link>
  <joint name="left_wheel_joint" type="continuous"><parent link="base_link"/><child link="left_wheel"/>
    <origin xyz="0.08 0.18 -0.02"/><axis xyz="0 1 0"/><limit effort="2" velocity="20"/></joint>
  <joint name="right_wheel_joint" type="continuous"><parent link="base_link"/><child link="right_wheel"/>
    <origin xyz="0.08 -0.18 -0.02"/><axis xyz="0 1 0"/></joint>
  <joint name="caster_joint" type="fixed"><parent link="base_link"/><child link="caster"/>
    <origin xyz="-0.15 0 -0.07"/></joint>
  <joint name="arm1_joint" type="revolute"><parent link="base_link"/><child link="arm1"/>
    <origin xyz="0 0 0.2"/><axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="5" velocity="1"/></joint>
  <joint name="arm2_joint" type="prismatic"><parent link="arm1"/><child link="arm2"/>
    <origin xyz="0 0 0.25"/><axis xyz="0 0 1"/><limit lower="0" upper="0.1" effort="5" velocity="1"/></joint>
  <joint name="sensor_joint" type="fixed"><parent link="arm2"/><child link="sensor"/>
    <origin xyz="0 0 0.15" rpy="0 0 0"/></joint>
</robot>
'''
HOSTILE = ("nan", "NaN", "inf", "-inf", "1e999", "-1e999", "0", "-1", "1e300", "-1e-320", "", " ", "1 2", "1 2 3 4",
           "abc", "0x10", "1,5", "y" * 300, "0 0 0", "1 1 1", "1e-12", "$(optenv NONE 1)", "$(env SEAR_NONE)")
TYPES = ("revolute", "continuous", "prismatic", "fixed", "floating", "planar", "hinge", "")


def _mutate(rng: random.Random, root: etree._Element) -> None:
    elements = [el for el in root.iter() if isinstance(el.tag, str) and el is not root]
    roll = rng.random()
    el = rng.choice(elements)
    if roll < 0.4 and el.attrib:
        el.set(rng.choice(list(el.attrib)), rng.choice(HOSTILE))
    elif roll < 0.55:
        el.getparent().remove(el)
    elif roll < 0.65:
        el.getparent().append(etree.fromstring(etree.tostring(el)))  # a repeated element: names used twice
    elif roll < 0.75:
        joint = rng.choice(root.findall("joint"))
        joint.set("type", rng.choice(TYPES))
    elif roll < 0.83:  # a loop or a second parent
        joint = rng.choice(root.findall("joint"))
        child = joint.find("child")
        if child is not None:
            child.set("link", rng.choice([link.get("name") for link in root.findall("link")]))
    elif roll < 0.9:  # an attribute taken away
        if el.attrib:
            del el.attrib[rng.choice(list(el.attrib))]
    elif roll < 0.95:  # a new element where it does not belong, or an unknown one
        el.append(etree.Element(rng.choice(("inertia", "mass", "geometry", "origin", "box", "unknown"))))
    else:  # grown past the link limit (or to it)
        for i in range(MAX_LINKS - len(root.findall("link")) + rng.choice((0, 1))):
            root.append(etree.fromstring(f'<link name="extra{i}"/>'))
            root.append(etree.fromstring(f'<joint name="extra_joint{i}" type="fixed"><parent link="base_link"/>'
                                         f'<child link="extra{i}"/></joint>'))


def variant(rng: random.Random) -> bytes:
    root = etree.fromstring(BASE.encode())
    for _ in range(rng.randint(1, 4)):
        _mutate(rng, root)
    return etree.tostring(root, xml_declaration=True, encoding="utf-8")


def _fuzz(tmp_path: Path, indices: range) -> tuple[int, int]:
    trimesh.creation.box(extents=(1, 1, 1)).export(tmp_path / "part.stl")
    rng = random.Random(SEED)
    texts = [variant(rng) for _ in range(VARIANTS)]
    read = loaded = 0
    for index in indices:
        path = tmp_path / f"v{index}.urdf"
        path.write_bytes(texts[index])
        try:
            desc = load_urdf(path)
        except ProjectError as exc:
            assert exc.file == path and exc.message, (index, exc)
            assert "Traceback" not in str(exc) and "Errno" not in str(exc), (index, str(exc))
            continue
        read += 1
        collision_report(desc)
        try:
            urdf_robot_models(desc, choose_wheels(desc, None, None, None))
        except ProjectError as exc:  # no wheels found, a wheel without its side: refused with a message
            assert exc.message
        assert _pybullet_loads(desc.resolved, tmp_path), (index, texts[index].decode())
        loaded += 1
    return read, loaded


def test_urdf_fuzz_default_tier(tmp_path):
    read, loaded = _fuzz(tmp_path, range(DEFAULT_VARIANTS))
    assert read >= 1 and loaded == read  # positive control: some variants are read, and pybullet loads each


@pytest.mark.slow
def test_urdf_fuzz_every_variant(tmp_path):
    read, loaded = _fuzz(tmp_path, range(VARIANTS))
    assert read >= 30 and loaded == read
