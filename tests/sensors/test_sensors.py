"""Sensor models against values computed independently: geometry, geodesy, physics, statistics."""

from __future__ import annotations

import math

import numpy as np
import pybullet as p
import pytest
from geographiclib.geodesic import Geodesic

from sear.errors import SearError
from sear.sensors.compass import CompassConfig
from sear.sensors.config import Pose
from sear.sensors.gps import GpsConfig, nmea_checksum
from sear.sensors.imu import AccelerometerConfig, GyroscopeConfig
from sear.sensors.lidar import SICK_NO_RETURN, LidarConfig
from sear.sensors.odometer import OdometerConfig
from sear.sensors.range import InfraredConfig, UltrasonicConfig, cone_directions, ray_count
from sear.sensors.suite import SensorSuite
from sear.state import VehicleState

ORIGIN = (35.3, -80.7, 230.0)


@pytest.fixture
def client():
    cid = p.connect(p.DIRECT)
    yield cid
    p.disconnect(cid)


def box(client, centre, half, yaw=0.0):
    shape = p.createCollisionShape(p.GEOM_BOX, halfExtents=half, physicsClientId=client)
    return p.createMultiBody(0, shape, basePosition=centre,
                             baseOrientation=p.getQuaternionFromEuler((0, 0, yaw)), physicsClientId=client)


def state(t=0.0, pos=(0, 0, 0), yaw=0.0, pitch=0.0, vel=(0, 0, 0), ang=(0, 0, 0), wheels=None):
    q = np.array(p.getQuaternionFromEuler((0.0, pitch, yaw)))
    return VehicleState(time=t, position=np.array(pos, float), orientation=q, linear_velocity=np.array(vel, float),
                        angular_velocity=np.array(ang, float), wheel_angles=wheels or {},
                        wheel_radii={w: 0.1 for w in (wheels or {})})


def suite(client, *configs, seed=0, ignore=()):
    return SensorSuite(list(configs), rng=np.random.default_rng(seed), client=client, ignore_bodies=list(ignore),
                       origin=ORIGIN)


# --- GPS ---------------------------------------------------------------------------------------------

def test_gps_after_driving_100_m_north_and_100_m_east(client):
    s = suite(client, GpsConfig(name="gps"))
    s.update(state(pos=(0, 100, 0)))
    north = s.read("gps")
    # 100 m of meridian arc at 35.3° N: M = a(1-e²)/(1-e² sin²φ)^1.5 = 6,356,0xx m -> 0.000901° (the guide's figure).
    assert north.latitude - 35.3 == pytest.approx(0.000901, abs=5e-7)
    line = Geodesic.WGS84.Inverse(35.3, -80.7, north.latitude, north.longitude)
    assert line["s12"] == pytest.approx(100.0, abs=0.01) and line["azi1"] == pytest.approx(0.0, abs=1e-4)
    s2 = suite(client, GpsConfig(name="gps"))
    s2.update(state(pos=(100, 100, 0)))
    ne = s2.read("gps")
    line = Geodesic.WGS84.Inverse(35.3, -80.7, ne.latitude, ne.longitude)
    assert line["s12"] == pytest.approx(math.hypot(100, 100), abs=0.01)
    assert line["azi1"] == pytest.approx(45.0, abs=1e-3)


@pytest.mark.parametrize("east,north", [(10_000.0, 0.0), (0.0, -10_000.0), (7071.0, 7071.0)])
def test_gps_is_exact_within_10_km(client, east, north):
    s = suite(client, GpsConfig(name="gps"))
    s.update(state(pos=(east, north, 0)))
    fix = s.read("gps")
    line = Geodesic.WGS84.Inverse(35.3, -80.7, fix.latitude, fix.longitude)
    d = math.hypot(east, north)
    # Sphere of radius R, origin 230 m above it: the plane point d away is seen from the centre at
    # atan(d / (R + 230)), so its ground point lies R·atan(d / (R + 230)) away, and it stands
    # sqrt((R + 230)² + d²) - R above the ground (the ellipsoid's curvature changes this by < 0.01 m).
    radius = 6_371_000.0
    top = radius + 230.0
    assert line["s12"] == pytest.approx(radius * math.atan(d / top), abs=0.1)
    assert math.radians(line["azi1"]) == pytest.approx(math.atan2(east, north), abs=0.1 / d)
    assert fix.altitude == pytest.approx(math.sqrt(top**2 + d**2) - radius, abs=0.1)


