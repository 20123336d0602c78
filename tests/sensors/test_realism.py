"""Sensors as real as their datasheets: a spinning LIDAR's motion skew, dropouts and intensity; latency;
noise that behaves like the part (IMU noise density and bias instability, GPS white noise); and each
sensor's noise from its own stream, so adding a sensor leaves the others' logged noise byte-identical.

Expected values are worked out here with plain geometry and formulas, never with the code under test."""

from __future__ import annotations

import csv
import math

import numpy as np
import pybullet as p
import pytest

from sear.runtime.simulation import Simulation
from sear.sensors.base import FLICKER_TIME_CONSTANTS_S, ImuNoise, flicker_sigmas
from sear.sensors.config import Pose
from sear.sensors.gps import GpsConfig
from sear.sensors.imu import AccelerometerConfig, GyroscopeConfig
from sear.sensors.lidar import LidarConfig
from sear.sensors.suite import SensorSuite
from sear.state import VehicleState, quaternion_to_euler

from ..physics.helpers import rover_project

STEP = 1.0 / 240.0
"""s between the states given to the suite (a physics step)."""
WALL_X = 4.9
"""m: the wall's face, the plane x = WALL_X, facing -x."""
WALL_HALF_Y = 20.0
SPEED, TURN = 2.0, 1.0
"""The robot drives a circle: 2 m/s forward turning left at 1 rad/s (radius 2 m), from the origin heading +x."""
MOUNT = (0.2, 0.0, 0.5)
"""m: where the LIDAR sits on the body."""


@pytest.fixture(scope="module")
def wall():
    client = p.connect(p.DIRECT)
    shape = p.createCollisionShape(p.GEOM_BOX, halfExtents=[0.1, WALL_HALF_Y, 3.0], physicsClientId=client)
    body = p.createMultiBody(0, shape, basePosition=[WALL_X + 0.1, 0.0, 1.0], physicsClientId=client)
    yield client, body
    p.disconnect(client)


def _arc(t: float) -> tuple[np.ndarray, float]:
    """Body position (m) and yaw (rad) at time t on the circle."""
    radius = SPEED / TURN
    return np.array([radius * math.sin(TURN * t), radius * (1.0 - math.cos(TURN * t)), 0.5]), TURN * t


def _state(t: float) -> VehicleState:
    position, yaw = _arc(t)
    return VehicleState(time=t, position=position,
                        orientation=np.array([0.0, 0.0, math.sin(yaw / 2), math.cos(yaw / 2)]),
                        linear_velocity=np.array([SPEED * math.cos(yaw), SPEED * math.sin(yaw), 0.0]),
                        angular_velocity=np.array([0.0, 0.0, TURN]))


def _lidar(name: str, **fields) -> LidarConfig:
    base = dict(name=name, pose=Pose(*MOUNT), angle_step_deg=10.0, spread_deg=360.0, max_range_m=20.0,
                resolution_mm=0.0, update_rate_hz=10.0)
    return LidarConfig(**{**base, **fields})


def _expected_range(t: float, azimuth: float) -> float:
    """Range (m) of a horizontal beam at `azimuth` (rad from the sensor's forward axis) cast at time t
    from the sensor's pose then, to the wall; NaN when it misses."""
    position, yaw = _arc(t)
    origin = position[:2] + np.array([[math.cos(yaw), -math.sin(yaw)], [math.sin(yaw), math.cos(yaw)]]) @ MOUNT[:2]
    heading = yaw + azimuth
    if math.cos(heading) <= 1e-9:
        return math.nan
    distance = (WALL_X - origin[0]) / math.cos(heading)
    y = origin[1] + distance * math.sin(heading)
    return distance if distance <= 20.0 and abs(y) < WALL_HALF_Y else math.nan


