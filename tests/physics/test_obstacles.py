"""What sim.add_tree, add_box and add_wall build, measured with pybullet rays against the documented
geometry (docs/user-code.md, "Obstacle geometry"), each extent computed here from the call's numbers."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pybullet as p
import pytest

from sear.physics.world import World

from .helpers import plane_mesh, rover_project, run

SLOPE = math.radians(10.0)
"""The sloping test ground rises towards +x: z = x · tan(SLOPE)."""
TOL = 1e-3
CROWN_TOL = 3e-3
"""pybullet keeps a 1 mm collision margin around the convex crown mesh: 1 mm out along its surface
normal, 2.7 mm vertically on the cone's sloping side."""


@pytest.fixture
def ground_world(tmp_path, make_world):
    """Rover worlds on a plane rising `slope_deg` towards +x, each in a folder of its own."""
    folders = itertools.count()

    def make(slope_deg: float = 0.0) -> World:
        return make_world(rover_project(tmp_path / f"p{next(folders)}", terrain=plane_mesh(slope_deg=slope_deg)))

    return make


def _ray(world: World, start, end) -> tuple[int, np.ndarray]:
    """Body hit first by the ray from `start` to `end` (-1: none) and the hit point."""
    body, _, _, point, _ = p.rayTest(list(start), list(end), physicsClientId=world.client)[0]
    return body, np.array(point)


def _down(world: World, x: float, y: float) -> tuple[int, float]:
    body, point = _ray(world, (x, y, 50.0), (x, y, -50.0))
    return body, float(point[2])


def test_box_z_is_the_centre_of_the_cube(ground_world):
    world = ground_world()
    x, y, z, size = 3.0, -2.0, 1.5, 0.6
    box = world.obstacles[world.add_box(x, y, z, size=size, mass=0.0)].body_id
    half = size / 2
    assert _down(world, x, y) == (box, pytest.approx(z + half, abs=TOL))  # top
    body, bottom = _ray(world, (x, y, 0.05), (x, y, 50.0))
    assert body == box and bottom[2] == pytest.approx(z - half, abs=TOL)
    body, west = _ray(world, (x - 5.0, y, z), (x, y, z))
    assert body == box and west[0] == pytest.approx(x - half, abs=TOL)  # edges along x and y
    body, south = _ray(world, (x, y - 5.0, z), (x, y, z))
    assert body == box and south[1] == pytest.approx(y - half, abs=TOL)


def test_box_without_z_rests_on_level_ground_and_stays(ground_world):
    world = ground_world()
    x, y, size = -4.0, 5.0, 0.5
    box = world.obstacles[world.add_box(x, y, size=size, mass=2.0)].body_id
    assert _down(world, x, y) == (box, pytest.approx(size, abs=TOL))  # bottom on z = 0
    run(world, 1.0)
    assert _down(world, x, y) == (box, pytest.approx(size, abs=2e-3))  # neither fell nor jumped


def test_box_without_z_on_a_slope_starts_on_its_highest_ground(ground_world):
    world = ground_world(slope_deg=10.0)
    x, y, size = 4.0, 3.0, 0.6
    box = world.obstacles[world.add_box(x, y, size=size, mass=0.0)].body_id
    uphill_ground = (x + size / 2) * math.tan(SLOPE)
    assert _down(world, x, y) == (box, pytest.approx(uphill_ground + size, abs=TOL))


def _wall_footprint(x1, y1, x2, y2, thickness) -> np.ndarray:
    """Corners (4, 2) of a wall's footprint: the centre line extended by thickness/2 past each end."""
    length = math.hypot(x2 - x1, y2 - y1)
    u = np.array([x2 - x1, y2 - y1]) / length
    n = np.array([-u[1], u[0]])
    a, b = np.array([x1, y1]) - u * thickness / 2, np.array([x2, y2]) + u * thickness / 2
    return np.array([a - n * thickness / 2, a + n * thickness / 2, b - n * thickness / 2, b + n * thickness / 2])


