"""numba's ray kernels (sear.sensors.raykernels): the hits they give are the numpy path's to the bit, the
reference tests of moving bodies and of pybullet's own answers hold with them, and a process loads them
only once it has cast enough rays (or a batch big enough) to pay for loading numba."""

from __future__ import annotations

import numpy as np
import pybullet as p
import pytest

from sear.collision import StaticShape, StaticWorld
from sear.sensors import raykernels
from sear.sensors.embreescene import MovingScene
from sear.sensors.raycast import RayCaster
from tests.sensors import test_raycast as pybullet_reference
from tests.sensors import test_rays_moving as moving_reference

# The reference modules' fixtures, which the reference tests called here take:
from tests.sensors.test_raycast import scene as scene
from tests.sensors.test_rays_moving import scene as moving_scene  # noqa: F401

numba = pytest.importorskip("numba")


@pytest.fixture(scope="module")
def compiled_kernels() -> raykernels.Kernels:
    return raykernels.compile_kernels()


@pytest.fixture
def with_numba(compiled_kernels, monkeypatch):
    """Every cast in the test runs numba's kernels."""
    monkeypatch.setattr(raykernels, "_compiled", compiled_kernels)
    monkeypatch.setattr(raykernels, "_tried", True)
    return compiled_kernels


@pytest.fixture
def with_numpy(monkeypatch):
    """Every cast in the test runs the numpy path."""
    monkeypatch.setattr(raykernels, "_compiled", None)
    monkeypatch.setattr(raykernels, "_tried", True)


def _cube(body: int, centre, size: float, margin: float = 0.0) -> StaticShape:
    corners = np.array([[x, y, z] for x in (-1.0, 1.0) for y in (-1.0, 1.0) for z in (-1.0, 1.0)])
    faces = np.array([[0, 1, 3], [0, 3, 2], [4, 6, 7], [4, 7, 5], [0, 4, 5], [0, 5, 1],
                      [2, 3, 7], [2, 7, 6], [0, 2, 6], [0, 6, 4], [1, 5, 7], [1, 7, 3]])
    return StaticShape(body, corners * size / 2.0 + np.asarray(centre, dtype=float), faces, margin)


def _world() -> tuple[StaticWorld, np.ndarray, np.ndarray]:
    """A wavy terrain (a surface, hit from both sides) and solid cubes, one with a collision margin, and
    20,000 seeded rays: many start inside a cube (they pass out through its far side) or under the terrain."""
    n = 60
    xs = np.linspace(-30.0, 30.0, n)
    gx, gy = np.meshgrid(xs, xs)
    gz = 0.7 * np.sin(gx / 3.0) * np.cos(gy / 4.0)
    index = np.arange(n * n).reshape(n, n)
    faces = np.concatenate([
        np.column_stack([index[:-1, :-1].ravel(), index[:-1, 1:].ravel(), index[1:, 1:].ravel()]),
        np.column_stack([index[:-1, :-1].ravel(), index[1:, 1:].ravel(), index[1:, :-1].ravel()])])
    world = StaticWorld()
    world.add_terrain(StaticShape(1, np.column_stack([gx.ravel(), gy.ravel(), gz.ravel()]), faces))
    rng = np.random.default_rng(23)
    centres = np.column_stack([rng.uniform(-20.0, 20.0, (40, 2)), rng.uniform(0.0, 2.0, 40)])
    for i, centre in enumerate(centres):
        world.add_obstacle(_cube(2 + i, centre, float(rng.uniform(0.5, 3.0)), margin=0.04 if i % 5 == 0 else 0.0))
    rays = 20_000
    starts = np.column_stack([rng.uniform(-25.0, 25.0, (rays, 2)), rng.uniform(-1.0, 3.0, rays)])
    inside = rng.random(rays) < 0.3
    count = int(inside.sum())
    starts[inside] = centres[rng.integers(len(centres), size=count)] + rng.normal(scale=0.2, size=(count, 3))
    ends = starts + rng.normal(size=(rays, 3)) * [15.0, 15.0, 3.0]
    return world, starts, ends


def test_the_kernels_give_the_numpy_paths_hits_to_the_bit(compiled_kernels, monkeypatch):
    world, starts, ends = _world()
    client = p.connect(p.DIRECT)
    try:
        results = {}
        for name, chosen in (("numpy", None), ("numba", compiled_kernels)):
            monkeypatch.setattr(raykernels, "_compiled", chosen)
            monkeypatch.setattr(raykernels, "_tried", True)
            results[name] = RayCaster(client, [], world).cast(starts, ends)
    finally:
        p.disconnect(client)
    a, b = results["numpy"], results["numba"]
    hit = a.body >= 0
    assert 5_000 < hit.sum() < len(starts)  # hits and misses both
    assert len(np.unique(a.body[hit])) > 20  # the terrain and most cubes
    assert (a.normal[hit][:, 2] < 0.0).any()  # the terrain's underside, seen from below
    assert np.array_equal(a.fraction, b.fraction)
    assert np.array_equal(a.normal, b.normal)
    assert np.array_equal(a.body, b.body)


