"""The RGB camera against a scene projected here: a red box and a green wall on grey ground under one sun.

Every pixel's expected surface, colour and shadow is worked out in this file with slab tests of the
pixel's ray against the scene's boxes (the camera model's pinhole geometry written out again), not with
the sensor's caster. Each test runs with the numpy path and with numba's kernels (sear.sensors.raykernels:
camera_points, camera_shade), which give the same frames to the bit."""

from __future__ import annotations

import math

import numpy as np
import pybullet as p
import pytest

from sear.collision import StaticWorld
from sear.sensors import raykernels
from sear.sensors.config import Pose
from sear.sensors.rgb_camera import SKY_HORIZON, SKY_ZENITH, RgbCameraConfig
from sear.sensors.suite import SensorSuite
from sear.state import VehicleState

GROUND = ((0.0, 0.0, -0.5), (20.0, 20.0, 0.5), (0.5, 0.5, 0.5))
RED_BOX = ((4.0, 0.8, 0.5), (0.5, 0.5, 0.5), (0.9, 0.1, 0.1))
GREEN_WALL = ((8.0, 0.0, 1.5), (0.1, 6.0, 1.5), (0.1, 0.8, 0.1))
SCENE = (GROUND, RED_BOX, GREEN_WALL)
CAMERA_Z, PITCH_DEG = 1.6, 15.0
W, H, FOV = 160, 120, 70.0
AMBIENT = 0.35


@pytest.fixture(scope="module")
def compiled_kernels():
    pytest.importorskip("numba")
    return raykernels.compile_kernels()


@pytest.fixture(params=["numpy", "numba"], autouse=True)
def path(request, monkeypatch):
    """The rays' and the camera's arithmetic with numpy, or with numba's kernels."""
    chosen = request.getfixturevalue("compiled_kernels") if request.param == "numba" else None
    monkeypatch.setattr(raykernels, "_compiled", chosen)
    monkeypatch.setattr(raykernels, "_tried", True)
    return chosen


@pytest.fixture
def client():
    cid = p.connect(p.DIRECT)
    yield cid
    p.disconnect(cid)


def build(client) -> StaticWorld:
    world = StaticWorld()
    for centre, half, colour in SCENE:
        shape = p.createCollisionShape(p.GEOM_BOX, halfExtents=half, physicsClientId=client)
        body = p.createMultiBody(0, shape, basePosition=centre, physicsClientId=client)
        world.set_colour(body, colour)
    return world


def camera(**fields) -> RgbCameraConfig:
    values = dict(name="cam", width_px=W, height_px=H, fov_deg=FOV, max_range_m=50.0, ambient=AMBIENT,
                  sun_azimuth_deg=0.0, sun_elevation_deg=45.0, pose=Pose(pitch=PITCH_DEG))
    values.update(fields)
    return RgbCameraConfig(**values)


def frame(client, world, config, seed=0) -> np.ndarray:
    state = VehicleState(time=0.0, position=np.array([0.0, 0.0, CAMERA_Z]), orientation=np.array([0.0, 0.0, 0.0, 1.0]),
                         linear_velocity=np.zeros(3), angular_velocity=np.zeros(3), wheel_angles={}, wheel_radii={})
    suite = SensorSuite([config], rng=np.random.default_rng(seed), client=client, ignore_bodies=[],
                        static_world=world)
    suite.update(state)
    return suite.read(config.name)


def slab(origins, direction, centre, half):
    """Entry distance t >= 0 of rays origins + t * direction into an axis-aligned box (inf: a miss) and
    the outward normal of the face entered."""
    lo, hi = np.asarray(centre) - half, np.asarray(centre) + np.asarray(half)
    with np.errstate(divide="ignore", invalid="ignore"):
        t1, t2 = (lo - origins) / direction, (hi - origins) / direction
    near, far = np.minimum(t1, t2), np.maximum(t1, t2)
    axis = np.argmax(near, axis=-1)
    enter, leave = near.max(axis=-1), far.min(axis=-1)
    hit = (enter <= leave) & (enter >= 0.0)
    normal = np.zeros(direction.shape)
    rows = np.arange(len(normal))
    normal[rows, axis] = -np.sign(direction[rows, axis])
    return np.where(hit, enter, np.inf), normal