def test_gps_nmea_sentences_have_valid_checksums_and_the_fix(client):
    s = suite(client, GpsConfig(name="gps", string_type="nmea"))
    s.update(state(t=3723.5, pos=(100, 100, 0), vel=(1.0, 1.0, 0.0)))
    fix = s.read("gps")
    gga, rmc = fix.nmea.split("\r\n")
    for sentence in (gga, rmc):
        body, checksum = sentence[1:].split("*")
        value = 0
        for ch in body.encode():
            value ^= ch
        assert checksum == f"{value:02X}" == nmea_checksum(body)
    fields = gga.split(",")
    assert fields[0] == "$GPGGA" and fields[1] == "010203.50"
    lat = int(fields[2][:2]) + float(fields[2][2:]) / 60
    lon = -(int(fields[4][:3]) + float(fields[4][3:]) / 60)
    assert (fields[3], fields[5]) == ("N", "W")
    assert lat == pytest.approx(fix.latitude, abs=1e-7) and lon == pytest.approx(fix.longitude, abs=1e-7)
    r = rmc.split(",")
    assert r[0] == "$GPRMC" and r[2] == "A"
    assert float(r[7]) == pytest.approx(math.sqrt(2) * 3600 / 1852, abs=0.01)  # knots
    assert float(r[8]) == pytest.approx(45.0, abs=0.1)                          # course, true
    assert fix.dms.startswith("35°18'") and fix.dms.endswith("W")


def test_gps_noise_has_the_stated_accuracy(client):
    # Bandwidth 100 Hz: correlation time 1.6 ms, so 1 Hz fixes are independent draws.
    s = suite(client, GpsConfig(name="gps", noise=True, accuracy_m=3.0, bandwidth_hz=100.0), seed=5)
    errors = []
    for k in range(3000):
        s.update(state(t=float(k)))
        fix = s.read("gps")
        line = Geodesic.WGS84.Inverse(35.3, -80.7, fix.latitude, fix.longitude)
        errors.append(line["s12"])
    rms = math.sqrt(np.mean(np.square(errors)))
    assert rms == pytest.approx(3.0, rel=0.05)


# --- compass -------------------------------------------------------------------------------------------

def test_compass_through_a_full_turn(client):
    for yaw_deg in range(0, 360, 15):
        s = suite(client, CompassConfig(name="c"))
        s.update(state(yaw=math.radians(yaw_deg)))
        # ENU yaw is counter-clockwise from east; a compass reads clockwise from north.
        expected = (90.0 - yaw_deg) % 360.0
        assert (s.read("c") - expected + 180) % 360 - 180 == pytest.approx(0.0, abs=1e-6)
    s = suite(client, CompassConfig(name="c", output_unit="rad"))
    s.update(state(yaw=math.radians(-90)))  # facing south
    assert s.read("c") == pytest.approx(math.pi)


# --- accelerometer ---------------------------------------------------------------------------------------

def test_accelerometer_at_rest_flat_and_on_a_10_degree_slope(client):
    s = suite(client, AccelerometerConfig(name="a"))
    for k in range(3):
        s.update(state(t=k * 0.02))
    assert s.read("a") == pytest.approx((0.0, 0.0, 9.81), abs=1e-9)
    tilted = suite(client, AccelerometerConfig(name="a"))
    # Nose 10° up (REP 103: negative pitch about y raises +x).
    for k in range(3):
        tilted.update(state(t=k * 0.02, pitch=math.radians(-10)))
    x, y, z = tilted.read("a")
    assert x == pytest.approx(9.81 * math.sin(math.radians(10)), abs=1e-9)
    assert y == pytest.approx(0.0, abs=1e-9)
    assert z == pytest.approx(9.81 * math.cos(math.radians(10)), abs=1e-9)


def test_accelerometer_reads_zero_in_free_fall_and_clips_at_full_scale(client):
    s = suite(client, AccelerometerConfig(name="a"))
    for k in range(3):
        t = k * 0.02
        s.update(state(t=t, vel=(0, 0, -9.81 * t)))
    assert s.read("a") == pytest.approx((0, 0, 0), abs=1e-9)
    hard = suite(client, AccelerometerConfig(name="a", max_range_g=2.0))
    for k in range(3):
        t = k * 0.02
        hard.update(state(t=t, vel=(50.0 * t, 0, 0)))  # 50 m/s² forward: over 2 g
    assert hard.read("a").x == pytest.approx(2.0 * 9.80665)


