"""The simulation builds a project's <world> (sear.physics.world.World.build_scene) where the file says:
positions read back from pybullet and rays cast at the obstacles against the numbers the scene gives,
worked out here by hand on flat ground."""

from __future__ import annotations

import math

import numpy as np
import pybullet as p
import pytest

from sear.project import Project
from sear.scene import Box, Scene, Shelf, Table, Tree, Wall
from sear.sensors.raycast import RayCaster

from .helpers import rover_project, run

SCENE = Scene(
    boxes=[Box(name="crate", x=3.0, y=0.0, yaw=math.pi / 4, size=1.0, mass=2.5),
           Box(name="pillar", x=-2.0, y=3.0, z=1.2, fixed=True, size=0.3)],
    walls=[Wall(name="north", x=0.0, y=6.0, yaw=0.0, length=8.0, height=1.2, thickness=0.2),
           Wall(name="east", x=7.0, y=0.0, yaw=math.pi / 2, length=4.0, height=1.0, thickness=0.2),
           Wall(name="loose", x=10.0, y=5.0, length=2.0, height=1.0, thickness=0.2, fixed=False, mass=20.0)],
    tables=[Table(name="desk", x=-3.0, y=0.0, yaw=math.pi / 2, width=1.4, depth=0.7, height=0.72),
            Table(name="trolley", x=-10.0, y=5.0, width=1.0, depth=0.6, height=0.8, fixed=False, mass=8.0)],
    trees=[Tree(name="oak", x=-6.0, y=-6.0)],
    shelves=[Shelf(name="rack", x=0.0, y=-4.0, width=1.0, depth=0.4, height=1.6, levels=4),
             Shelf(name="cart", x=0.0, y=-8.0, width=1.0, depth=0.4, height=1.6, levels=4, fixed=False, mass=12.0)],
)


@pytest.fixture
def world(tmp_path, make_world):
    project = rover_project(tmp_path)
    project.world = SCENE
    project.save(tmp_path / "room.prj")
    return make_world(Project.load(tmp_path / "room.prj"))  # as a run reads it: from the file


def _named(world, name):
    (obstacle,) = [o for o in world.obstacles if o.name == name]
    return obstacle


def _pose(world, body):
    position, orientation = p.getBasePositionAndOrientation(body, physicsClientId=world.client)
    return np.asarray(position), p.getEulerFromQuaternion(orientation)[2]


def _distance(world, start, end):
    caster = RayCaster(world.client, world.robot_body_ids(0), world.static_world)
    result = caster.cast(np.array([start], dtype=float), np.array([end], dtype=float))
    return float(result.fraction[0]) * float(np.linalg.norm(np.subtract(end, start)))


def test_every_obstacle_of_the_file_is_built_under_its_name(world):
    assert sorted(o.name for o in world.obstacles) == sorted(o.name for o in SCENE.obstacles())
    assert {o.name: o.kind for o in world.obstacles} == {
        "crate": "box", "pillar": "box", "north": "wall", "east": "wall", "loose": "wall", "desk": "table",
        "trolley": "table", "oak": "tree", "rack": "shelf", "cart": "shelf"}


def test_bodies_sit_where_the_file_says(world):
    position, yaw = _pose(world, _named(world, "crate").body_id)  # on the ground: centre half an edge up
    assert position == pytest.approx([3.0, 0.0, 0.5], abs=1e-6) and yaw == pytest.approx(math.pi / 4, abs=1e-6)
    assert p.getDynamicsInfo(_named(world, "crate").body_id, -1, physicsClientId=world.client)[0] == 2.5
    position, _ = _pose(world, _named(world, "pillar").body_id)  # fixed, its centre at the z given
    assert position == pytest.approx([-2.0, 3.0, 1.2], abs=1e-6)
    assert p.getDynamicsInfo(_named(world, "pillar").body_id, -1, physicsClientId=world.client)[0] == 0.0
    position, yaw = _pose(world, _named(world, "east").body_id)
    assert position == pytest.approx([7.0, 0.0, 0.5], abs=1e-6) and yaw == pytest.approx(math.pi / 2, abs=1e-6)
    # Its south end: the centre line ends at y = -2, the wall half its thickness further.
    assert _distance(world, (7.0, -5.0, 0.5), (7.0, 5.0, 0.5)) == pytest.approx(2.9, abs=1e-4)
    position, _ = _pose(world, _named(world, "oak").body_id)  # the trunk's frame is 1 m up its axis
    assert position == pytest.approx([-6.0, -6.0, 1.0], abs=1e-6)
    desk = _named(world, "desk")
    position, _ = _pose(world, desk.body_ids[0])  # the top: its upper face 0.72 m up, 4 cm thick
    assert position == pytest.approx([-3.0, 0.0, 0.70], abs=1e-6)
    # The legs, turned a quarter: the 1.4 m width runs north, the 0.7 m depth west-east.
    legs = sorted(tuple(np.round(_pose(world, body)[0][:2], 6)) for body in desk.body_ids[1:])
    assert legs == sorted((-3.0 + sx * 0.325, sy * 0.675) for sx in (1, -1) for sy in (1, -1))


