"""A world with several mesh vehicles casts all their wheel rays in one batch per step (World.step): each
robot must still roll on its own wheels' hits. A robot's motion cannot depend on another robot 30 m away
that it never touches, so the robot driven alone is the reference for the same robot beside another that
turns hard and brakes on a hill of its own."""

from __future__ import annotations

import copy
import math

import numpy as np

from sear.physics.world import World

from .helpers import plane_mesh, rover_project


def _positions(world: World, seconds: float, robots: int) -> np.ndarray:
    """Chassis positions of the first `robots` robots after each step for `seconds`, (steps, robots, 3), m."""
    out = []
    for index in range(round(seconds / world.dt)):
        if index == round(1.0 / world.dt) and len(world.vehicles) > 1:
            world.vehicles[1].steer(-1.0)
            world.vehicles[1].brake(40.0)
        world.step()
        out.append([world.vehicles[i].state().position for i in range(robots)])
    return np.array(out)


def test_each_robot_rolls_on_its_own_wheels_when_their_rays_share_a_batch(tmp_path, make_world):
    # A 6° slope along x: the second robot, 30 m up it, sits 3.2 m higher than the first, so a hit of its
    # wheels given to the first robot (or the other way round) would throw both about.
    project = rover_project(tmp_path / "two", terrain=plane_mesh(slope_deg=6.0))
    project.robot_name = "near"
    project.body.rotation = (0.0, 0.0, math.sin(math.pi / 4), math.cos(math.pi / 4))  # facing north, across
    far = copy.deepcopy(project.robots[0])
    far.name = "far"
    far.body.start_east = 30.0
    project.add_robot(far)
    two = make_world(project)
    alone = make_world(rover_project(tmp_path / "alone", terrain=plane_mesh(slope_deg=6.0)))
    alone.vehicles[0].reset(*(tuple(v) for v in two.start_poses[0]))
    for world in (two, alone):
        world.vehicles[0].accelerate(60.0)
        world.vehicles[0].steer(0.3)
    for world in (two,):
        world.vehicles[1].accelerate(60.0)
    together = _positions(two, 3.0, 2)
    reference = _positions(alone, 3.0, 1)
    assert np.linalg.norm(reference[-1, 0] - reference[0, 0]) > 1.0  # it drove
    assert np.max(np.abs(together[:, 0] - reference[:, 0])) <= 1e-9
    # ... and the far robot drove too, on its own part of the hill: its height above the slope's surface
    # (z - x tan 6°) stayed that of a robot on its wheels.
    far = together[:, 1]
    assert np.linalg.norm(far[-1, :2] - far[0, :2]) > 2.0
    clearance = far[:, 2] - far[:, 0] * math.tan(math.radians(6.0))
    assert np.ptp(clearance[round(0.5 / two.dt):]) < 0.05