def expected_picture(shadows=True):
    """Per pixel: the index of the surface seen (0 ground, 1 box, 2 wall, -1 sky), whether it is in
    shadow, its colour (RGB 0..255, before rounding) and the point seen (m; NaN for the sky)."""
    f = (W / 2) / math.tan(math.radians(FOV) / 2)
    u = (np.arange(W) + 0.5 - W / 2) / f
    v = (np.arange(H) + 0.5 - H / 2) / f
    vv, uu = np.meshgrid(v, u, indexing="ij")
    local = np.stack([np.ones_like(uu), -uu, -vv], axis=-1).reshape(-1, 3)  # x ahead, y left, z up
    c, s = math.cos(math.radians(PITCH_DEG)), math.sin(math.radians(PITCH_DEG))
    pitch_down = np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])
    direction = local @ pitch_down.T
    origin = np.array([0.0, 0.0, CAMERA_Z])
    origins = np.broadcast_to(origin, direction.shape)
    ts, normals = zip(*(slab(origins, direction, centre, half) for centre, half, _ in SCENE), strict=True)
    t = np.stack(ts, axis=1)
    t[t > 50.0] = np.inf  # t is the depth along the axis (each direction's x is 1): beyond the 50 m range
    which = np.where(np.isfinite(t.min(axis=1)), t.argmin(axis=1), -1)
    sun = np.array([0.0, math.cos(math.radians(45.0)), math.sin(math.radians(45.0))])
    colour = np.zeros((len(which), 3))
    shadow = np.zeros(len(which), dtype=bool)
    seen = np.full((len(which), 3), np.nan)
    rise = np.clip(direction[:, 2] / np.linalg.norm(direction, axis=1), 0, 1)[:, None]
    colour[:] = (SKY_HORIZON + (SKY_ZENITH - SKY_HORIZON) * rise) * 255
    for k, (_, _, albedo) in enumerate(SCENE):
        rows = np.flatnonzero(which == k)
        points = seen[rows] = origin + direction[rows] * t[rows, k, None]
        normal = normals[k][rows]
        facing = np.clip(normal @ sun, 0, None)
        lit = np.ones(len(rows), dtype=bool)
        if shadows:
            for j, (centre, half, _) in enumerate(SCENE):
                if j != k:
                    blocked, _ = slab(points + normal * 1e-4, np.broadcast_to(sun, points.shape).copy(), centre, half)
                    lit &= ~np.isfinite(blocked)
        shadow[rows] = ~lit & (facing > 0)
        colour[rows] = np.asarray(albedo) * (AMBIENT + (1 - AMBIENT) * facing * lit)[:, None] * 255
    return which.reshape(H, W), shadow.reshape(H, W), colour.reshape(H, W, 3), seen.reshape(H, W, 3)


def test_each_pixel_shows_the_surface_its_ray_meets_in_its_colour_and_light(client):
    world = build(client)
    image = frame(client, world, camera())
    assert image.shape == (H, W, 3) and image.dtype == np.uint8
    which, _, colour, _ = expected_picture()
    assert {0, 1, 2, -1} <= set(np.unique(which))  # every surface, and the sky, is in view
    # Each pixel's colour within one 8-bit step of the colour worked out here.
    close = np.all(np.abs(image.astype(float) - colour) <= 1.0, axis=-1)
    assert close.mean() >= 0.98, f"only {close.mean():.3%} of the pixels match"
    # The box's outline: the pixels that are red (red well above green and blue) against the projection.
    red = (image[..., 0] > 2 * image[..., 1]) & (image[..., 0] > 2 * image[..., 2])
    box = which == 1
    assert box.sum() > 200
    assert (red & box).sum() / (red | box).sum() >= 0.98
    green = (image[..., 1] > 2 * image[..., 0]) & (image[..., 1] > 2 * image[..., 2])
    assert (green & (which == 2)).sum() / (green | (which == 2)).sum() >= 0.98


def test_the_box_casts_its_shadow_on_the_ground_where_the_sun_puts_it(client):
    world = build(client)
    which, shadow, _, seen = expected_picture()
    # The sun stands due north at 45°: the 1 m high box (x 3.5..4.5, y 0.3..1.3) shades the ground south
    # of it, x 3.5..4.5, y -0.7..0.3; the wall shades ground beyond it, x > 7.9, out of the box's way.
    x, y = seen[..., 0], seen[..., 1]
    box_shadow = shadow & (which == 0) & (x < 6.0)
    assert box_shadow.sum() > 100
    assert ((x[box_shadow] > 3.5 - 1e-6) & (x[box_shadow] < 4.5 + 1e-6) & (y[box_shadow] > -0.7 - 1e-6)
            & (y[box_shadow] < 0.3 + 1e-6)).all()
    lit_ground = (which == 0) & ~shadow
    image = frame(client, world, camera()).astype(float)
    brightness = image.mean(axis=-1)
    # Grey ground (0.5) in shadow: ambient light alone; lit: ambient and sin(45°) of the sun. Halfway between.
    shade, sunlit = 255 * 0.5 * AMBIENT, 255 * 0.5 * (AMBIENT + (1 - AMBIENT) * math.sin(math.radians(45.0)))
    dark = brightness < (shade + sunlit) / 2
    assert dark[box_shadow].mean() >= 0.98
    assert (~dark[lit_ground]).mean() >= 0.98
    # Positive control: without shadow rays the same ground is lit.
    plain = frame(client, world, camera(shadows=False)).astype(float).mean(axis=-1)
    assert (plain[box_shadow] > brightness[box_shadow] + 30).all()


def test_the_same_seed_gives_the_same_frames_and_another_seed_other_noise(client):
    world = build(client)
    noisy = camera(noise=True, noise_stddev=4.0)
    first, again = frame(client, world, noisy, seed=7), frame(client, world, noisy, seed=7)
    assert np.array_equal(first, again)
    other = frame(client, world, noisy, seed=8)
    assert not np.array_equal(first, other)
    clean = frame(client, world, camera())
    assert 2.0 < np.std(first.astype(float) - clean) < 6.0


def test_the_kernels_give_the_numpy_paths_frames_to_the_bit(client, compiled_kernels, monkeypatch):
    world = build(client)
    noisy = camera(noise=True, noise_stddev=4.0)
    frames = []
    for chosen in (None, compiled_kernels):
        monkeypatch.setattr(raykernels, "_compiled", chosen)
        frames.append(frame(client, world, noisy, seed=5))
    assert frames[0].std() > 10.0  # a picture, not a blank
    assert np.array_equal(frames[0], frames[1])