def test_a_spinning_lidar_casts_each_beam_from_the_pose_at_its_own_time(wall):
    client, _ = wall
    suite = SensorSuite([_lidar("skewed", motion_skew=True), _lidar("plain")], rng=np.random.default_rng(0),
                        client=client, ignore_bodies=[])
    scans: dict[str, list[tuple[float, np.ndarray]]] = {"skewed": [], "plain": []}
    for k in range(int(0.35 / STEP) + 1):
        for sensor in suite.update(_state(k * STEP)):
            scans[sensor.name].append((sensor.reading_time, sensor.reading.copy()))
    angles = np.arange(36) * 10.0  # scan angles from the sensor's right, counter-clockwise
    azimuths = np.radians(angles - 180.0)
    checked = differing = 0
    for (t, skewed), (t_plain, plain) in zip(scans["skewed"][1:], scans["plain"][1:], strict=True):
        assert t == t_plain and t >= 0.1 - 1e-9
        # Beam i leaves (350° - angle_i) / 360 of the 0.1 s period before the scan's time.
        beam_times = t - (angles[-1] - angles) / 360.0 * 0.1
        expected = np.array([_expected_range(bt, az) for bt, az in zip(beam_times, azimuths, strict=True)])
        unskewed = np.array([_expected_range(t, az) for az in azimuths])
        np.testing.assert_array_equal(np.isnan(skewed), np.isnan(expected))
        np.testing.assert_allclose(skewed, expected, atol=2e-3, equal_nan=True)
        np.testing.assert_allclose(plain, unskewed, atol=2e-3, equal_nan=True)  # positive control
        both = ~np.isnan(expected) & ~np.isnan(unskewed)
        checked += int(np.count_nonzero(~np.isnan(expected)))
        differing += int(np.count_nonzero(np.abs(expected[both] - unskewed[both]) > 0.05))
    assert len(scans["skewed"]) == 4 and checked >= 30
    assert differing >= 10  # skew moves the early beams' hits by centimetres to decimetres


def test_a_reading_with_latency_is_the_undelayed_reading_of_that_much_earlier(wall):
    client, _ = wall
    configs = [_lidar("now", intensity=True), _lidar("late", intensity=True, latency_s=0.1),
               GpsConfig(name="gps_now", update_rate_hz=20.0), GpsConfig(name="gps_late", update_rate_hz=20.0,
                                                                          latency_s=0.1)]
    suite = SensorSuite(configs, rng=np.random.default_rng(0), client=client, ignore_bodies=[])
    # A sensor with a latency logs the time its reading was sampled; one without logs as before.
    assert suite.log_columns() == ["now.min", "late.min", "late.stamp", "gps_now.latitude", "gps_now.longitude",
                                   "gps_now.altitude", "gps_late.latitude", "gps_late.longitude",
                                   "gps_late.altitude", "gps_late.stamp"]
    history: dict[str, dict[float, object]] = {"now": {}, "gps_now": {}}
    compared = 0
    for k in range(int(0.6 / STEP) + 1):
        t = k * STEP
        changed = suite.update(_state(t))
        for name in ("now", "gps_now"):
            sensor = suite.sensor(name)
            if sensor in changed:
                reading = sensor.reading.copy() if name == "now" else tuple(sensor.reading)
                history[name][round(sensor.reading_time, 9)] = (reading, getattr(sensor, "intensities", None))
        late, gps_late = suite.sensor("late"), suite.sensor("gps_late")
        if t < 0.1 - 1e-9:
            assert late.reading is None and gps_late.reading is None and late.reading_time is None
            continue
        # What the delayed sensors show now is what the prompt ones showed 0.1 s ago.
        earlier = max(s for s in history["now"] if s <= t - 0.1 + 1e-9)
        assert late.reading_time == pytest.approx(earlier, abs=1e-9)
        np.testing.assert_array_equal(late.reading, history["now"][earlier][0])
        np.testing.assert_array_equal(late.intensities, history["now"][earlier][1])
        gps_earlier = max(s for s in history["gps_now"] if s <= t - 0.1 + 1e-9)
        assert tuple(gps_late.reading) == history["gps_now"][gps_earlier][0]
        assert gps_late.reading_time == pytest.approx(gps_earlier, abs=1e-9)
        stamp = suite.log_values()[suite.log_columns().index("late.stamp")]
        assert float(stamp) == pytest.approx(earlier, abs=1e-9)
        compared += 1
    assert compared > 100 and len(history["now"]) >= 6