def test_accelerometer_quantises_at_the_adc_step(client):
    # ADXL335: 300 mV/g through a 3.22 mV ADC step -> steps of 0.010733 g.
    s = suite(client, AccelerometerConfig(name="a", resolution_mv_per_g=300.0, adc_step_mv=3.22))
    s.update(state())
    step = 3.22 / 300.0 * 9.80665
    z = s.read("a").z
    assert z / step == pytest.approx(round(9.81 / step), abs=1e-9)
    assert abs(z - 9.81) <= step / 2


def test_accelerometer_noise_statistics_match_the_definition(client):
    cfg = AccelerometerConfig(name="a", noise=True, noise_stddev_mps2=0.05, bandwidth_hz=100.0)
    s = suite(client, cfg, seed=11)
    zs = []
    for k in range(4000):
        s.update(state(t=k * 0.01))
        zs.append(s.read("a").z)
    zs = np.array(zs)
    assert zs.mean() == pytest.approx(9.81, abs=3 * 0.05 / math.sqrt(len(zs)))
    assert zs.std() == pytest.approx(0.05, rel=0.05)


# --- gyroscope -------------------------------------------------------------------------------------------

def test_gyroscope_in_a_steady_turn(client):
    rate = 0.7  # rad/s, counter-clockwise
    s = suite(client, GyroscopeConfig(name="g"))
    deg = suite(client, GyroscopeConfig(name="g", output_unit="deg/s"))
    for k in range(10):
        t = k / 50.0
        st = state(t=t, yaw=rate * t, ang=(0, 0, rate))
        s.update(st)
        deg.update(st)
    assert s.read("g") == pytest.approx((0.0, 0.0, rate), abs=1e-9)
    assert deg.read("g").z == pytest.approx(math.degrees(rate), abs=1e-7)


def test_gyroscope_noise_bias_and_drift(client):
    cfg = GyroscopeConfig(name="g", noise=True, noise_stddev_dps=0.1, output_unit="deg/s", bandwidth_hz=100.0)
    s = suite(client, cfg, seed=2)
    zs = []
    for k in range(4000):
        s.update(state(t=k * 0.01))
        zs.append(s.read("g").z)
    assert np.std(zs) == pytest.approx(0.1, rel=0.05) and abs(np.mean(zs)) < 3 * 0.1 / math.sqrt(4000)
    # Bias random walk: after T seconds the bias has spread walk·sqrt(T) across runs.
    finals = []
    for seed in range(300):
        drift = suite(client, GyroscopeConfig(name="g", noise=True, bias_walk_dps=0.02, output_unit="deg/s",
                                              bandwidth_hz=10.0), seed=seed)
        for k in range(101):
            drift.update(state(t=k * 0.1))
        finals.append(drift.read("g").z)
    assert np.std(finals) == pytest.approx(0.02 * math.sqrt(10.0), rel=0.15)


# --- odometer ----------------------------------------------------------------------------------------

def test_odometer_counts_ticks_of_the_wheel_rotation(client):
    s = suite(client, OdometerConfig(name="o", ticks_per_rev=360, wheels=("left_rear", "right_rear")))
    s.update(state(wheels={"left_rear": 0.0, "right_rear": 0.0}))
    turned = 10.0 / 0.1  # rad for 10 m on a 0.1 m wheel
    s.update(state(t=0.02, wheels={"left_rear": turned, "right_rear": turned}))
    reading = s.read("o")
    assert reading.ticks == int(turned / (2 * math.pi) * 360)
    assert reading.distance == pytest.approx(10.0, abs=2 * math.pi * 0.1 / 360)


# --- range sensors ---------------------------------------------------------------------------------------

def test_cone_pattern_follows_the_thesis_rule():
    # 6 cm beam, 1 cm resolution: cones of radius 3, 2.5, 2, 1.5 cm (stop when radius - 1 <= 0), each with
    # floor(2·pi·r / 1) rays, plus the axis ray.
    expected = 1 + sum(math.floor(2 * math.pi * r) for r in (3.0, 2.5, 2.0, 1.5))
    dirs = cone_directions(0.06, 0.8, 0.01)
    assert len(dirs) == expected == ray_count(0.06, 0.01)
    assert np.allclose(np.linalg.norm(dirs, axis=1), 1.0)
    widest = math.degrees(math.atan2(0.03, 0.8))
    assert math.degrees(np.arccos(dirs[:, 0].min())) == pytest.approx(widest)


