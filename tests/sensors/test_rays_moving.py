"""Ray sensors among moving bodies, beam by beam against geometry worked out here: a movable box that has
been moved and turned, and another robot (its convex hull), seen by a LIDAR, a depth camera, an infrared
cone and a sonar cone mounted over the first robot, whose own body they never see.

The caster gives these rays to Embree (sear.sensors.raycast: a scene of the moving bodies' boxes and hulls
made when they move); every beam must read the distance to the nearest of: the ground (the plane z = 0),
the box (a slab test in its frame) and the other robot (the planes of its body's convex hull, moved out by
its collision margin), in that body's pose as pybullet has it. Beams that pass within a few millimetres of
a box's or a hull's edge are left out (pybullet rounds those edges and the caster asks pybullet there)."""

from __future__ import annotations

import copy
import math

import numpy as np
import pybullet as p
import pytest

from sear.models.loaded import load_models
from sear.physics.world import World
from sear.sensors.config import Pose
from sear.sensors.depth_camera import DepthCameraConfig
from sear.sensors.lidar import LidarConfig
from sear.sensors.range import InfraredConfig, UltrasonicConfig
from sear.sensors.raycast import RayCaster
from sear.sensors.suite import SensorSuite
from sear.state import VehicleState
from tests.physics.helpers import rover_project

MOUNT = np.array([0.0, 0.0, 0.45])
"""Where the sensors are (m, world frame): above the first robot, so downward beams cross its body."""
EDGE = 0.003
"""m: a beam whose answer changes when the box and the hull grow or shrink by this much grazes an edge."""
BOX = 0.6
"""m: the movable box's edge."""


@pytest.fixture(scope="module")
def scene(tmp_path_factory):
    project = rover_project(tmp_path_factory.mktemp("moving"))
    other = copy.deepcopy(project.robots[0])
    other.name = "other"
    other.body.start_east, other.body.start_north = 2.2, -1.0
    other.body.rotation = (0.0, 0.0, math.sin(0.35), math.cos(0.35))
    project.add_robot(other)
    world = World(project, load_models(project))
    box = world.obstacles[world.add_box(-1.5, 1.2, size=BOX, mass=2.0)].body_id
    for _ in range(120):  # everything settles
        world.step()
    # The box pushed off and turned about all three axes (it hangs there: no step follows).
    p.resetBasePositionAndOrientation(box, (-1.6, 1.0, 0.55), p.getQuaternionFromEuler((0.3, 0.2, 0.6)),
                                      physicsClientId=world.client)
    yield world, box
    world.close()


def _rotation(body: int, client: int) -> tuple[np.ndarray, np.ndarray]:
    position, orientation = p.getBasePositionAndOrientation(body, physicsClientId=client)
    return np.asarray(position), np.asarray(p.getMatrixFromQuaternion(orientation)).reshape(3, 3)


def _hull_planes(world: World, index: int) -> tuple[np.ndarray, np.ndarray]:
    """Unit outward normals and offsets (m) of robot `index`'s convex hull in its pybullet frame, from the
    body mesh's hull (trimesh) and the collision margin pybullet gives it."""
    vehicle = world.vehicles[index]
    hull = vehicle.body_mesh.convex_hull
    vertices = np.asarray(hull.vertices) - vehicle.cog
    corners = vertices[np.asarray(hull.faces)]
    normals = np.cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0])
    normals /= np.linalg.norm(normals, axis=1)[:, None]
    margin = p.getDynamicsInfo(vehicle.body_id, -1, physicsClientId=world.client)[11]
    return normals, np.einsum("ij,ij->i", normals, corners[:, 0]) + margin


