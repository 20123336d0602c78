"""What a ray sensor costs (sear.sensors.cost), against rays counted by hand for each ray-casting type."""

from __future__ import annotations

import pytest

from sear.sensors import cost
from sear.sensors.checks import rays_per_second
from sear.sensors.compass import CompassConfig
from sear.sensors.cost import CasterCost, casts_rays, describe, describe_total, ray_cost, total_cost
from sear.sensors.depth_camera import DepthCameraConfig
from sear.sensors.gps import GpsConfig
from sear.sensors.imu import AccelerometerConfig
from sear.sensors.lidar import LidarConfig
from sear.sensors.range import InfraredConfig, UltrasonicConfig

CASTER = CasterCost(per_sample_s=1e-3, per_ray_s=1e-6)
"""A cost model with round figures (1 ms a sample, 1 µs a ray), so the shares below are worked by hand
whatever the measured RAY_CASTER_COST is."""
VLP16_LAYERS = tuple(float(v) for v in range(-15, 16, 2))


def test_an_infrared_cone_counts_its_nested_cones_and_the_axis():
    # 6 cm beam at 1 cm: cones of radius 3, 2.5, 2, 1.5 cm (the next, 1 cm, is not wider than the resolution);
    # floor(2 pi r / 1 cm) rays around each: 18, 15, 12, 9; and the ray along the axis.
    c = ray_cost(InfraredConfig(name="ir", beam_width_cm=6.0, resolution_cm=1.0, update_rate_hz=26.0), caster=CASTER)
    assert c is not None
    assert c.rays_per_sample == 1 + 18 + 15 + 12 + 9 == 55
    assert c.rays_per_second == 55 * 26 == 1430
    assert c.core_share == pytest.approx(26 * (1e-3 + 55 * 1e-6))  # 0.02743 of a core
    assert not c.heavy and not c.capped
    assert describe(c) == "55 rays × 26 Hz = 1,430 rays/s · about 3 % of one core at real time"


def test_a_digital_infrared_cone_costs_the_same_rays():
    c = ray_cost(InfraredConfig(name="ir", output="digital", beam_width_cm=6.0, resolution_cm=1.0), caster=CASTER)
    assert c is not None and c.rays_per_sample == 55


def test_an_ultrasonic_cone():
    # 10 cm beam at 2 cm: radii 5, 4, 3 cm (2 cm is not wider than the resolution): 15, 12, 9 rays, and the axis.
    c = ray_cost(UltrasonicConfig(name="us", beam_width_cm=10.0, resolution_cm=2.0, update_rate_hz=20.0),
                 caster=CASTER)
    assert c is not None
    assert c.rays_per_sample == 1 + 15 + 12 + 9 == 37
    assert c.rays_per_second == 740
    assert c.core_share == pytest.approx(20 * (1e-3 + 37e-6))


def test_a_planar_lidar_and_a_vlp16():
    planar = ray_cost(LidarConfig(name="l", angle_step_deg=0.5, spread_deg=180.0, update_rate_hz=10.0), caster=CASTER)
    assert planar is not None and planar.rays_per_sample == 360  # 0, 0.5 ... 179.5
    vlp = ray_cost(LidarConfig(name="v", angle_step_deg=0.2, spread_deg=360.0, max_range_m=100.0, update_rate_hz=10.0,
                               layers_deg=VLP16_LAYERS), caster=CASTER)
    assert vlp is not None
    assert vlp.rays_per_sample == 16 * 1800 == 28_800
    assert vlp.rays_per_second == 288_000
    assert vlp.core_share == pytest.approx(10 * (1e-3 + 28_800e-6))  # 0.298
    assert not vlp.heavy
    assert describe(vlp) == "28,800 rays × 10 Hz = 288,000 rays/s · about 30 % of one core at real time"


