"""Settled starts: a robot placed at its static equilibrium is at rest from the first tick; the drop start
stays, and settles as a damped oscillator does. Expected values come from the spring-mass-damper model of
the suspension worked out here (four springs k = stiffness·M, four dampers c = damping·M, per wheel, as
btRaycastVehicle defines them), not from the code under test."""

from __future__ import annotations

import itertools
import math
from dataclasses import fields
from pathlib import Path

import numpy as np
import pybullet as p
import pytest

from sear.physics.tyre import BUMP_STOP_STIFFNESS
from sear.project import MAX_SUSPENSION_DAMPING, MAX_SUSPENSION_STIFFNESS, Dynamics

from .helpers import G, plane_mesh, rover_project

# The rover's wheels: radius 0.1 m, centres 0.08 m below the body origin; the suspension's rest length is
# the radius (0.1 m) and its hard point the wheel centre plus the rest length.
RADIUS, DROP, REST = 0.1, 0.08, 0.1
TICKS = 240  # one second at the default 240 Hz

THESIS = {f.name: getattr(Dynamics(), f.name) for f in fields(Dynamics)
          if f.name in ("mass", "engine_force", "brake_force", "suspension_stiffness", "suspension_compression",
                        "suspension_damping", "friction_slip")}
"""The project defaults (the thesis's 400 kg vehicle) on the rover's wheels."""
EXTREMES = {
    f"stiffness {stiffness:g}, compression {compression:g}, rebound {rebound:g}": {
        "suspension_stiffness": stiffness, "suspension_compression": compression, "suspension_damping": rebound}
    for stiffness in (1.0, MAX_SUSPENSION_STIFFNESS)
    for compression in (0.0, MAX_SUSPENSION_DAMPING) for rebound in (0.0, MAX_SUSPENSION_DAMPING)
}
"""Every corner of the accepted stiffness and damper ranges (sear.project's bounds)."""
CASES = {
    "defaults": THESIS,
    "rover": {},
    **EXTREMES,
    # The softest springs that still carry the rover on their travel: sag g/(4·s) = 0.1 m at s = 24.5.
    "softest carrying": {"suspension_stiffness": 25.0, "suspension_compression": 0.0, "suspension_damping": 0.0},
    # A little softer: bottomed out, on the bump stops.
    "just too soft": {"suspension_stiffness": 24.0, "suspension_compression": 0.0, "suspension_damping": 0.0},
}
SECONDS = 3.0
"""How long the parked robots are watched: the rocking the last bump-stop-less version showed began after 1 s."""


@pytest.fixture
def world_factory(tmp_path, make_world):
    folders = itertools.count()

    def make(**kwargs):
        slope = kwargs.pop("slope", 0.0)
        drop = kwargs.pop("drop", None)
        project = rover_project(tmp_path / f"w{next(folders)}", terrain=plane_mesh(slope_deg=slope), **kwargs)
        if drop is not None:
            project.body.drop_start, project.body.start_altitude = True, drop
        return make_world(project)

    return make


def _record(world, ticks: int = TICKS, brake: float = 0.0):
    """Speed (m/s) and body-frame specific force (m/s², what an ideal accelerometer reads) every tick from
    the first, the velocity before the first tick being the start's (at rest)."""
    vehicle = world.vehicles[0]
    if brake:
        vehicle.brake(brake)
    before = vehicle.state().linear_velocity
    speeds, readings = [], []
    for _ in range(ticks):
        world.step()
        state = vehicle.state()
        accel = (state.linear_velocity - before) / world.dt
        before = state.linear_velocity
        rotation = np.array(p.getMatrixFromQuaternion(state.orientation.tolist())).reshape(3, 3)
        readings.append(rotation.T @ (accel + np.array([0.0, 0.0, G])))
        speeds.append(float(np.linalg.norm(state.linear_velocity)))
    return np.array(speeds), np.array(readings)


@pytest.mark.parametrize("case", list(CASES))
def test_parked_robot_is_at_rest_from_the_first_tick(world_factory, case):
    world = world_factory(**CASES[case])
    stiffness = CASES[case].get("suspension_stiffness", 40.0)
    # Each of four springs carries M·g/4 with force stiffness·compression·M: compression g/(4·stiffness).
    # Past the travel (the rest length, 0.1 m) the spring pushes stiffness·travel·M at most and the bump
    # stop, BUMP_STOP_STIFFNESS·M per m further, the rest. The body origin sits at the wheel radius + the
    # wheel centres' drop + the rest length, less the compression.
    compression = G / (4 * stiffness)
    if compression > REST:
        compression = REST + (G / 4 - stiffness * REST) / BUMP_STOP_STIFFNESS
    expected_z = RADIUS + DROP - compression
    speeds, readings = _record(world, round(SECONDS * 240))
    assert world.vehicles[0].state().position[2] == pytest.approx(expected_z, abs=1e-6)
    assert speeds.max() < 1e-3
    assert np.abs(readings - readings.mean(axis=0)).max() < 0.05
    assert readings.mean(axis=0) == pytest.approx([0.0, 0.0, G], abs=0.05)  # it reads gravity, up