def test_lidar_intensity_and_dropouts_follow_the_lidar_equation(wall):
    client, body = wall
    rho = 0.8
    configs = [_lidar("ideal", dropout_pct=50.0), _lidar("lossy", noise=True, dropout_pct=50.0, intensity=True)]
    suite = SensorSuite(configs, rng=np.random.default_rng(5), client=client, ignore_bodies=[])
    suite.sensors[1].context.reflectivity[body] = rho  # the suite's context: its sensors see the wall so
    other = SensorSuite([_lidar("cut", max_incidence_deg=40.0, intensity=True)], rng=np.random.default_rng(5),
                        client=client, ignore_bodies=[])  # its surfaces have the default reflectivity
    azimuths = np.radians(np.arange(36) * 10.0 - 180.0)
    expected = np.array([_expected_range(0.0, az) for az in azimuths])
    cos = np.where(np.isnan(expected), np.nan, np.cos(azimuths))
    kept = np.zeros(36)
    scans = 300
    for k in range(scans):
        still = VehicleState(time=k * 0.1, position=np.array([0.0, 0.0, 0.5]), linear_velocity=np.zeros(3),
                             orientation=np.array([0.0, 0.0, 0.0, 1.0]), angular_velocity=np.zeros(3))
        suite.update(still)
        ideal, lossy = (suite.sensor(n) for n in ("ideal", "lossy"))
        np.testing.assert_allclose(ideal.reading, expected, atol=2e-3)  # noise off: no dropouts
        kept += ~np.isnan(lossy.reading)
    lost_chance = np.minimum(1.0, 0.5 * (expected / 20.0) ** 2 / (rho * cos))
    hit = ~np.isnan(expected)
    assert np.count_nonzero(hit) >= 10 and np.ptp(lost_chance[hit]) > 0.05
    # Returns kept per beam: binomial about scans x (1 - chance); within 4.5 sigma.
    mean = scans * (1.0 - lost_chance[hit])
    sigma = np.sqrt(scans * lost_chance[hit] * (1.0 - lost_chance[hit])) + 1.0
    assert np.all(np.abs(kept[hit] - mean) < 4.5 * sigma)
    assert np.all(kept[~hit] == 0)
    # Intensity: the wall's reflectivity x cos(incidence) (the wall faces -x: incidence = the beam's azimuth).
    np.testing.assert_allclose(lossy.intensities[~np.isnan(lossy.reading)],
                               (rho * cos)[~np.isnan(lossy.reading)], atol=1e-6)
    other.update(still)
    cut = other.sensor("cut")
    # Beyond 40° from square-on no return (the beams at 50° and more); the default reflectivity (0.5) elsewhere.
    steep = hit & (cos < math.cos(math.radians(45.0)))
    flat = hit & (cos > math.cos(math.radians(35.0)))
    assert np.count_nonzero(steep) >= 2 and np.all(np.isnan(cut.reading[steep]))
    assert np.count_nonzero(flat) >= 5
    np.testing.assert_allclose(cut.reading[flat], expected[flat], atol=2e-3)
    np.testing.assert_allclose(cut.intensities[flat], 0.5 * cos[flat], atol=1e-6)


def test_imu_noise_density_gives_its_white_noise_per_sample_and_flicker_its_allan_floor():
    rate, density = 100.0, 0.005  # °/s/√Hz, the MPU-6050's rate noise density
    white = ImuNoise(np.random.default_rng(1), True, white=0.0, bias=0.0, walk=0.0, scale_pct=0.0,
                     density=density, rate_hz=rate)
    samples = np.array([white.apply((0.0, 0.0, 0.0), 1.0 / rate) for _ in range(20000)])
    # A sample averages white noise of density N over 1/rate s: 1-sigma N sqrt(rate).
    np.testing.assert_allclose(samples.std(axis=0), density * math.sqrt(rate), rtol=0.03)
    off = ImuNoise(np.random.default_rng(1), False, white=0.0, bias=0.0, walk=0.0, scale_pct=0.0,
                   density=density, instability=0.01, rate_hz=rate)
    assert off.apply((1.0, 2.0, 3.0), 0.01) == (1.0, 2.0, 3.0)
    # The flicker processes' Allan deviation, summed from the first-order Gauss-Markov formula (IEEE 952
    # / Xing & Gebre-Egziabher: sigma_A² = (q Tc²/tau)(1 - Tc/(2 tau)(3 - 4 e^(-tau/Tc) + e^(-2 tau/Tc)))
    # with q = 2 s² / Tc), is flat at the floor asked for, from a second to an hour, within 10 %.
    floor = 0.002
    s2 = flicker_sigmas(floor) ** 2
    for tau in np.geomspace(1.0, 3600.0, 25):
        total = 0.0
        for tc in FLICKER_TIME_CONSTANTS_S:
            x = tau / tc
            total += (2 * s2 * tc / tau) * (1 - (3 - 4 * math.exp(-x) + math.exp(-2 * x)) / (2 * x))
        assert math.sqrt(total) == pytest.approx(floor, rel=0.1), tau


