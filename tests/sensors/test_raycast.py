"""The sensors' ray caster: Embree for the fixed world and pybullet near moving bodies give pybullet's own
results, with normals and the body hit; any number of rays; pybullet alone where embreex is missing."""

from __future__ import annotations

import sys
import warnings

import numpy as np
import pybullet as p
import pytest

from sear.collision import StaticShape, StaticWorld
from sear.models.loaded import load_models
from sear.physics.world import World
from sear.project import Project
from sear.resources import demo_project
from sear.sensors import raycast
from sear.sensors.raycast import MAX_BATCH, RayCaster

RAYS = 100_000


@pytest.fixture(scope="module")
def scene():
    """The demo terrain with fixed walls, trees and boxes (one of them tilted) and movable boxes, some at
    rest and some falling, plus the robot; 100,000 seeded rays, half of them aimed at obstacles."""
    project = Project.load(demo_project())
    world = World(project, load_models(project))
    try:
        for i in range(6):
            world.add_wall(-10.0 + 4.0 * i, 12.0, -8.0 + 4.0 * i, 15.0, height=1.0 + 0.3 * i)
            world.add_tree(-20.0 + 7.0 * i, -12.0)
            world.add_box(-15.0 + 6.0 * i, 5.0, size=0.5 + 0.2 * i, mass=0.0)
            world.add_box(-15.0 + 6.0 * i, -4.0, size=0.6, mass=2.0)
            world.add_box(-15.0 + 6.0 * i, 0.0, 3.0 + i, size=0.8, mass=1.0)
        tilted = world.obstacles[world.add_box(10.0, 10.0, 1.0, size=1.0, mass=0.0)].body_id
        p.resetBasePositionAndOrientation(tilted, (10.0, 10.0, 1.0), p.getQuaternionFromEuler((0.3, 0.2, 0.5)),
                                          physicsClientId=world.client)
        # The static world is told where the tilted box is now (user code cannot move fixed bodies).
        shape = next(s for s in world.static_world.obstacles if s.body == tilted)
        rotation = np.asarray(p.getMatrixFromQuaternion(p.getQuaternionFromEuler((0.3, 0.2, 0.5)))).reshape(3, 3)
        import trimesh

        cube = trimesh.creation.box(extents=(1.0, 1.0, 1.0))
        shape.vertices = np.asarray(cube.vertices) @ rotation.T + (10.0, 10.0, 1.0)
        world.static_world.version += 1
        for _ in range(30):  # the falling boxes are in the air, moving
            world.step()
        rng = np.random.default_rng(15)
        lo, hi = world.terrain.mesh.bounds
        starts = np.column_stack([rng.uniform(lo[0] + 5, hi[0] - 5, RAYS), rng.uniform(lo[1] + 5, hi[1] - 5, RAYS),
                                  np.zeros(RAYS)])
        starts[:, 2] = np.concatenate([world.terrain_heights(starts[i:i + 10_000, :2])
                                       for i in range(0, RAYS, 10_000)]) + rng.uniform(0.05, 4.0, RAYS)
        direction = rng.normal(size=(RAYS, 3))
        targets = np.array([world.obstacle_pose(o)[0] + (0, 0, o.size[2] / 2) for o in world.obstacles])
        length = rng.uniform(0.5, 30.0, RAYS)
        aimed = rng.random(RAYS) < 0.5
        direction[aimed] = (targets[rng.integers(len(targets), size=aimed.sum())]
                            + rng.normal(scale=0.5, size=(aimed.sum(), 3)) - starts[aimed])
        length[aimed] = np.linalg.norm(direction[aimed], axis=1) + rng.uniform(0.5, 5.0, aimed.sum())
        direction /= np.linalg.norm(direction, axis=1)[:, None]
        ends = starts + direction * length[:, None]
        yield world, starts, ends
    finally:
        world.close()