def test_drop_start_is_still_there_and_moves(world_factory):
    # Positive control of the test above: dropped 5 cm, the robot falls (g·t at first), then bounces.
    speeds, readings = _record(world_factory(drop=0.05))
    assert speeds[10] == pytest.approx(G * 11 / 240, rel=0.02)  # free fall for the first ticks
    assert np.abs(readings - readings.mean(axis=0)).max() > 1.0


def test_parked_on_a_slope_it_follows_the_slope_and_rests(world_factory):
    # Braked on 10° (friction 1 > tan 10°), it does not move from the first tick, and the chassis lies along
    # the slope, tilted back by the load transfer: the tyres hold M·g·sinθ at the ground, h below the centre
    # of mass, and the rear pair of springs takes ΔN = M·g·sinθ·h/a more than the front (wheels ±a along
    # the chassis), so the tilt is (ΔN / (2·s·M)) / (2a) = g·sinθ·h / (4·s·a²) (to first order: the rays
    # along the tilted chassis move the contacts a little, ~20 % more at stiffness 40).
    slope, a = math.radians(10.0), 0.22
    for stiffness in (40.0, 160.0):
        world = world_factory(slope=10.0, brake_force=500.0, suspension_stiffness=stiffness)
        h = RADIUS + DROP - G * math.cos(slope) / (4 * stiffness)  # the body origin (= centre of mass) height
        tilt = G * math.sin(slope) * h / (4 * stiffness * a * a)
        speeds, readings = _record(world, brake=500.0)
        x, y, z, w = world.vehicles[0].state().orientation
        pitch = -math.asin(max(-1.0, min(1.0, 2 * (w * y - z * x))))  # nose up the +x slope
        assert pitch - slope == pytest.approx(tilt, rel=0.25)
        assert speeds.max() < 1e-3
        assert np.abs(readings - readings.mean(axis=0)).max() < 0.05
        # An accelerometer at rest reads the reaction to gravity, g up: g·sin(pitch) along a nose-up x axis.
        assert readings.mean(axis=0)[0] == pytest.approx(G * math.sin(pitch), abs=0.05)


def _settling_time(zeta: float, omega: float, band: float = 0.02) -> float:
    """Last time a damped oscillator's unit step response is outside ±band of 1 (s), from its exact
    solution x(t) = 1 - e^(-ζωt)·(cos ω_d t + ζ/sqrt(1-ζ²)·sin ω_d t), sampled every 0.1 ms."""
    t = np.arange(0.0, 40.0 / (zeta * omega), 1e-4)
    wd = omega * math.sqrt(1 - zeta * zeta)
    x = 1 - np.exp(-zeta * omega * t) * (np.cos(wd * t) + zeta / math.sqrt(1 - zeta * zeta) * np.sin(wd * t))
    return float(t[np.abs(x - 1) > band][-1])


@pytest.mark.parametrize("zeta", [0.3, 0.5, 0.7])
def test_drop_start_settles_as_a_damped_oscillator(world_factory, zeta):
    # Set down with its springs at rest length (no gap): a step of the weight onto the springs. Heave of the
    # mass M on 4 springs k = s·M and 4 dampers c = d·M: ω = sqrt(4s), ζ = 4dM / (2·sqrt(4sM·M)) = d/sqrt(s).
    stiffness = 40.0
    damping = zeta * math.sqrt(stiffness)
    world = world_factory(drop=0.0, suspension_stiffness=stiffness, suspension_compression=damping,
                          suspension_damping=damping)
    expected = _settling_time(zeta, math.sqrt(4 * stiffness))
    sag = G / (4 * stiffness)
    z0 = world.vehicles[0].state().position[2]
    zs = []
    for _ in range(round(3 * expected / world.dt)):
        world.step()
        zs.append(world.vehicles[0].state().position[2])
    deviation = np.abs(np.array(zs) - (z0 - sag))
    outside = np.nonzero(deviation > 0.02 * sag)[0]
    assert len(outside) > 0  # it did start outside the band (it was dropped)
    measured = (outside[-1] + 1) * world.dt
    assert measured == pytest.approx(expected, rel=0.2)