def test_rays_see_the_obstacles_at_their_faces(world):
    # North wall: centre line at y = 6, 0.2 m thick: its south face at y = 5.9, 1.2 m tall.
    assert _distance(world, (0.0, 0.0, 0.6), (0.0, 20.0, 0.6)) == pytest.approx(5.9, abs=1e-4)
    assert _distance(world, (0.0, 0.0, 1.3), (0.0, 20.0, 1.3)) == pytest.approx(20.0)  # above it: nothing
    # East wall: turned north, centre line at x = 7 from y = -2 to 2 (plus 0.1 m): west face at x = 6.9.
    assert _distance(world, (4.0, 1.5, 0.5), (20.0, 1.5, 0.5)) == pytest.approx(2.9, abs=1e-4)
    # The desk's top, turned: 1.4 m along y, 0.7 m along x; upper face 0.72 m up.
    assert _distance(world, (-3.0, 0.6, 2.0), (-3.0, 0.6, -1.0)) == pytest.approx(2.0 - 0.72, abs=1e-4)
    assert _distance(world, (-3.0, 0.8, 2.0), (-3.0, 0.8, -1.0)) == pytest.approx(2.0, abs=1e-4)  # beside: ground
    # The rack: its top board flush with 1.6 m; its west side panel's outer face at x = -0.5.
    assert _distance(world, (0.0, -4.0, 2.0), (0.0, -4.0, -1.0)) == pytest.approx(0.4, abs=1e-4)
    assert _distance(world, (-3.0, -4.0, 0.3), (3.0, -4.0, 0.3)) == pytest.approx(2.5, abs=1e-4)
    # The boards: 4 of them from the ground to the top, so between the lowest two (up to 0.02 m and from
    # 0.52 m) a ray down the middle from 0.5 m meets the lowest board's upper face, 0.02 m up.
    assert _distance(world, (0.0, -4.0, 0.5), (0.0, -4.0, -1.0)) == pytest.approx(0.48, abs=1e-4)


def test_movable_obstacles_stand_still_and_weigh_their_mass(world):
    for name, mass in (("cart", 12.0), ("loose", 20.0), ("trolley", 8.0)):
        movable = _named(world, name)
        assert movable.dynamic and len(movable.body_ids) == 1, name
        assert p.getDynamicsInfo(movable.body_id, -1, physicsClientId=world.client)[0] == mass, name
    assert not _named(world, "rack").dynamic  # positive control: the fixed shelf is static parts
    run(world, 1.0)
    # Still standing where they were put: the trolley's top 0.8 m up, the loose wall's south face at y = 4.9.
    assert _distance(world, (-10.0, 5.0, 2.0), (-10.0, 5.0, -1.0)) == pytest.approx(1.2, abs=2e-3)
    assert _distance(world, (10.0, 0.0, 0.5), (10.0, 10.0, 0.5)) == pytest.approx(4.9, abs=2e-3)
    # Still standing where it was put: the top board flush with 1.6 m, the west panel at x = -0.5.
    assert _distance(world, (0.0, -8.0, 2.0), (0.0, -8.0, -1.0)) == pytest.approx(0.4, abs=2e-3)
    assert _distance(world, (-3.0, -8.0, 0.3), (3.0, -8.0, 0.3)) == pytest.approx(2.5, abs=2e-3)


def test_user_code_obstacles_still_come_after_the_files(world):
    before = len(world.obstacles)
    index = world.add_box(10.0, 10.0, size=0.5, mass=0.0)
    assert index == before and world.obstacles[index].name == ""
    assert _distance(world, (10.0, 8.0, 0.25), (10.0, 12.0, 0.25)) == pytest.approx(1.75, abs=1e-4)