@pytest.mark.parametrize("wall_at,expected", [(0.20, 0.20), (0.55, 0.55), (0.75, 0.75), (0.05, None), (1.2, None)])
def test_infrared_reads_the_wall_distance_within_its_range(client, wall_at, expected):
    box(client, (wall_at + 0.05, 0, 0.5), (0.05, 2.0, 1.0))  # wall face at x = wall_at
    s = suite(client, InfraredConfig(name="ir", pose=Pose(z=0.1)))
    s.update(state())
    if expected is None:
        assert s.read("ir") is None
    else:
        assert s.read("ir") == pytest.approx(expected, abs=1e-4)


def _pole(client, x, y, radius=0.004):
    shape = p.createCollisionShape(p.GEOM_CYLINDER, radius=radius, height=2.0, physicsClientId=client)
    return p.createMultiBody(0, shape, basePosition=(x, y, 1.0), physicsClientId=client)


def test_a_cone_sees_a_thin_pole_off_axis_that_a_single_ray_misses(client):
    _pole(client, 0.5, 0.015)
    cone = suite(client, InfraredConfig(name="ir", pose=Pose(z=0.1)))
    single = suite(client, InfraredConfig(name="ir", pose=Pose(z=0.1), beam_width_cm=1.0))
    cone.update(state())
    single.update(state())
    # Nearest point of the pole's surface seen along the beam: about 0.5 m minus its radius.
    assert cone.read("ir") == pytest.approx(0.5, abs=0.01)
    assert single.read("ir") is None


def test_digital_infrared_switches_at_its_distance(client):
    for wall_at, detected in ((0.20, True), (0.30, False)):
        cid = p.connect(p.DIRECT)
        box(cid, (wall_at + 0.05, 0, 0.5), (0.05, 2.0, 1.0))
        s = suite(cid, InfraredConfig(name="d", output="digital", switching_distance_cm=24.0, pose=Pose(z=0.1)))
        s.update(state())
        assert s.read("d") is detected
        p.disconnect(cid)


def test_ultrasonic_ignores_an_oblique_wall_but_sees_a_square_one(client):
    for angle, seen in ((60.0, False), (10.0, True)):
        cid = p.connect(p.DIRECT)
        # A wall crossing the axis 2 m ahead, turned so its normal is `angle` from the beam axis.
        box(cid, (2.0, 0.0, 0.5), (0.05, 5.0, 1.0), yaw=math.radians(angle))
        s = suite(cid, UltrasonicConfig(name="us", pose=Pose(z=0.3)))
        s.update(state())
        reading = s.read("us")
        if seen:
            # Nearest echo is slightly nearer than the axis hit (2 m - half thickness / cos 10°).
            axis = 2.0 - 0.05 / math.cos(math.radians(10))
            assert reading is not None and axis * 0.97 < reading <= axis + 0.0254
        else:
            assert reading is None
        p.disconnect(cid)


def test_lidar_in_a_square_room_reads_the_geometry(client):
    # Room 4 m x 4 m: wall inner faces at x, y = ±2. The sensor sits off centre and turned.
    for x, y in ((2.1, 0), (-2.1, 0), (0, 2.1), (0, -2.1)):
        box(client, (x, y, 0.5), (0.1, 2.2, 1.0) if x else (2.2, 0.1, 1.0))
    sx, sy, yaw = 0.3, -0.4, math.radians(20)
    s = suite(client, LidarConfig(name="l", angle_step_deg=0.5, spread_deg=180.0, max_range_m=8.0,
                                  resolution_mm=0.0, pose=Pose(z=0.2)))
    s.update(state(pos=(sx, sy, 0), yaw=yaw))
    scan = s.read("l")
    assert scan.shape == (360,)
    for i, reading in enumerate(scan):
        a = yaw + math.radians(-90.0 + 0.5 * i)
        c, si = math.cos(a), math.sin(a)
        tx = (2.0 - sx) / c if c > 1e-12 else (-2.0 - sx) / c if c < -1e-12 else math.inf
        ty = (2.0 - sy) / si if si > 1e-12 else (-2.0 - sy) / si if si < -1e-12 else math.inf
        assert reading == pytest.approx(min(tx, ty), abs=0.01), i