def test_rays_meet_a_cube_where_its_geometry_says_with_the_kernels(with_numba):
    # A cube of edge 2 m at the origin, rays along +x from x = -5 at heights and depths inside it: the
    # face x = -1 at t = 4 / 10; rays from inside it pass out through its far side unseen and miss.
    world = StaticWorld()
    world.add_obstacle(_cube(7, (0.0, 0.0, 0.0), 2.0))
    yz = np.random.default_rng(3).uniform(-0.99, 0.99, (500, 2))
    outside = np.column_stack([np.full(500, -5.0), yz])
    inside = np.column_stack([np.full(500, 0.3), yz])
    starts = np.concatenate([outside, inside])
    ends = starts + np.array([10.0, 0.0, 0.0])
    client = p.connect(p.DIRECT)
    try:
        cast = RayCaster(client, [], world).cast(starts, ends)
    finally:
        p.disconnect(client)
    np.testing.assert_allclose(cast.fraction[:500], 0.4, rtol=0, atol=1e-12)
    assert np.all(cast.body[:500] == 7)
    np.testing.assert_allclose(cast.normal[:500], np.tile([-1.0, 0.0, 0.0], (500, 1)), atol=1e-12)
    assert np.all(cast.fraction[500:] == 1.0) and np.all(cast.body[500:] == -1)


def test_embree_and_pybullet_agree_with_the_kernels(scene, with_numba):
    pybullet_reference.test_both_engines_agree_with_pybullet_alone(scene)


def test_a_3d_lidar_among_moving_bodies_with_the_kernels(moving_scene, with_numba):  # noqa: F811
    moving_reference.test_a_3d_lidar_reads_every_beam_among_moving_bodies(moving_scene)


def test_a_depth_camera_among_moving_bodies_with_the_kernels(moving_scene, with_numba):  # noqa: F811
    moving_reference.test_a_depth_camera_reads_each_pixels_depth_of_the_box_and_the_other_robot(moving_scene)


def test_cones_among_moving_bodies_with_the_kernels(moving_scene, with_numba):  # noqa: F811
    moving_reference.test_infrared_and_sonar_cones_read_their_nearest_beam(moving_scene)