def _clip(local_start: np.ndarray, local_d: np.ndarray, normals: np.ndarray, offsets: np.ndarray
          ) -> tuple[np.ndarray, np.ndarray]:
    """Where each ray (body frame) enters the convex solid n·x <= offset from outside: t (inf for a miss
    or a start inside) and the entering plane's index."""
    denominator = local_d @ normals.T
    numerator = offsets - local_start @ normals.T
    with np.errstate(divide="ignore", invalid="ignore"):
        crossing = numerator / denominator
    enter = np.where(denominator < 0.0, crossing, -np.inf)
    leave = np.where(denominator > 0.0, crossing, np.inf)
    outside_parallel = ((denominator == 0.0) & (numerator < 0.0)).any(axis=1)
    plane = enter.argmax(axis=1)
    t_enter = enter[np.arange(len(local_d)), plane]
    ok = ~outside_parallel & (t_enter <= leave.min(axis=1)) & (t_enter >= 0.0)
    return np.where(ok, t_enter, np.inf), plane


def expected(world: World, box: int, starts: np.ndarray, ends: np.ndarray, grow: float = 0.0
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each ray's nearest hit fraction (inf: none within its length), what it hit (0 ground, 1 box, 2 the
    other robot, -1 nothing) and the unit normal there; the box and the hull `grow` m larger."""
    d = ends - starts
    with np.errstate(divide="ignore", invalid="ignore"):
        ground = np.where(d[:, 2] < 0.0, -starts[:, 2] / d[:, 2], np.inf)
    normals = [np.tile([0.0, 0.0, 1.0], (len(d), 1))]
    # The box: six planes in its frame.
    centre, rotation = _rotation(box, world.client)
    axes = np.vstack([np.eye(3), -np.eye(3)])
    t_box, face = _clip((starts - centre) @ rotation, d @ rotation, axes, np.full(6, BOX / 2 + grow))
    normals.append(axes[face] @ rotation.T)
    # The other robot: its hull's planes.
    other = world.vehicles[1].body_id
    position, turn = _rotation(other, world.client)
    planes, offsets = _hull_planes(world, 1)
    t_robot, plane = _clip((starts - position) @ turn, d @ turn, planes, offsets + grow)
    normals.append(planes[plane] @ turn.T)
    t = np.column_stack([ground, t_box, t_robot])
    t[(t < 0.0) | (t > 1.0)] = np.inf
    which = t.argmin(axis=1)
    nearest = t[np.arange(len(t)), which]
    which = np.where(np.isfinite(nearest), which, -1)
    normal = np.stack(normals, axis=1)[np.arange(len(t)), np.maximum(which, 0)]
    return nearest, which, normal


def _clear(world: World, box: int, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """The rays whose answer (what they hit) stays the same with the box and hull EDGE larger or smaller."""
    _, small, _ = expected(world, box, starts, ends, -EDGE)
    _, large, _ = expected(world, box, starts, ends, EDGE)
    _, exact, _ = expected(world, box, starts, ends)
    return (small == exact) & (large == exact)


def _sample(world: World, configs) -> SensorSuite:
    suite = SensorSuite(configs, rng=np.random.default_rng(0), client=world.client,
                        ignore_bodies=world.robot_body_ids(0), static_world=world.static_world)
    assert suite.caster.engines == "embree+pybullet"
    suite.update(_state())
    return suite


def _state() -> VehicleState:
    return VehicleState(time=0.0, position=MOUNT.copy(), orientation=np.array([0.0, 0.0, 0.0, 1.0]),
                        linear_velocity=np.zeros(3), angular_velocity=np.zeros(3), wheel_angles={}, wheel_radii={})


def test_the_scene_has_what_the_beams_must_see(scene):
    """Positive control: pybullet's own rays from the mount meet the first robot, the box and the other."""
    world, box = scene
    targets = [np.zeros(3), np.array([-1.6, 1.0, 0.55]), np.asarray(world.vehicles[1].state().position)]
    starts = np.tile(MOUNT, (3, 1))
    ends = starts + (np.array(targets) - starts) * 2.0
    hits = p.rayTestBatch(starts.tolist(), ends.tolist(), physicsClientId=world.client)
    assert [h[0] for h in hits] == [world.vehicles[0].body_id, box, world.vehicles[1].body_id]


