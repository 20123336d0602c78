"""Fixed bodies (terrain, walls, trees, mass-0 boxes) never collide with each other; moving bodies (the
robot, boxes with mass) collide with everything; a movable box at rest sleeps until something touches it."""

from __future__ import annotations

import itertools

import numpy as np
import pybullet as p
import pytest

from sear.demo import make_body
from tests.physics.helpers import rover_project, run

BODY_FRONT = float(make_body().bounds[1][0])
"""How far the rover's chassis reaches ahead of its body origin, m (0.3)."""


def _contacts(world, a: int, b: int) -> int:
    return len(p.getContactPoints(a, b, physicsClientId=world.client))


def _overlap(world, a: int, b: int) -> bool:
    (alo, ahi), (blo, bhi) = (p.getAABB(x, physicsClientId=world.client) for x in (a, b))
    return bool(np.all(np.asarray(alo) < bhi) and np.all(np.asarray(blo) < ahi))


def test_fixed_bodies_never_touch_each_other_and_moving_ones_touch_everything(make_world, tmp_path):
    world = make_world(rover_project(tmp_path))
    wall = world.obstacles[world.add_wall(4.0, -3.0, 4.0, 3.0, height=1.0)].body_id
    sunk = world.obstacles[world.add_box(4.0, 0.0, 0.2, size=1.0, mass=0.0)].body_id  # through wall and ground
    tree = world.obstacles[world.add_tree(-4.0, 0.0)].body_ids
    mover = world.obstacles[world.add_box(3.66, 2.0, size=0.5, mass=2.0)].body_id  # 1 cm into the wall
    run(world, 0.5)
    fixed = [*world.terrain_ids, wall, sunk, *tree]
    pairs = [(a, b) for a, b in itertools.combinations(fixed, 2) if _overlap(world, a, b)]
    assert (world.terrain_ids[0], wall) in pairs and (wall, sunk) in pairs  # they do intersect
    assert [(a, b) for a, b in pairs if _contacts(world, a, b)] == []
    # Positive controls: the movable box rests on the ground and leans on the wall.
    assert _contacts(world, mover, world.terrain_ids[0]) > 0
    assert _contacts(world, mover, wall) > 0


def test_the_robot_stops_at_the_face_of_a_wall(make_world, tmp_path):
    world = make_world(rover_project(tmp_path))
    world.add_wall(2.0, -2.0, 2.0, 2.0, height=1.0, thickness=0.2)
    face = 2.0 - 0.2 / 2  # the wall's near face, from its centre line and thickness
    world.vehicles[0].accelerate(40.0)
    run(world, 4.0)
    state = world.vehicles[0].state()
    front = state.position[0] + BODY_FRONT
    assert np.linalg.norm(state.linear_velocity) < 0.05
    assert face - 0.05 < front <= face + 0.005  # stopped at the face, not short of it and not through it


def test_the_robot_pushes_a_1_kg_box(make_world, tmp_path):
    world = make_world(rover_project(tmp_path))
    box = world.obstacles[world.add_box(1.5, 0.0, size=0.4, mass=1.0)]
    run(world, 1.0)
    start, _ = world.obstacle_pose(box)
    world.vehicles[0].accelerate(40.0)
    run(world, 4.0)
    end, _ = world.obstacle_pose(box)
    front = world.vehicles[0].state().position[0] + BODY_FRONT
    # The robot reached the box (its front passed where the box's near face was) and shoved it along.
    assert front > start[0] - 0.2 + 0.5
    assert end[0] - start[0] > 0.5
    assert end[0] - 0.2 >= front - 0.02  # the box stays ahead of the robot's front


def test_a_movable_box_at_rest_sleeps_until_touched(make_world, tmp_path):
    world = make_world(rover_project(tmp_path))
    box = world.obstacles[world.add_box(1.5, 0.0, size=0.4, mass=1.0)]
    run(world, 3.0)
    # Bullet zeroes the velocity of a body it puts to sleep; an awake box at rest keeps a solver jitter.
    linear, angular = p.getBaseVelocity(box.body_id, physicsClientId=world.client)
    assert linear == (0.0, 0.0, 0.0) and angular == (0.0, 0.0, 0.0)
    before, _ = world.obstacle_pose(box)
    run(world, 0.5)
    assert np.array_equal(world.obstacle_pose(box)[0], before)
    world.vehicles[0].accelerate(40.0)  # the robot drives into it and wakes it
    run(world, 3.0)
    assert world.obstacle_pose(box)[0][0] - before[0] > 0.3


@pytest.mark.parametrize("mass", [0.0, 2.0])
def test_only_movable_boxes_are_outside_the_static_world(make_world, tmp_path, mass):
    world = make_world(rover_project(tmp_path))
    body = world.obstacles[world.add_box(2.0, 2.0, size=0.5, mass=mass)].body_id
    assert (body in world.static_world.bodies) == (mass == 0.0)
    assert world.terrain_ids[0] in world.static_world.bodies
