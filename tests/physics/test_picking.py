"""Picking and the mouse's pull (sear.physics.picking), against the world user code builds: a ray from
above names the object under it, and a pulled box slides to the target (its friction and mass as the
call made them), while a box left alone stays put."""

from __future__ import annotations

import numpy as np
import pybullet as p

from sear.physics.picking import Pull, body_mass, pick

from .helpers import plane_mesh, rover_project


def _world(tmp_path, make_world):
    return make_world(rover_project(tmp_path / "p", terrain=plane_mesh(slope_deg=0.0)))


def _steps(world, seconds: float, pull: Pull | None = None) -> None:
    for _ in range(round(seconds / world.dt)):
        if pull is not None:
            pull.apply()
        world.step()


def test_a_ray_from_above_names_the_box_the_wall_and_the_terrain(tmp_path, make_world):
    world = _world(tmp_path, make_world)
    box = world.add_box(4.0, 3.0, size=0.8, mass=5.0)
    wall = world.add_wall(-6.0, -8.0, 6.0, -8.0, height=1.0)
    found = pick(world, np.array([4.1, 2.9, 20.0]), np.array([4.1, 2.9, -20.0]))
    assert found is not None and (found.kind, found.index) == ("box", box)
    assert abs(found.point[2] - 0.8) < 0.01  # its top face, 0.8 m above the level ground
    found = pick(world, np.array([0.0, -8.0, 20.0]), np.array([0.0, -8.0, -20.0]))
    assert found is not None and (found.kind, found.index) == ("wall", wall)
    found = pick(world, np.array([10.0, 10.0, 20.0]), np.array([10.0, 10.0, -20.0]))
    assert found is not None and found.kind == "terrain"
    assert pick(world, np.array([0.0, 0.0, 50.0]), np.array([0.0, 0.0, 40.0])) is None  # only sky
    assert body_mass(world, world.obstacles[box].body_id) == 5.0
    assert body_mass(world, world.obstacles[wall].body_id) == 0.0


def test_a_pulled_box_slides_to_the_target_and_one_left_alone_stays(tmp_path, make_world):
    world = _world(tmp_path, make_world)
    pulled = world.obstacles[world.add_box(4.0, 3.0, size=0.8, mass=5.0)]
    alone = world.obstacles[world.add_box(-4.0, 3.0, size=0.8, mass=5.0)]
    _steps(world, 0.5)  # settle
    start = np.array(p.getBasePositionAndOrientation(pulled.body_id, physicsClientId=world.client)[0])
    still = np.array(p.getBasePositionAndOrientation(alone.body_id, physicsClientId=world.client)[0])
    grab = start + np.array([0.0, 0.0, 0.1])  # a point inside the box, above its centre
    pull = Pull(world, pulled.body_id, grab)
    pull.target = grab + np.array([-2.0, 0.0, 0.0])
    _steps(world, 4.0, pull)
    end = np.array(p.getBasePositionAndOrientation(pulled.body_id, physicsClientId=world.client)[0])
    assert np.linalg.norm(end[:2] - (start[:2] + np.array([-2.0, 0.0]))) < 0.3, end  # friction leaves a small lag
    assert abs(end[2] - start[2]) < 0.05  # slid, not lifted
    other = np.array(p.getBasePositionAndOrientation(alone.body_id, physicsClientId=world.client)[0])
    assert np.linalg.norm(other - still) < 1e-3