def test_wall_extends_half_its_thickness_past_its_end_points(ground_world):
    world = ground_world()
    x1, y1, x2, y2, height, thickness = 1.0, 2.0, 5.0, 5.0, 0.8, 0.2  # 3-4-5: 5 m long
    wall = world.obstacles[world.add_wall(x1, y1, x2, y2, height=height, thickness=thickness)].body_id
    u = np.array([0.8, 0.6])
    n = np.array([-0.6, 0.8])
    z = height / 2
    for end, outward in ((np.array([x1, y1]), -u), (np.array([x2, y2]), u)):
        body, cap = _ray(world, (*(end + 2 * outward), z), (*end, z))
        assert body == wall and np.linalg.norm(cap[:2] - end) == pytest.approx(thickness / 2, abs=TOL)
    middle = np.array([(x1 + x2) / 2, (y1 + y2) / 2])
    for side in (n, -n):
        body, face = _ray(world, (*(middle + 2 * side), z), (*middle, z))
        assert body == wall and float((face[:2] - middle) @ side) == pytest.approx(thickness / 2, abs=TOL)
    assert _down(world, *middle) == (wall, pytest.approx(height, abs=TOL))
    # Just beyond the end cap there is only ground.
    beyond = np.array([x2, y2]) + u * (thickness / 2 + 0.01)
    assert _down(world, *beyond)[0] != wall


@pytest.mark.parametrize("end", [(4.0, 3.0), (1.0, 6.0), (-3.0, 1.0)])
def test_wall_on_a_slope_stands_on_the_lowest_ground_under_it(ground_world, end):
    world = ground_world(slope_deg=10.0)
    (x1, y1), (x2, y2), height, thickness = (-1.0, 2.0), end, 1.0, 0.3
    wall = world.obstacles[world.add_wall(x1, y1, x2, y2, height=height, thickness=thickness)].body_id
    lowest = _wall_footprint(x1, y1, x2, y2, thickness)[:, 0].min() * math.tan(SLOPE)
    middle = ((x1 + x2) / 2, (y1 + y2) / 2)
    assert _down(world, *middle) == (wall, pytest.approx(lowest + height, abs=TOL))  # the top is level


def test_tree_trunk_crown_and_height(ground_world):
    world = ground_world()
    x, y = 2.0, -3.0
    trunk, crown = world.obstacles[world.add_tree(x, y)].body_ids
    assert _down(world, x, y) == (crown, pytest.approx(4.5, abs=CROWN_TOL))  # the crown's tip
    body, point = _ray(world, (x - 3.0, y, 1.0), (x, y, 1.0))
    assert body == trunk and point[0] == pytest.approx(x - 0.15, abs=TOL)  # trunk 0.3 m wide
    body, point = _ray(world, (x, y - 3.0, 1.0), (x, y, 1.0))
    assert body == trunk and point[1] == pytest.approx(y - 0.15, abs=TOL)
    body, _ = _ray(world, (x - 3.0, y, 0.01), (x, y, 0.01))
    assert body == trunk  # from the ground up
    # The crown is a cone 2.4 m wide, its base 1.5 m up: 0.6 m off the axis it is 3 · (1 - 0.6/1.2) m tall.
    body, point = _ray(world, (x + 0.6, y, 0.05), (x + 0.6, y, 10.0))
    assert body == crown and point[2] == pytest.approx(1.5, abs=CROWN_TOL)
    assert _down(world, x + 0.6, y) == (crown, pytest.approx(1.5 + 3.0 * 0.5, abs=CROWN_TOL))
    body, _ = _ray(world, (x + 1.25, y, 0.05), (x + 1.25, y, 10.0))
    assert body != crown  # beyond its 1.2 m radius


def test_tree_on_a_slope_stands_on_the_downhill_edge_of_its_trunk(ground_world):
    world = ground_world(slope_deg=10.0)
    x, y = 3.0, 1.0
    _, crown = world.obstacles[world.add_tree(x, y)].body_ids
    foot = (x - 0.15) * math.tan(SLOPE)
    assert _down(world, x, y) == (crown, pytest.approx(foot + 4.5, abs=CROWN_TOL))
    above_ground = (x + 0.6) * math.tan(SLOPE) + 0.01
    body, point = _ray(world, (x + 0.6, y, above_ground), (x + 0.6, y, foot + 10.0))
    assert body == crown and point[2] == pytest.approx(foot + 1.5, abs=CROWN_TOL)
