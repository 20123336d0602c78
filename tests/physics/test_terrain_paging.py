"""Terrain paging (issue 29): a height-grid terrain in pybullet only as collision tiles near the moving
bodies, loaded and dropped under a driving robot, while heights and the sensors' rays see the whole grid
on the same triangles.

The expected surface is built here from the DEM's own array: its triangles (each cell split along its
south-west to north-east diagonal, as docs/terrain.md says), intersected by brute force over every
triangle near the ray (numpy Möller-Trumbore), not by the grid walk under test.
"""

from __future__ import annotations

import math

import numpy as np
import pybullet as p
import pytest

from sear.models.loaded import load_models
from sear.physics.picking import pick
from sear.physics.terrainpager import Paging
from sear.physics.world import World
from sear.sensors.raycast import RayCaster
from tests.models.geotiff import write_dem

from .helpers import dem_cast, dem_height, rover_project

PIXEL = 0.5
SIDE = 161  # 80 m x 80 m


def hills(rows: int, cols: int) -> np.ndarray:
    y = np.arange(rows)[:, None] * PIXEL
    x = np.arange(cols)[None, :] * PIXEL
    return (120.0 + 1.5 * np.sin(x / 9.0) * np.cos(y / 11.0) + 0.6 * np.sin((x + y) / 5.0)).astype(np.float32)


@pytest.fixture
def dem_world(tmp_path):
    z = hills(SIDE, SIDE)
    path = tmp_path / "dem.tif"
    write_dem(path, z, pixel=PIXEL, utm=(17, 500_000.0, 3_900_000.0))
    project = rover_project(tmp_path / "rover")
    project.terrain.file = path
    paging = Paging(tile_cells=16, load_distance=3.0, drop_distance=6.0, move_before_update=0.25)  # 8 m tiles
    world = World(project, load_models(project), paging=paging)
    yield world, z
    world.close()


def test_tiles_load_and_drop_under_a_driving_robot_never_missing_under_a_wheel(dem_world):
    world, z = dem_world
    pager = world.pager
    assert pager is not None and world.terrain.mesh is not None  # small: paging forced
    start_tiles = set(pager.loaded)
    assert 1 <= len(start_tiles) <= 4  # 8 m tiles within 3 m of the start, not the 100 tiles of the map
    rover = world.vehicles[0]
    rover.accelerate(40.0)
    seen: set[tuple[int, int]] = set(start_tiles)
    wheel_points = 0
    for step in range(round(14.0 / world.dt)):
        world.step()
        seen |= set(pager.loaded)
        for wheel in rover.wheel_states().values():
            if wheel.hit_point is None:
                continue
            wheel_points += 1
            x, y = wheel.hit_point[0], wheel.hit_point[1]
            assert any(x0 - 1e-6 <= x <= x1 + 1e-6 and y0 - 1e-6 <= y <= y1 + 1e-6
                       for x0, x1, y0, y1 in map(pager.tile_box, pager.loaded)), (step, x, y)
            # the wheel's ray found the DEM's surface there
            assert wheel.hit_point[2] == pytest.approx(dem_height(z, PIXEL, x, y), abs=2e-4)
        # the pybullet bodies are the tiles the pager lists, and nothing farther than the drop distance
        assert set(world.terrain_ids[1:]) == set(pager.bodies)
    position = rover.state().position
    assert position[0] > 12.0  # it drove east across tiles
    assert wheel_points > 4 * 0.9 * round(14.0 / world.dt)
    assert pager.loads > len(start_tiles) and pager.drops > 0
    assert len(seen) > len(pager.loaded)
    for key in pager.loaded:  # every tile still in pybullet is within the drop distance of the robot
        x0, x1, y0, y1 = pager.tile_box(key)
        gap = math.hypot(max(x0 - position[0], 0, position[0] - x1), max(y0 - position[1], 0, position[1] - y1))
        assert gap <= pager.paging.drop_distance
    assert p.getNumBodies(physicsClientId=world.client) == 2 + len(pager.loaded)  # anchor, rover, tiles


def test_heights_and_sensor_rays_see_the_whole_dem_on_the_tiles_triangles(dem_world):
    world, z = dem_world
    pager = world.pager
    assert pager is not None
    rng = np.random.default_rng(5)
    xy = rng.uniform(-39.0, 39.0, (200, 2))
    heights = world.terrain_heights(xy)
    assert np.allclose(heights, [dem_height(z, PIXEL, x, y) for x, y in xy], atol=1e-9, rtol=0)
    caster = RayCaster(world.client, world.robot_body_ids(0), world.static_world)
    # rays from above the rover's place to points all over the map: most meet terrain with no tile
    robot = world.vehicles[0].state().position
    starts = np.tile(np.array([robot[0], robot[1], 130.0]), (120, 1))
    targets = np.column_stack([rng.uniform(-39, 39, (120, 2)), np.full(120, 110.0)])
    result = caster.cast(starts, targets)
    expected = np.array([dem_cast(z, PIXEL, s, e) for s, e in zip(starts, targets, strict=True)])
    assert (expected < 1.0).sum() > 100  # they do hit the terrain
    lengths = np.linalg.norm(targets - starts, axis=1)
    assert np.abs((result.fraction - expected) * lengths).max() < 1e-6  # metres
    hit = expected < 1.0
    assert np.all(result.body[hit] == world.terrain_ids[0])
    far = [i for i in np.flatnonzero(hit) if not any(
        x0 <= starts[i][0] + (targets[i][0] - starts[i][0]) * expected[i] <= x1
        and y0 <= starts[i][1] + (targets[i][1] - starts[i][1]) * expected[i] <= y1
        for x0, x1, y0, y1 in map(pager.tile_box, pager.loaded))]
    assert len(far) > 50  # hits where no collision tile is loaded: the grid walk found them
    # pybullet's own rays on the loaded tiles agree with the grid (the same triangles)
    near = np.column_stack([robot[0] + rng.uniform(-2, 2, 50), robot[1] + rng.uniform(-2, 2, 50)])
    down_s = np.column_stack([near, np.full(50, 140.0)])
    down_e = np.column_stack([near, np.full(50, 100.0)])
    pyb = RayCaster(world.client, world.robot_body_ids(0), world.static_world, engine="pybullet")
    tiles_only = p.rayTestBatch(down_s.tolist(), down_e.tolist(), physicsClientId=world.client)
    tile_z = np.array([h[3][2] for h in tiles_only if h[0] in pager.bodies])
    assert len(tile_z) > 30
    grid_z = 140.0 - 40.0 * pyb.cast(down_s, down_e).fraction
    mask = np.array([h[0] in pager.bodies for h in tiles_only])
    assert np.abs(grid_z[mask] - tile_z).max() < 2e-4  # pybullet's float32 triangles


def test_a_click_picks_the_terrain_where_no_tile_is_loaded(dem_world):
    world, z = dem_world
    pager = world.pager
    assert pager is not None
    start, end = np.array([30.0, 30.0, 150.0]), np.array([30.0, 30.0, 100.0])  # ~30 m from the rover's tiles
    assert not any(x0 <= 30.0 <= x1 and y0 <= 30.0 <= y1 for x0, x1, y0, y1 in map(pager.tile_box, pager.loaded))
    found = pick(world, start, end)
    assert found is not None and found.kind == "terrain"
    assert found.point[2] == pytest.approx(dem_height(z, PIXEL, 30.0, 30.0), abs=1e-9)
    assert pick(world, np.array([30.0, 30.0, 150.0]), np.array([30.0, 30.0, 140.0])) is None  # above it: nothing