def test_new_projects_and_bundled_robots_are_damped_like_road_vehicles():
    # ζ = damping / sqrt(stiffness) (heave on four wheels, as above): 0.3-0.5 for what SEAR gives a new
    # project and its bundled robots; the thesis's defaults, which old files carry, stay as they were.
    from sear import resources
    from sear.project import Project
    from sear.starter import NEW_DYNAMICS

    bundled = [Project.load(Path(str(resources.packaged(*name)))).dynamics
               for name in (("demo", "demo.prj"), ("diffbot", "diffbot.prj"))]
    for dynamics in (NEW_DYNAMICS, *bundled):
        for damper in (dynamics.suspension_compression, dynamics.suspension_damping):
            assert 0.3 <= damper / math.sqrt(dynamics.suspension_stiffness) <= 0.5
    assert Dynamics().suspension_damping / math.sqrt(Dynamics().suspension_stiffness) < 0.1


def _husky_world(folder: Path, make_world, drop: bool):
    """pybullet_data's husky.urdf parked on level ground (as tests/physics/test_urdf.py builds it)."""
    from tests.physics.test_urdf import HUSKY, urdf_project

    project = urdf_project(folder, HUSKY, "skid", 100.0)
    project.body.drop_start, project.body.start_altitude = drop, 0.05
    return make_world(project)


def test_parked_urdf_robot_is_at_rest_from_the_first_tick(tmp_path, make_world):
    # A URDF robot's wheels are bodies on joints that Bullet's contacts carry: set down and pre-rolled
    # before t = 0, it is at rest from the first tick and its accelerometer reads g up, as the rover's.
    world = _husky_world(tmp_path / "settled", make_world, drop=False)
    assert world.time == 0.0  # the pre-roll is not on the clock
    speeds, readings = _record(world)
    assert speeds.max() < 1e-3
    assert np.abs(readings - readings.mean(axis=0)).max() < 0.05
    assert readings.mean(axis=0) == pytest.approx([0.0, 0.0, G], abs=0.05)


def test_urdf_drop_start_still_drops(tmp_path, make_world):
    # Positive control of the test above: with Drop start, the Husky falls its 5 cm (g·t at first) and lands.
    world = _husky_world(tmp_path / "dropped", make_world, drop=True)
    speeds, readings = _record(world)
    assert speeds[10] == pytest.approx(G * 11 / 240, rel=0.02)
    assert np.abs(readings - readings.mean(axis=0)).max() > 1.0


BODY_BOTTOM = 0.06
"""m: the rover's body mesh (helpers.make_body) reaches this far below its origin."""


LONG_TRAVEL = {"suspension_stiffness": 1.0, "suspension_rest_length": 0.15, "max_suspension_travel": 0.15}
"""The rover on long, soft springs: fully compressed (length 0), a wheel's centre rises to 0.15 − 0.08 = 0.07 m
above the body origin, its bottom 0.03 m below it, higher than the body's bottom (BODY_BOTTOM): the body
reaches the ground before the bump stops do. Four springs at that pose push at most 4·1·M·0.15 = 0.6·M,
far below the weight M·g."""


@pytest.mark.parametrize("dampers", [{}, {"suspension_compression": 0.0, "suspension_damping": 0.0},
                                     {"suspension_compression": 30.0, "suspension_damping": 30.0}],
                         ids=["rover dampers", "undamped", "most damped"])
def test_springs_too_soft_to_carry_it_rest_it_on_its_body_from_the_first_tick(world_factory, dampers):
    # The chassis rests on its body: the body's lowest face on the ground, the two collision margins
    # (pybullet's, of the chassis and of the terrain) between them.
    world = world_factory(**LONG_TRAVEL, **dampers)
    client, body = world.client, world.vehicles[0].body_id
    margins = p.getDynamicsInfo(body, -1, physicsClientId=client)[11] + \
        p.getDynamicsInfo(world.terrain_ids[0], -1, physicsClientId=client)[11]
    assert world.time == 0.0  # the pre-roll that brought it to rest is not on the clock
    speeds, readings = _record(world, round(SECONDS * 240))
    assert world.vehicles[0].state().position[2] == pytest.approx(BODY_BOTTOM + margins, abs=1e-4)
    assert speeds.max() < 1e-3
    # On its body it rests on pybullet's contacts of a flat face on the terrain's triangles, whose points
    # change now and then where it sits across the two triangles' shared edge (the rover's dampers: a
    # 0.07 m/s² blip at 2.3 s, the speed below 0.3 mm/s; off that edge it stays still, as the next test
    # shows): the accelerometer holds 0.05 m/s² over the first second only.
    first = readings[:240]
    assert np.abs(first - first.mean(axis=0)).max() < 0.05
    assert readings.mean(axis=0) == pytest.approx([0.0, 0.0, G], abs=0.05)