def test_a_depth_camera_casts_a_ray_per_pixel_and_a_d435_needs_more_than_a_core():
    c = ray_cost(DepthCameraConfig(name="d", width_px=424, height_px=240, update_rate_hz=15.0), caster=CASTER)
    assert c is not None
    assert c.rays_per_sample == 424 * 240 == 101_760
    assert c.rays_per_second == 1_526_400
    assert c.core_share == pytest.approx(15 * (1e-3 + 101_760e-6))  # 1.5414 cores
    assert c.heavy
    assert describe(c) == ("101,760 rays × 15 Hz = 1,526,400 rays/s · about 154 % of one core at real time. "
                           "This sensor alone keeps the simulation below real time on one core.")


def test_above_half_a_core_is_a_warning_below_it_is_not():
    # 2 ms a sample with 0 µs a ray: 251 Hz is 0.502 of a core, 249 Hz 0.498.
    caster = CasterCost(per_sample_s=2e-3, per_ray_s=0.0)
    over = ray_cost(LidarConfig(name="l", update_rate_hz=251.0), caster=caster)
    under = ray_cost(LidarConfig(name="l", update_rate_hz=249.0), caster=caster)
    assert over is not None and under is not None
    assert over.heavy and "More than half a core" in describe(over)
    assert not under.heavy and describe(under).endswith("about 50 % of one core at real time")


def test_a_rate_above_the_physics_rate_counts_as_the_physics_rate():
    c = ray_cost(LidarConfig(name="l", angle_step_deg=1.0, spread_deg=90.0, update_rate_hz=500.0), physics_hz=240.0,
                 caster=CASTER)
    assert c is not None and c.capped
    assert c.rays_per_second == 90 * 240
    assert "90 rays × 240 Hz (the physics rate) = 21,600 rays/s" in describe(c)


def test_sensors_that_cast_no_rays_and_fields_that_disagree_have_no_cost():
    for config in (GpsConfig(name="g"), AccelerometerConfig(name="a"), CompassConfig(name="c")):
        assert ray_cost(config) is None
        assert not casts_rays(config.TYPE)
    assert [t for t in ("infrared", "ultrasonic", "lidar", "depth_camera") if casts_rays(t)] == \
        ["infrared", "ultrasonic", "lidar", "depth_camera"]
    assert ray_cost(LidarConfig(name="l", min_range_m=9.0, max_range_m=8.0)) is None
    # a cone too fine to count (1e9 cm at 1e-6 cm) is refused, not counted for ever
    assert ray_cost(InfraredConfig(name="ir", beam_width_cm=1e9, resolution_cm=1e-6)) is None


def test_the_total_adds_the_ray_sensors_and_skips_the_others():
    configs = [InfraredConfig(name="ir", beam_width_cm=6.0, resolution_cm=1.0, update_rate_hz=26.0),
               GpsConfig(name="g"), LidarConfig(name="l", angle_step_deg=0.5, spread_deg=180.0, update_rate_hz=10.0)]
    total = total_cost(configs, caster=CASTER)
    assert total is not None
    assert total.rays_per_sample == 55 + 360
    assert total.rays_per_second == 1430 + 3600
    assert total.core_share == pytest.approx(26 * (1e-3 + 55e-6) + 10 * (1e-3 + 360e-6))  # 0.04103
    assert describe_total(total, 2) == ("2 ray sensors together: 415 rays a sample, 5,030 rays/s · about 4 % of one "
                                        "core at real time")
    assert total_cost([GpsConfig(name="g")]) is None


def test_the_measured_constant_is_what_the_estimate_uses_by_default(monkeypatch):
    monkeypatch.setattr(cost, "RAY_CASTER_COST", CASTER)
    c = ray_cost(LidarConfig(name="l", angle_step_deg=0.5, spread_deg=180.0, update_rate_hz=10.0))
    assert c is not None and c.core_share == pytest.approx(10 * (1e-3 + 360e-6))


def test_the_run_budget_counts_a_depth_camera_s_pixels():
    # 1280 x 720 at 30 Hz, physics at 240 Hz: 27,648,000 rays a simulated second
    camera = DepthCameraConfig(name="d", width_px=1280, height_px=720, update_rate_hz=30.0)
    assert rays_per_second([camera], 240.0) == 1280 * 720 * 30