def _edge_distance(points: np.ndarray, world: World) -> np.ndarray:
    """Distance (m) from each point to the nearest edge of any triangle of the fixed world or of any
    movable box (its 12 edges from its pose), worked out here from the geometry."""
    segments = []
    for shape in world.static_world.terrain + world.static_world.obstacles:
        tri = shape.vertices[shape.faces]
        segments += [np.stack([tri[:, i], tri[:, (i + 1) % 3]], axis=1) for i in range(3)]
    for obstacle in world.obstacles:
        if obstacle.dynamic:
            pos, orn = p.getBasePositionAndOrientation(obstacle.body_id, physicsClientId=world.client)
            rotation = np.asarray(p.getMatrixFromQuaternion(orn)).reshape(3, 3)
            h = obstacle.size[0] / 2
            corners = np.array([[x, y, z] for x in (-h, h) for y in (-h, h) for z in (-h, h)])
            pairs = [(a, b) for a in range(8) for b in range(a + 1, 8)
                     if np.count_nonzero(corners[a] != corners[b]) == 1]
            world_corners = corners @ rotation.T + pos
            segments.append(np.array([[world_corners[a], world_corners[b]] for a, b in pairs]))
    seg = np.concatenate(segments)
    a, ab = seg[:, 0], seg[:, 1] - seg[:, 0]
    out = []
    for point in points:
        t = np.clip(np.einsum("ij,ij->i", point - a, ab) / np.maximum(np.einsum("ij,ij->i", ab, ab), 1e-300), 0, 1)
        out.append(np.sqrt(((a + ab * t[:, None] - point) ** 2).sum(axis=1)).min())
    return np.array(out)


def test_both_engines_agree_with_pybullet_alone(scene):
    world, starts, ends = scene
    robot = world.robot_body_ids(0)
    both = RayCaster(world.client, robot, world.static_world)
    alone = RayCaster(world.client, robot, world.static_world, engine="pybullet")
    assert both.engines == "embree+pybullet" and alone.engines == "pybullet"
    fast, slow = both.cast(starts, ends), alone.cast(starts, ends)
    length = np.linalg.norm(ends - starts, axis=1)
    hit_fast, hit_slow = fast.fraction < 1.0, slow.fraction < 1.0
    moving = {o.body_id for o in world.obstacles if o.dynamic}
    fixed = world.static_world.bodies
    # The scene exercises every kind of hit: terrain, fixed obstacles, moving boxes; and misses.
    assert np.isin(slow.body, list(moving)).sum() > 1000
    assert np.isin(slow.body, list(fixed - set(world.terrain_ids))).sum() > 5000
    assert np.isin(slow.body, world.terrain_ids).sum() > 5000
    assert (~hit_slow).sum() > 5000
    agree = (hit_fast == hit_slow) & (~hit_slow | (np.abs(fast.fraction - slow.fraction) * length <= 0.01))
    assert agree.mean() >= 0.999, f"{(~agree).sum()} of {RAYS} rays disagree"
    # Every disagreement is at an edge or a graze. pybullet's own test of a convex shape (box, cylinder,
    # hull) is accurate to a few mm across its surface (hulls carry a 1 mm margin, rounded at edges), and
    # along a ray meeting the surface at a glancing angle that is centimetres. So: where the engine that
    # hit first hit lies within 5 mm of a triangle edge (or 1.5 mm across the surface, 1.5 mm / |cos| along
    # a glancing ray); or both hit the same body within 4 mm of each other across its surface; or the ray
    # meets the surface at under ~6° (|cos| < 0.1) and the other engine missed.
    rays = np.flatnonzero(~agree)
    first = np.minimum(fast.fraction[rays], slow.fraction[rays])
    points = starts[rays] + (ends[rays] - starts[rays]) * first[:, None]
    normal = np.where((slow.fraction[rays] <= fast.fraction[rays])[:, None], slow.normal[rays], fast.normal[rays])
    cosine = np.abs(np.einsum("ij,ij->i", normal, ends[rays] - starts[rays])) / length[rays]
    at_edge = _edge_distance(points, world) <= np.maximum(0.005, 0.0015 / np.maximum(cosine, 1e-9))
    across = np.abs(fast.fraction[rays] - slow.fraction[rays]) * length[rays] * cosine
    same_surface = (fast.body[rays] == slow.body[rays]) & (across <= 0.004)
    graze = (cosine < 0.1) & ((fast.fraction[rays] == 1.0) | (slow.fraction[rays] == 1.0))
    unexplained = rays[~(at_edge | same_surface | graze)]
    assert len(unexplained) == 0, [(r, fast.fraction[r], slow.fraction[r], fast.body[r], slow.body[r])
                                   for r in unexplained[:10]]
    # Normals and bodies agree where the hits do (both engines: unit normals facing the ray's start).
    same = np.flatnonzero(agree & hit_slow)
    assert len(same) > 40_000
    assert np.array_equal(fast.body[same], slow.body[same])
    np.testing.assert_allclose(np.linalg.norm(fast.normal[same], axis=1), 1.0, atol=1e-6)
    facing = np.einsum("ij,ij->i", fast.normal[same], ends[same] - starts[same])
    assert np.all(facing <= 0.0)
    cosine = np.einsum("ij,ij->i", fast.normal[same], slow.normal[same])
    assert np.mean(cosine > 0.999) >= 0.995
    # Normals differ only at edges, where pybullet's shapes are rounded by their margins (or it picks
    # the other face's normal).
    turned = same[cosine <= 0.999]
    points = starts[turned] + (ends[turned] - starts[turned]) * slow.fraction[turned][:, None]
    assert np.all(_edge_distance(points, world) <= 0.003)
    # The robot stays invisible to both (pybullet alone already ignores it: the same rays agree above).
    assert not np.isin(fast.body, robot).any() and not np.isin(slow.body, robot).any()


