"""Rays of one robot's sensors against another robot: the caster tests the other robot's convex hull
itself (sear.collision.RobotHull) and must give what pybullet's own ray test gives for the same rays
(pybullet alone, engine="pybullet", as the reference), and never hit its own robot."""

from __future__ import annotations

import copy
import math

import numpy as np
import pybullet as p
import pytest

from sear.models.loaded import load_models
from sear.physics.world import World
from sear.sensors.raycast import RayCaster
from tests.physics.helpers import rover_project


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    project = rover_project(tmp_path_factory.mktemp("robots"))
    other = copy.deepcopy(project.robots[0])
    other.name = "other"
    other.body.start_east, other.body.start_north = 1.5, 0.7
    yaw = 0.7
    other.body.rotation = (0.0, 0.0, math.sin(yaw / 2), math.cos(yaw / 2))
    project.add_robot(other)
    world = World(project, load_models(project))
    for _ in range(240):  # settle: the other robot rests tilted a little on its suspension
        world.step()
    yield world
    world.close()


def test_hull_rays_match_pybullet(world: World) -> None:
    _mine, other = world.vehicles
    hull = world.static_world.robots.get(other.body_id)
    assert hull is not None  # the fast path is the one under test
    fast = RayCaster(world.client, world.robot_body_ids(0), world.static_world)
    reference = RayCaster(world.client, world.robot_body_ids(0), engine="pybullet")
    rng = np.random.default_rng(5)
    centre = np.asarray(other.state().position)
    starts = centre + rng.uniform(-2.0, 2.0, (3000, 3)) * (1.0, 1.0, 0.15) + (0.0, 0.0, 0.3)
    targets = centre + rng.uniform(-0.5, 0.5, (3000, 3)) * (1.0, 1.0, 0.3)
    ends = starts + (targets - starts) * 3.0
    got, want = fast.cast(starts, ends), reference.cast(starts, ends)
    direction = ends - starts
    length = np.linalg.norm(direction, axis=1)
    on_robot = want.body == other.body_id
    assert on_robot.sum() > 500 and (~on_robot).sum() > 100
    # Where the two disagree on hitting the robot, the ray grazes it: pybullet's hit lies within 1 mm of
    # the hull's planes (its own surface has rounded edges of its 1 mm margin).
    position, orientation = p.getBasePositionAndOrientation(other.body_id, physicsClientId=world.client)
    rotation = np.asarray(p.getMatrixFromQuaternion(orientation)).reshape(3, 3)
    differ = np.flatnonzero((got.body == other.body_id) != on_robot)
    assert len(differ) < 0.01 * on_robot.sum()
    hits = starts[differ] + direction[differ] * np.minimum(got.fraction, want.fraction)[differ, None]
    outside = ((hits - position) @ rotation @ hull.normals.T - hull.offsets).max(axis=1)
    assert np.all(np.abs(outside) < 0.001)
    # Rays that meet the robot squarely enough (incidence under 75°) hit the same surface: the two hits lie
    # within 1.5 mm of each other measured along the surface's normal (pybullet rounds the hull's edges by
    # its margin), and mostly on the very point.
    both = on_robot & (got.body == other.body_id)
    cosine = np.abs(np.einsum("ij,ij->i", want.normal, direction)) / length
    square = both & (cosine > math.cos(math.radians(75)))
    assert square.sum() > 500
    apart = np.abs((got.fraction - want.fraction) * length)
    assert (apart * cosine)[square].max() < 0.0015  # m
    assert np.median(apart[square]) < 1e-4
    same_normal = np.abs(got.normal - want.normal).max(axis=1) < 0.02
    assert same_normal[square].mean() > 0.98  # the rest hit an edge, whose normal pybullet rounds
    # The terrain behind is unchanged where neither hit the robot.
    neither = (got.body != other.body_id) & ~on_robot
    assert np.abs((got.fraction - want.fraction) * length)[neither].max() < 1e-6


@pytest.mark.parametrize("engine", ["auto", "pybullet"])
def test_a_robot_sees_the_other_and_never_itself(world: World, engine: str) -> None:
    """Rays through both robots, from either side: each robot's caster passes through its own body and
    stops at the other's, where pybullet's own ray stops when it starts between the two robots (past the
    caster's robot). The hull test (engine "auto") rounds no edges: within 2 mm of pybullet's hit."""
    first, second = (np.asarray(v.state().position) for v in world.vehicles)
    lift = np.linspace(-0.05, 0.05, 5)[:, None] * (0, 0, 1)
    for index, seen in ((0, 1), (1, 0)):
        near, far = (first, second) if index == 0 else (second, first)
        starts = near - (far - near) * 2.0 + lift  # behind robot `index`, looking through it at the other
        ends = starts + (far - near) * 5.0
        caster = RayCaster(world.client, world.robot_body_ids(index), world.static_world, engine=engine)
        result = caster.cast(starts, ends)
        assert (result.body == world.vehicles[seen].body_id).all(), index
        # The positive control: the first thing these rays hit is the caster's own robot.
        first_hits = p.rayTestBatch(starts, ends, physicsClientId=world.client)
        assert all(hit[0] == world.vehicles[index].body_id for hit in first_hits)
        middle = starts + (ends - starts) * 0.5  # halfway between the robots' centres, outside both
        from_middle = p.rayTestBatch(middle, ends, physicsClientId=world.client)
        assert all(hit[0] == world.vehicles[seen].body_id for hit in from_middle)
        want = 0.5 + 0.5 * np.array([hit[2] for hit in from_middle])
        length = float(np.linalg.norm(ends[0] - starts[0]))
        tolerance = 1e-9 if engine == "pybullet" else 0.002
        np.testing.assert_allclose(result.fraction * length, want * length, atol=tolerance)
