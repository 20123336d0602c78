"""Ultrasonic rangers echo like sound: no echo from a smooth surface beyond the critical angle (the next
surface's echo instead), none within the blanking time, the range quantised by the echo timer's step.
Expected ranges are worked out here from the walls' planes."""

from __future__ import annotations

import math

import numpy as np
import pybullet as p
import pytest

from sear.collision import StaticShape, StaticWorld
from sear.sensors.config import Pose
from sear.sensors.embreescene import BOX_CORNERS, BOX_FACES
from sear.sensors.range import UltrasonicConfig
from sear.sensors.suite import SensorSuite
from sear.state import VehicleState

HALF = 0.05  # the walls' half thickness, m


@pytest.fixture
def client():
    cid = p.connect(p.DIRECT)
    yield cid
    p.disconnect(cid)


def wall(client, centre, yaw_deg=0.0, half_width=5.0, world=None):
    """A wall 2 m high whose middle plane passes through `centre` (x, y), its normal `yaw_deg` from +x; with
    `world`, also a fixed obstacle of it (its exact triangles: what a run casts fixed obstacles against)."""
    half = (HALF, half_width, 1.0)
    shape = p.createCollisionShape(p.GEOM_BOX, halfExtents=half, physicsClientId=client)
    body = p.createMultiBody(0, shape, basePosition=(centre[0], centre[1], 0.5),
                             baseOrientation=p.getQuaternionFromEuler((0, 0, math.radians(yaw_deg))),
                             physicsClientId=client)
    if world is not None:
        c, s = math.cos(math.radians(yaw_deg)), math.sin(math.radians(yaw_deg))
        turn = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
        corners = (BOX_CORNERS * half) @ turn.T + (centre[0], centre[1], 0.5)
        world.add_obstacle(StaticShape(body, corners, BOX_FACES))
    return body


def echo(client, world=None, **fields):
    values = dict(name="us", pose=Pose(z=0.5))
    values.update(fields)
    suite = SensorSuite([UltrasonicConfig(**values)], rng=np.random.default_rng(0), client=client, ignore_bodies=[],
                        static_world=world)
    suite.update(VehicleState(time=0.0, position=np.zeros(3), orientation=np.array([0.0, 0.0, 0.0, 1.0]),
                              linear_velocity=np.zeros(3), angular_velocity=np.zeros(3), wheel_angles={},
                              wheel_radii={}))
    return suite.read("us")


# A single ray (a beam no wider than twice the resolution has no cone): incidence = the wall's turn.
SINGLE = dict(beam_width_cm=1.0, resolution_cm=2.54)


@pytest.mark.parametrize("turn", [30.0, 45.0, 60.0])
def test_a_wall_beyond_the_critical_angle_returns_no_echo(client, turn):
    wall(client, (2.0, 0.0), turn)
    assert echo(client, **SINGLE, max_incidence_deg=22.5) is None


@pytest.mark.parametrize("turn", [0.0, 10.0, 20.0])
def test_within_the_critical_angle_the_echo_range_is_within_one_step(client, turn):
    wall(client, (2.0, 0.0), turn)
    # The face towards the sensor: n·x = n·c - HALF with n = (cos t, sin t); the axis (y = 0) meets it at
    # x = 2 - HALF / cos t.
    expected = 2.0 - HALF / math.cos(math.radians(turn))
    reading = echo(client, **SINGLE, max_incidence_deg=22.5)
    assert reading is not None and abs(reading - expected) <= 0.0254
    fine = echo(client, **SINGLE, max_incidence_deg=22.5, range_step_cm=0.3)
    assert abs(fine - expected) <= 0.003


def test_a_wide_beam_echoes_from_its_ray_nearest_the_normal(client):
    # LV-EZ1 defaults: 60 cm wide at 645 cm, so the outer cone is atan(30 / 645) off the axis; its ray in
    # the plane of the wall's turn (azimuth 0 or 180° of its ring) meets the wall at incidence 15° - that,
    # the nearest echo: perpendicular distance / cos(15° - edge).
    wall(client, (2.0, 0.0), 15.0)
    edge = math.atan2(30.0, 645.0)
    perpendicular = 2.0 * math.cos(math.radians(15.0)) - HALF
    expected = perpendicular / math.cos(math.radians(15.0) - edge)
    reading = echo(client)
    assert reading is not None and abs(reading - expected) <= 0.0254
    # Turned 40°, every ray meets it at 37.3° or more: beyond 22.5°, no echo at all.
    p.resetSimulation(physicsClientId=client)
    wall(client, (2.0, 0.0), 40.0)
    assert echo(client) is None


def test_an_oblique_post_returns_no_echo_and_the_wall_behind_it_does(client):
    # HC-SR04 beam (15°, 105.3 cm wide at 4 m): a 10 cm square post 1 m ahead, turned 45° (its faces 45°
    # from the axis), covers the axis; the rays beside it go on to a square wall 3 m ahead (face at
    # 2.95 m), which echoes. Both are fixed obstacles, cast against their exact faces (pybullet's own box
    # test rounds a box's edges, whose normals then turn towards the sensor).
    hc = dict(beam_width_cm=105.3, min_range_cm=2.0, max_range_cm=400.0, resolution_cm=3.0, range_step_cm=0.3,
              max_incidence_deg=15.0)
    world = StaticWorld()
    wall(client, (3.0, 0.0), world=world)
    wall(client, (1.0, 0.0), 45.0, half_width=0.05, world=world)
    behind = echo(client, world, **hc)
    assert behind is not None and 2.95 - 0.003 <= behind <= 2.95 / math.cos(math.radians(7.5)) + 0.003
    # Positive control: the same post square to the beam echoes from its face 0.95 m ahead.
    p.resetSimulation(physicsClientId=client)
    world = StaticWorld()
    wall(client, (3.0, 0.0), world=world)
    wall(client, (1.0, 0.0), 0.0, half_width=0.05, world=world)
    assert echo(client, world, **hc) == pytest.approx(1.0 - HALF, abs=0.003)


def test_an_echo_within_the_blanking_time_is_not_heard(client):
    wall(client, (0.10 + HALF, 0.0))  # face 10 cm ahead: the echo returns after 2 x 0.10 / 343 = 583 µs
    assert echo(client, **SINGLE, min_range_cm=2.0, blanking_us=500.0) == pytest.approx(0.10, abs=0.0127)
    assert echo(client, **SINGLE, min_range_cm=2.0, blanking_us=700.0) is None