def test_rays_at_the_robot_pass_through_it(scene):
    world, _, _ = scene
    position = world.vehicles[0].state().position
    starts = position + np.array([[3.0, 0.0, 0.0], [0.0, 3.0, 0.0], [-3.0, 0.0, 0.1]])
    ends = 2 * position - starts  # through the robot's centre and as far beyond
    cast = RayCaster(world.client, world.robot_body_ids(0), world.static_world).cast(starts, ends)
    # Positive control: the chassis is there, a mask-free pybullet ray hits it.
    seen = p.rayTestBatch(starts.tolist(), ends.tolist(), physicsClientId=world.client)
    assert [h[0] for h in seen] == [world.vehicles[0].body_id] * 3
    assert not np.isin(cast.body, world.robot_body_ids(0)).any()


def _flat_scene(client: int) -> tuple[StaticWorld, int]:
    """A fixed 200 x 200 m slab whose top is z = 0, in pybullet and as triangles."""
    import trimesh

    shape = p.createCollisionShape(p.GEOM_BOX, halfExtents=[100.0, 100.0, 1.0], physicsClientId=client)
    body = p.createMultiBody(0, shape, basePosition=(0.0, 0.0, -1.0), physicsClientId=client)
    slab = trimesh.creation.box(extents=(200.0, 200.0, 2.0))
    static = StaticWorld()
    vertices = np.asarray(slab.vertices) + np.array([0.0, 0.0, -1.0])
    static.add_terrain(StaticShape(body, vertices, np.asarray(slab.faces)))
    return static, body


def test_pybullet_drops_big_numpy_batches_and_the_caster_does_not():
    client = p.connect(p.DIRECT)
    try:
        static, body = _flat_scene(client)
        rng = np.random.default_rng(4)
        xy = rng.uniform(-90.0, 90.0, (RAYS, 2))
        height = rng.uniform(0.5, 2.0, RAYS)
        starts = np.column_stack([xy, height])
        ends = np.column_stack([xy, height - 4.0])
        expected = height / 4.0  # the slab's top, z = 0, from the geometry
        limit = MAX_BATCH + 1
        assert len(p.rayTestBatch(starts[:limit], ends[:limit], physicsClientId=client)) == 0  # silently nothing
        below = p.rayTestBatch(starts[:MAX_BATCH], ends[:MAX_BATCH], physicsClientId=client)
        assert len(below) == MAX_BATCH and all(h[0] == body for h in below)  # one ray fewer works
        for engine in ("auto", "pybullet"):
            caster = RayCaster(client, [], static, engine=engine)
            cast = caster.cast(starts, ends)
            assert len(cast.fraction) == RAYS
            np.testing.assert_allclose(cast.fraction, expected, atol=1e-6)
            assert np.all(cast.body == body)
            np.testing.assert_allclose(cast.normal, np.tile([0.0, 0.0, 1.0], (RAYS, 1)), atol=1e-6)
    finally:
        p.disconnect(client)