def test_resting_on_its_body_off_the_terrains_diagonal_it_stays_still_all_along(tmp_path, make_world):
    # The 0.07 m/s² blip the test above leaves out (rover dampers, at 2.3 s) is no settling left-over: on the
    # test plane's diagonal, the edge its two triangles share, pybullet's contact points of the flat body face
    # on the two triangles swap now and then (a point on the edge itself), and each swap rocks the body by a
    # few mrad/s. Put down 3 m east, 5 m south of the middle, its body on one triangle only, the same robot
    # reads g up within 0.005 m/s² over all 3 s and never moves 0.1 mm/s.
    project = rover_project(tmp_path, terrain=plane_mesh(), **LONG_TRAVEL)
    project.body.start_east, project.body.start_north = 3.0, -5.0
    world = make_world(project)
    speeds, readings = _record(world, round(SECONDS * 240))
    margins = p.getDynamicsInfo(world.vehicles[0].body_id, -1, physicsClientId=world.client)[11] + \
        p.getDynamicsInfo(world.terrain_ids[0], -1, physicsClientId=world.client)[11]
    assert world.vehicles[0].state().position[2] == pytest.approx(BODY_BOTTOM + margins, abs=1e-4)  # on its body
    assert speeds.max() < 1e-4
    assert np.abs(readings - np.array([0.0, 0.0, G])).max() < 0.005


def test_springs_too_soft_to_carry_it_with_drop_start_still_drop(world_factory):
    # Positive control of the test above: dropped 5 cm, the soft robot falls (g·t at first) and lands.
    speeds, readings = _record(world_factory(drop=0.05, **LONG_TRAVEL))
    assert speeds[10] == pytest.approx(G * 11 / 240, rel=0.02)
    assert np.abs(readings - readings.mean(axis=0)).max() > 1.0


def test_robots_side_by_side_are_each_at_rest_from_the_first_tick(tmp_path, make_world):
    # Several robots in one world: each is settled (a mesh robot) or pre-rolled (a URDF robot) in turn as
    # the world builds it, the others put back as they were after each pre-roll. Two Huskies side by side
    # (0.67 m wide, 1 m apart: 0.33 m between them) and the rover behind them, every one of them at rest
    # from the first tick, reading g up.
    import pybullet_data

    from sear.project import Robot

    husky = Path(pybullet_data.getDataPath()) / "husky" / "husky.urdf"
    project = rover_project(tmp_path)
    project.body.start_east = -1.5
    for name, north in (("left", 0.5), ("right", -0.5)):
        robot = Robot(name=name)
        robot.body.file = husky
        robot.body.start_east, robot.body.start_north = 0.5, north
        robot.dynamics.drive_type, robot.dynamics.engine_force = "skid", 100.0
        project.add_robot(robot)
    world = make_world(project)
    assert len(world.vehicles) == 3 and world.time == 0.0
    befores = [vehicle.state().linear_velocity for vehicle in world.vehicles]
    speeds, readings = [[] for _ in world.vehicles], [[] for _ in world.vehicles]
    for _ in range(TICKS):
        world.step()
        for index, vehicle in enumerate(world.vehicles):
            state = vehicle.state()
            accel = (state.linear_velocity - befores[index]) / world.dt
            befores[index] = state.linear_velocity
            rotation = np.array(p.getMatrixFromQuaternion(state.orientation.tolist())).reshape(3, 3)
            readings[index].append(rotation.T @ (accel + np.array([0.0, 0.0, G])))
            speeds[index].append(float(np.linalg.norm(state.linear_velocity)))
    for index in range(3):
        robot_readings = np.array(readings[index])
        assert max(speeds[index]) < 1e-3, index
        assert np.abs(robot_readings - robot_readings.mean(axis=0)).max() < 0.05, index
        assert robot_readings.mean(axis=0) == pytest.approx([0.0, 0.0, G], abs=0.05)
    # Side by side where they were put, 1 m apart.
    left, right = (world.vehicles[i].state().position for i in (1, 2))
    assert left[1] - right[1] == pytest.approx(1.0, abs=1e-3)