def test_lidar_reports_nan_beyond_range_and_packs_sick_values(client):
    box(client, (0.0, 3.05, 0.5), (5.0, 0.05, 1.0))  # a wall 3 m to the left only
    s = suite(client, LidarConfig(name="l", angle_step_deg=1.0, spread_deg=180.0, max_range_m=8.0,
                                  resolution_mm=10.0, sick_format=True))
    s.update(state())
    scan = s.read("l")
    assert np.isnan(scan[0]) and np.isnan(scan[90])       # right and ahead: nothing within 8 m
    assert scan[179] == pytest.approx(3.0, abs=0.006)    # left (89° from ahead): the wall
    sick = s.sensor("l").sick
    assert sick.dtype == np.dtype("<u2") and sick[0] == SICK_NO_RETURN
    assert sick[179] == round(scan[179] * 1000)         # 8 m fits 13 bits of millimetres (8.191 m): mm mode
    far = suite(client, LidarConfig(name="l", angle_step_deg=1.0, max_range_m=80.0, sick_format=True))
    far.update(state())
    assert far.sensor("l").sick[179] == round(far.read("l")[179] * 100)  # 80 m needs centimetre mode


def test_multi_layer_lidar_has_a_row_per_layer(client):
    s = suite(client, LidarConfig(name="l", angle_step_deg=1.0, spread_deg=90.0, layers_deg=(-10.0, 0.0, 10.0),
                                  pose=Pose(z=0.5)))
    p.createMultiBody(0, p.createCollisionShape(p.GEOM_PLANE, physicsClientId=client), physicsClientId=client)
    s.update(state())
    scan = s.read("l")
    assert scan.shape == (3, 90)
    # The downward layer meets the floor 0.5 / sin(10°) = 2.88 m ahead; the others see nothing.
    assert scan[0, 45] == pytest.approx(0.5 / math.sin(math.radians(10)), abs=0.01)
    assert np.all(np.isnan(scan[1])) and np.all(np.isnan(scan[2]))


# --- every sensor ------------------------------------------------------------------------------------------

def test_readings_are_none_before_the_first_sample_and_sensors_keep_their_own_rate(client):
    s = suite(client, InfraredConfig(name="ir", update_rate_hz=26.0), GpsConfig(name="gps", update_rate_hz=5.0))
    assert s.read("ir") is None and s.read("gps") is None
    samples = {"ir": 0, "gps": 0}
    last = {"ir": None, "gps": None}
    for k in range(240):
        s.update(state(t=k / 240.0))
        for name in samples:
            t = s.sensor(name).last_sample_time
            if t != last[name]:
                samples[name] += 1
                last[name] = t
    assert samples == {"ir": 26, "gps": 5}


def test_unknown_names_list_the_sensors_that_exist(client):
    s = suite(client, GpsConfig(name="gps"), CompassConfig(name="north"))
    with pytest.raises(SearError, match="'gps', 'north'"):
        s.read("compass")


def test_the_same_seed_gives_the_same_noise(client):
    def readings(seed):
        s = suite(client, GyroscopeConfig(name="g", noise=True, noise_stddev_dps=1.0, bias_stddev_dps=1.0),
                  seed=seed)
        out = []
        for k in range(20):
            s.update(state(t=k * 0.02))
            out.append(s.read("g"))
        return out

    assert readings(1) == readings(1) != readings(2)


def test_rays_ignore_the_robot_itself(client):
    robot = box(client, (0.0, 0.0, 0.1), (0.3, 0.2, 0.1))
    # An infrared sensor behind the body looking forward through it: it must not see its own robot.
    config = InfraredConfig(name="ir", pose=Pose(x=-0.5, z=0.1))
    # Positive control first (ignoring puts the body into the robot's collision group for good): the
    # same rays without the ignore see the body's back face, 0.2 m ahead.
    seeing = suite(client, config)
    seeing.update(state())
    assert seeing.read("ir") == pytest.approx(0.2, abs=0.011)
    blind = suite(client, config, ignore=[robot])
    blind.update(state())
    assert blind.read("ir") is None