def test_without_embreex_the_caster_uses_pybullet_with_one_warning(monkeypatch):
    client = p.connect(p.DIRECT)
    try:
        static, _ = _flat_scene(client)
        starts = np.array([[0.0, 0.0, 1.0], [5.0, 5.0, 3.0]])
        ends = starts - (0.0, 0.0, 4.0)
        assert RayCaster(client, [], static).engines == "embree+pybullet"  # positive control
        monkeypatch.setattr(raycast, "_embree_warned", False)
        for name in ("embreex", "embreex.rtcore_scene", "embreex.mesh_construction"):
            monkeypatch.setitem(sys.modules, name, None)  # `import` raises ImportError
        with pytest.warns(RuntimeWarning, match="embreex") as record:
            casters = [RayCaster(client, [], static) for _ in range(3)]
        assert len(record) == 1
        assert all(c.engines == "pybullet" for c in casters)
        np.testing.assert_allclose(casters[0].cast(starts, ends).fraction, [0.25, 0.75])
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            RayCaster(client, [], static)  # no second warning
    finally:
        p.disconnect(client)



def test_a_lidar_of_28800_rays_validates_and_reads_a_room(tmp_path):
    from sear.runtime.simulation import Simulation
    from sear.sensors.config import Pose
    from sear.sensors.lidar import LidarConfig
    from sear.state import body_rotation

    from ..physics.helpers import rover_project

    layers = tuple(np.linspace(-1.5, 1.5, 16).round(3))
    config = LidarConfig(name="vlp", angle_step_deg=0.2, spread_deg=360.0, layers_deg=layers, max_range_m=30.0,
                         resolution_mm=0.0, pose=Pose(z=0.16))
    assert config.problems() == []  # more than pybullet's 16,383 rays a batch is no longer refused
    sim = Simulation(rover_project(tmp_path / "p"), sensor_configs=[config])
    try:
        for x1, y1, x2, y2 in ((-2.1, -2.1, 2.1, -2.1), (2.1, -2.1, 2.1, 2.1), (2.1, 2.1, -2.1, 2.1),
                               (-2.1, 2.1, -2.1, -2.1)):
            sim.sim.add_wall(x1, y1, x2, y2, height=1.0, thickness=0.2)  # inner faces at ±2.0 m
        sim.run(1.0)
        scan = np.asarray(sim.sensors.read("vlp"))
        assert scan.shape == (16, 1800)
        state = sim.state
        rotation = body_rotation(state)
        start = state.position + rotation @ np.array([0.0, 0.0, 0.16])
        el, az = np.meshgrid(np.radians(layers), np.radians(np.arange(1800) * 0.2 - 180.0), indexing="ij")
        local = np.stack([np.cos(el) * np.cos(az), np.cos(el) * np.sin(az), np.sin(el)], axis=-1)
        direction = local @ rotation.T
        with np.errstate(divide="ignore"):
            to_walls = [(np.copysign(2.0, direction[..., k]) - start[k]) / direction[..., k] for k in (0, 1)]
        expected = np.minimum(*to_walls)
        assert np.all(np.isfinite(scan))
        np.testing.assert_allclose(scan, expected, atol=0.01)  # every beam within 1 cm of the geometry
    finally:
        sim.close()


def test_a_fixed_world_too_big_for_embree_is_cast_with_pybullet(monkeypatch):
    client = p.connect(p.DIRECT)
    try:
        static, body = _flat_scene(client)  # 12 triangles
        starts = np.array([[0.0, 0.0, 1.0], [5.0, 5.0, 3.0]])
        ends = starts - (0.0, 0.0, 4.0)
        monkeypatch.setattr(raycast, "MAX_EMBREE_TRIANGLES", 12)
        kept = RayCaster(client, [], static)
        kept.cast(starts, ends)
        assert kept.engines == "embree+pybullet"  # positive control: at the limit Embree is kept
        monkeypatch.setattr(raycast, "MAX_EMBREE_TRIANGLES", 11)
        caster = RayCaster(client, [], static)
        cast = caster.cast(starts, ends)
        assert caster.engines == "pybullet"
        np.testing.assert_allclose(cast.fraction, [0.25, 0.75])
        assert list(cast.body) == [body, body]
    finally:
        p.disconnect(client)