def test_gps_white_noise_is_independent_from_fix_to_fix():
    config = GpsConfig(name="gps", noise=True, accuracy_m=0.0, white_noise_m=1.0, update_rate_hz=10.0)
    suite = SensorSuite([config], rng=np.random.default_rng(2), client=-1, ignore_bodies=[])
    ideal = SensorSuite([GpsConfig(name="gps", update_rate_hz=10.0)], rng=np.random.default_rng(2), client=-1,
                        ignore_bodies=[])
    errors = []
    for k in range(2000):
        state = VehicleState(time=k * 0.1, position=np.zeros(3), orientation=np.array([0.0, 0.0, 0.0, 1.0]),
                             linear_velocity=np.zeros(3), angular_velocity=np.zeros(3))
        suite.update(state)
        ideal.update(state)
        noisy, truth = suite.read("gps"), ideal.read("gps")
        errors.append((math.radians(noisy.latitude - truth.latitude) * 6.371e6, noisy.altitude - truth.altitude))
    north, up = np.array(errors).T
    assert north.std() == pytest.approx(1.0, rel=0.06) and up.std() == pytest.approx(1.5, rel=0.06)
    assert abs(np.corrcoef(north[1:], north[:-1])[0, 1]) < 0.08  # white: no correlation between fixes (4 sigma)


def _noisy_sensors() -> list:
    return [AccelerometerConfig(name="accel", noise=True, noise_density_ug_rthz=400.0, bias_instability_ug=60.0,
                                accuracy_pct=3.0, bias_stddev_mps2=0.05, bandwidth_hz=50.0),
            GyroscopeConfig(name="gyro", noise=True, noise_density_dps_rthz=0.005, bias_instability_dph=20.0,
                            bandwidth_hz=50.0),
            GpsConfig(name="gps", noise=True, accuracy_m=2.0, white_noise_m=0.5, update_rate_hz=5.0),
            _lidar("lidar", noise=True, noise_stddev_mm=20.0, dropout_pct=30.0, max_range_m=8.0)]


def _log(tmp_path, name: str, configs: list) -> list[dict[str, str]]:
    project = rover_project(tmp_path / name)
    simulation = Simulation(project, seed=11,
                            log_path=tmp_path / f"{name}.csv", sensor_configs=configs)
    try:
        simulation.run(1.0, pace=False)
    finally:
        simulation.close()
    with open(tmp_path / f"{name}.csv", newline="") as fh:
        return list(csv.DictReader(fh))


def test_adding_a_sensor_leaves_every_other_sensors_noise_byte_identical(tmp_path):
    extra = AccelerometerConfig(name="extra", noise=True, noise_stddev_mps2=0.5, bias_stddev_mps2=0.1)
    alone = _log(tmp_path, "alone", _noisy_sensors())
    joined = _log(tmp_path, "joined", [extra, *_noisy_sensors()[::-1]])  # first, and the others reversed
    columns = [c for c in alone[0] if c.split(".")[0] in ("accel", "gyro", "gps", "lidar")]
    assert len(columns) == 3 + 3 + 3 + 1 and len(alone) == len(joined) > 10
    for before, after in zip(alone, joined, strict=True):
        assert [before[c] for c in columns] == [after[c] for c in columns]
    # Positive control: the noise is there (the gyro at rest reads more than its quantum), and the extra
    # sensor's own column reads differently from the accelerometer that has the same part.
    gyro = np.array([[float(row[f"gyro.{a}"]) for a in "xyz"] for row in alone[5:]])
    assert np.all(gyro.std(axis=0) > 1e-4)  # rad/s: 0.005 °/s/√Hz × √50 Hz = 6e-4
    assert [row["extra.x"] for row in joined] != [row["accel.x"] for row in joined]