def test_a_3d_lidar_reads_every_beam_among_moving_bodies(scene):
    world, box = scene
    config = LidarConfig(name="lidar", angle_step_deg=0.5, spread_deg=360.0, max_range_m=10.0, min_range_m=0.0,
                         resolution_mm=0.0, layers_deg=(-40.0, -25.0, -15.0, -8.0, -4.0, 0.0, 4.0))
    suite = _sample(world, [config])
    sensor = suite.sensor("lidar")
    starts, ends = sensor.rays(_state())
    t, which, _ = expected(world, box, starts, ends)
    want = np.where(np.isfinite(t), t * config.max_range_m, np.nan)
    got = np.asarray(suite.read("lidar"), dtype=float).ravel()
    clear = _clear(world, box, starts, ends)
    assert clear.mean() > 0.98
    # Every kind of beam is there: the ground (some through the first robot's body), the box, the other
    # robot, and nothing.
    for kind in (0, 1, 2, -1):
        assert (clear & (which == kind)).sum() > 20, kind
    np.testing.assert_array_equal(np.isnan(got[clear]), np.isnan(want[clear]))
    np.testing.assert_allclose(got[clear], want[clear], atol=1e-6, equal_nan=True)


def test_a_depth_camera_reads_each_pixels_depth_of_the_box_and_the_other_robot(scene):
    world, box = scene
    suite = _sample(world, [
        DepthCameraConfig(name="box", width_px=48, height_px=36, fov_deg=40.0, min_range_m=0.1, max_range_m=8.0,
                          resolution_mm=0.0, pose=Pose(yaw=math.degrees(math.atan2(1.0, -1.6)), pitch=5.0)),
        DepthCameraConfig(name="other", width_px=48, height_px=36, fov_deg=20.0, min_range_m=0.1,
                          max_range_m=8.0, resolution_mm=0.0,
                          pose=Pose(yaw=math.degrees(math.atan2(-1.0, 2.2)), pitch=10.0))])
    for name, target in (("box", 1), ("other", 2)):
        sensor = suite.sensor(name)
        starts, ends = sensor.rays(_state())
        t, which, _ = expected(world, box, starts, ends)
        # The camera's rays end on the plane at the maximum depth: the hit fraction times it is the depth.
        want = np.where(np.isfinite(t), t * 8.0, np.nan)
        got = np.asarray(suite.read(name), dtype=float).ravel()
        clear = _clear(world, box, starts, ends)
        assert clear.mean() > 0.97 and (clear & (which == target)).sum() > 300, name
        np.testing.assert_allclose(got[clear], want[clear], atol=1e-5, equal_nan=True)  # float32 image


def test_infrared_and_sonar_cones_read_their_nearest_beam(scene):
    world, box = scene
    to_box = Pose(yaw=math.degrees(math.atan2(1.0, -1.6)))
    to_other = Pose(yaw=math.degrees(math.atan2(-1.0, 2.2)), pitch=8.0)
    suite = _sample(world, [
        InfraredConfig(name="ir_box", beam_width_cm=20.0, min_range_cm=10.0, max_range_cm=300.0, resolution_cm=1.0,
                       pose=to_box),
        InfraredConfig(name="ir_other", beam_width_cm=20.0, min_range_cm=10.0, max_range_cm=400.0,
                       resolution_cm=1.0, pose=to_other),
        UltrasonicConfig(name="sonar", beam_width_cm=80.0, min_range_cm=15.0, max_range_cm=500.0, resolution_cm=1.0,
                         max_incidence_deg=60.0, pose=to_other)])
    for name, target in (("ir_box", 1), ("ir_other", 2)):
        sensor = suite.sensor(name)
        starts, ends = sensor.rays(_state())
        t, which, _ = expected(world, box, starts, ends)
        assert _clear(world, box, starts, ends).all() and (which == target).sum() > 10, name
        length = sensor.length_m
        in_range = np.isfinite(t) & (t >= sensor.min_m / length)
        assert suite.read(name) == pytest.approx(float(t[in_range].min()) * length, abs=1e-9), name
    sonar = suite.sensor("sonar")
    starts, ends = sonar.rays(_state())
    t, which, normal = expected(world, box, starts, ends)
    # A wide cone: a few of its rays graze the hull's edges, none of them the nearest echo (checked below).
    clear = _clear(world, box, starts, ends)
    assert clear.mean() > 0.9 and (which == 2).sum() > 10
    # The echo comes back from the surfaces met within the maximum incidence.
    direction = (ends - starts) / np.linalg.norm(ends - starts, axis=1)[:, None]
    echo = (np.isfinite(t) & (t >= sonar.min_m / sonar.length_m)
            & (np.abs(np.einsum("ij,ij->i", normal, direction)) >= math.cos(math.radians(60.0))))
    nearest = float(t[echo].min()) * sonar.length_m
    assert clear[echo][t[echo].argmin()]
    assert suite.read("sonar") == pytest.approx(round(nearest / 0.01) * 0.01, abs=1e-9)