def test_the_kernels_load_after_enough_rays_or_one_big_batch(monkeypatch):
    loads = []
    monkeypatch.setattr(raykernels, "load", lambda: loads.append(1) or None)
    for name, value in (("_compiled", None), ("_tried", False), ("_rays_cast", 0)):
        monkeypatch.setattr(raykernels, name, value)
    small = raykernels.LOAD_AT_BATCH - 1
    for _ in range((raykernels.LOAD_AFTER_RAYS - 1) // small):
        raykernels.count(small)
    assert loads == []  # fewer rays than LOAD_AFTER_RAYS: numpy's path still
    raykernels.count(small)
    assert loads == [1]
    monkeypatch.setattr(raykernels, "_rays_cast", 0)
    raykernels.count(raykernels.LOAD_AT_BATCH)
    assert loads == [1, 1]


def test_sear_no_numba_keeps_the_numpy_path(monkeypatch):
    for name, value in (("_compiled", None), ("_tried", False)):
        monkeypatch.setattr(raykernels, name, value)
    monkeypatch.setenv("SEAR_NO_NUMBA", "1")
    assert raykernels.load() is None
    monkeypatch.setenv("SEAR_NO_NUMBA", "0")
    assert raykernels.load() is not None  # the positive control: numba is installed here


def test_rays_in_a_bodys_frame_reach_the_world_frame_within_an_ulp(compiled_kernels):
    # A turned and moved body: each start and end at R x + p, worked out here in extended precision.
    rng = np.random.default_rng(8)
    quaternion = rng.normal(size=4)
    quaternion /= np.linalg.norm(quaternion)
    rotation = np.asarray(p.getMatrixFromQuaternion(quaternion)).reshape(3, 3)
    position = np.array([12.5, -40.25, 3.0])
    local_starts, local_ends = rng.normal(size=(1_000, 3)), rng.normal(size=(1_000, 3)) * 50.0
    starts, ends, direction = np.empty((1_000, 3)), np.empty((1_000, 3)), np.empty((1_000, 3))
    compiled_kernels.to_world(local_starts, local_ends, rotation, position, starts, ends, direction)
    exact = rotation.astype(np.longdouble)
    np.testing.assert_allclose(starts, local_starts.astype(np.longdouble) @ exact.T + position, rtol=0, atol=1e-12)
    np.testing.assert_allclose(ends, local_ends.astype(np.longdouble) @ exact.T + position, rtol=0, atol=1e-12)
    assert np.array_equal(direction, ends - starts)


def test_the_kernels_give_the_numpy_paths_hits_among_moving_bodies_to_the_bit(moving_scene, compiled_kernels,  # noqa: F811
                                                                                monkeypatch):
    # The moved and turned box and the other robot's hull, by rays from all around them, the first robot's
    # own body ignored or not.
    world, box = moving_scene
    rng = np.random.default_rng(31)
    starts = np.column_stack([rng.uniform(-3.0, 4.0, (20_000, 2)), rng.uniform(0.05, 1.2, 20_000)])
    ends = starts + rng.normal(size=(20_000, 3)) * [4.0, 4.0, 0.6]
    for ignore in ([], world.robot_body_ids(0)):
        results = {}
        for name, chosen in (("numpy", None), ("numba", compiled_kernels)):
            monkeypatch.setattr(raykernels, "_compiled", chosen)
            monkeypatch.setattr(raykernels, "_tried", True)
            results[name] = RayCaster(world.client, ignore, world.static_world).cast(starts, ends)
        a, b = results["numpy"], results["numba"]
        assert (a.body == box).sum() > 50
        assert (a.body == world.robot_body_ids(1)[0]).sum() > 50
        own = np.isin(a.body, world.robot_body_ids(0)).sum()
        assert own == 0 if ignore else own > 50
        assert np.array_equal(a.fraction, b.fraction)
        assert np.array_equal(a.normal, b.normal)
        assert np.array_equal(a.body, b.body)


def test_the_kernel_picks_the_rays_near_boxes_that_the_slab_test_picks(compiled_kernels, monkeypatch):
    # Segments from 0 to reach against boxes: a segment crosses a box when it enters every slab before it
    # leaves any (worked out here per ray and box, on boxes small and large, one of them flat).
    rng = np.random.default_rng(12)
    starts = rng.uniform(-10.0, 10.0, (4_000, 3))
    direction = rng.normal(size=(4_000, 3)) * 6.0
    direction[:200, 0] = 0.0  # rays parallel to a slab
    reach = rng.uniform(0.2, 1.0, 4_000)
    lows = rng.uniform(-8.0, 6.0, (12, 3))
    highs = lows + rng.uniform(0.1, 3.0, (12, 3))
    highs[0, 2] = lows[0, 2]
    expected = []
    for r in range(len(starts)):
        for low, high in zip(lows, highs, strict=True):
            enter, leave = 0.0, reach[r]
            for k in range(3):
                if direction[r, k] == 0.0:
                    if not low[k] <= starts[r, k] <= high[k]:
                        enter, leave = 1.0, 0.0
                    continue
                t1, t2 = sorted(((low[k] - starts[r, k]) / direction[r, k], (high[k] - starts[r, k]) / direction[r, k]))
                enter, leave = max(enter, t1), min(leave, t2)
            if enter <= leave:
                expected.append(r)
                break
    assert 100 < len(expected) < len(starts) - 100
    found = compiled_kernels.near_boxes(starts, direction, reach, lows, highs)
    assert found.tolist() == expected


def test_two_robots_rays_cast_together_hit_what_each_cast_alone_hits(moving_scene):  # noqa: F811
    # Each robot's rays from above its own body, downwards and towards the other robot: cast together
    # (one Embree call) and alone, the same hits to the bit; each sees the other and never itself.
    two_robots_cast_together_and_alone(moving_scene)


def test_with_the_kernels_two_robots_rays_meet_the_moving_bodies_in_one_cast(moving_scene, with_numba,  # noqa: F811
                                                                             monkeypatch):
    # With numba's kernels the robots' rays meet the moving bodies in one grouped cast (each passing its
    # own robot's hull): the same hits to the bit as each robot's own cast.
    grouped = []
    cast_grouped = MovingScene.cast_grouped

    def spy(self, *args, **kwargs):
        grouped.append(len(args[3]))
        return cast_grouped(self, *args, **kwargs)

    monkeypatch.setattr(MovingScene, "cast_grouped", spy)
    two_robots_cast_together_and_alone(moving_scene)
    assert grouped and grouped[0] > 300  # it ran, on rays of both robots near the other's hull


def two_robots_cast_together_and_alone(scene: tuple) -> None:
    world, _ = scene
    rng = np.random.default_rng(40)
    batches = []
    for index, other in ((0, 1), (1, 0)):
        mine = world.robot_body_ids(index)
        here = np.asarray(p.getBasePositionAndOrientation(mine[0], physicsClientId=world.client)[0])
        there = np.asarray(p.getBasePositionAndOrientation(world.robot_body_ids(other)[0],
                                                           physicsClientId=world.client)[0])
        starts = here + np.array([0.0, 0.0, 0.6]) + rng.normal(scale=0.05, size=(3_000, 3))
        targets = np.where(rng.random((3_000, 1)) < 0.5, here, there) + rng.normal(scale=0.2, size=(3_000, 3))
        ends = starts + (targets - starts) * 2.0
        batches.append((RayCaster(world.client, mine, world.static_world), starts, ends, None))
    together = RayCaster.cast_together(batches)
    for index, (caster, starts, ends, _) in enumerate(batches):
        alone = caster.cast(starts, ends)
        assert np.array_equal(together[index].fraction, alone.fraction)
        assert np.array_equal(together[index].normal, alone.normal)
        assert np.array_equal(together[index].body, alone.body)
        assert not np.isin(alone.body, world.robot_body_ids(index)).any()
        assert np.isin(alone.body, world.robot_body_ids(1 - index)).sum() > 300