def test_a_skewed_lidar_on_a_turning_rover_in_a_walled_room(tmp_path):
    """In a run (Embree for the fixed world, the plain LIDAR's rays in the body frame, the skewed one's in
    the world frame in the same batch): each beam of a skewed scan reads the distance to the room's wall
    from the rover's pose at that beam's time, interpolated here between the recorded physics steps."""
    configs = [_lidar("plain", pose=Pose(z=0.16), angle_step_deg=2.0, max_range_m=8.0),
               _lidar("skewed", pose=Pose(z=0.16), angle_step_deg=2.0, max_range_m=8.0, motion_skew=True)]
    simulation = Simulation(rover_project(tmp_path / "p"), sensor_configs=configs)
    try:
        for x1, y1, x2, y2 in ((-3.1, -3.1, 3.1, -3.1), (3.1, -3.1, 3.1, 3.1), (3.1, 3.1, -3.1, 3.1),
                               (-3.1, 3.1, -3.1, -3.1)):
            simulation.sim.add_wall(x1, y1, x2, y2, height=1.0, thickness=0.2)  # inner faces at ±3.0 m
        simulation.run(0.5)
        at_rest = simulation.sensors
        np.testing.assert_allclose(at_rest.read("skewed"), at_rest.read("plain"), atol=1e-6)  # no motion, no skew
        simulation.sim.accelerate(30.0)
        simulation.sim.steer(0.4)
        poses: list[tuple[float, float, float, float]] = []
        scans: list[tuple[float, np.ndarray, np.ndarray]] = []

        def record(tick) -> None:
            state = simulation.state
            poses.append((state.time, state.position[0], state.position[1],
                          quaternion_to_euler(state.orientation)[2]))
            if any(s.name == "skewed" for s in tick.sampled):
                scans.append((state.time, simulation.sensors.read("skewed").copy(),
                              simulation.sensors.read("plain").copy()))

        simulation.run(1.5, after_tick=record)
    finally:
        simulation.close()
    times, xs, ys, yaws = (np.array(column) for column in zip(*poses, strict=True))
    yaws = np.unwrap(yaws)
    azimuths = np.radians(np.arange(180) * 2.0 - 180.0)
    delays = (358.0 - np.arange(180) * 2.0) / 360.0 * 0.1

    def room(x: float, y: float, heading: np.ndarray) -> np.ndarray:
        c, s = np.cos(heading), np.sin(heading)
        with np.errstate(divide="ignore"):
            tx = np.where(np.abs(c) > 1e-12, (np.copysign(3.0, c) - x) / c, np.inf)
            ty = np.where(np.abs(s) > 1e-12, (np.copysign(3.0, s) - y) / s, np.inf)
        return np.minimum(tx, ty)

    differing = 0
    for t, skewed, plain in scans[3:]:
        beam_times = t - delays
        bx, by, byaw = (np.interp(beam_times, times, v) for v in (xs, ys, yaws))
        expected = np.array([room(x, y, np.array(h + az)) for x, y, h, az in zip(bx, by, byaw, azimuths, strict=True)])
        # 1.5 cm: the geometry here leaves out the body's roll and pitch in the turn (the LIDAR, 0.16 m up,
        # moves some millimetres and its beams tilt), which the run has.
        assert np.max(np.abs(skewed - expected)) < 0.015
        unskewed = room(xs[times == t][0], ys[times == t][0], yaws[times == t][0] + azimuths)
        assert np.max(np.abs(plain - unskewed)) < 0.015  # positive control
        differing += int(np.count_nonzero(np.abs(expected - unskewed) > 0.05))
    assert len(scans) >= 12 and differing >= 20
    turned = yaws[-1] - yaws[0]
    assert turned > 0.3  # the rover turned while it scanned