def test_a_box_moved_between_two_samples_is_seen_where_it_is_now(scene):
    """The moving bodies' scene is shared and kept between samples: it must follow the box when it moves."""
    world, box = scene
    config = LidarConfig(name="lidar", angle_step_deg=0.5, spread_deg=360.0, max_range_m=10.0, min_range_m=0.0,
                         resolution_mm=0.0, layers_deg=(-15.0, -8.0, 0.0))
    suite = _sample(world, [config])
    sensor = suite.sensor("lidar")
    starts, ends = sensor.rays(_state())
    before = expected(world, box, starts, ends)[1]
    pose = p.getBasePositionAndOrientation(box, physicsClientId=world.client)
    try:
        p.resetBasePositionAndOrientation(box, (1.2, 1.4, 0.4), p.getQuaternionFromEuler((0.0, 0.5, -0.4)),
                                          physicsClientId=world.client)
        sensor.next_sample = 0.0
        suite.update(_state())
        t, which, _ = expected(world, box, starts, ends)
        clear = _clear(world, box, starts, ends)
        assert (clear & (which == 1)).sum() > 20 and ((which == 1) != (before == 1)).sum() > 20
        got = np.asarray(suite.read("lidar"), dtype=float).ravel()
        np.testing.assert_allclose(got[clear], np.where(np.isfinite(t), t * 10.0, np.nan)[clear], atol=1e-6,
                                   equal_nan=True)
    finally:
        p.resetBasePositionAndOrientation(box, *pose, physicsClientId=world.client)


def test_occlusion_queries_answer_as_nearest_hits_do_among_moving_bodies(scene):
    """RayCaster.occluded (the RGB camera's shadow rays) says, ray by ray, what cast().fraction < 1 says,
    among the fixed ground, a tilted box and another robot, the casting robot's own bodies ignored."""
    world, box = scene
    caster = RayCaster(world.client, world.robot_body_ids(0), world.static_world)
    rng = np.random.default_rng(4)
    starts = np.tile(MOUNT, (4000, 1)) + rng.uniform(-0.2, 0.2, (4000, 3))
    # A third aimed near the box, a third near the other robot, a third anywhere.
    aims = np.concatenate([np.array([-1.6, 1.0, 0.55]) + rng.uniform(-0.6, 0.6, (1333, 3)),
                           np.asarray(world.vehicles[1].state().position) + rng.uniform(-0.6, 0.6, (1333, 3)),
                           starts[:1334] + rng.normal(size=(1334, 3)) * 4.0])
    ends = starts + (aims - starts) * rng.uniform(0.5, 2.0, (4000, 1))
    cast = caster.cast(starts, ends)
    blocked = caster.occluded(starts, ends)
    # Positive controls: rays blocked by the box, by the other robot and by the ground, and open rays.
    for body in (box, world.vehicles[1].body_id, world.static_world.terrain[0].body):
        assert (blocked & (cast.body == body)).sum() >= 5
    assert (~blocked).sum() >= 100
    assert np.array_equal(blocked, cast.fraction < 1.0)
