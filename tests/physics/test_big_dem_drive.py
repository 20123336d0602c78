"""A 500 m drive across a 4097² GeoTIFF DEM (issue 29, slow tier): the paged terrain carries the rover all
the way (its GPS altitude stays at its mount height above the DEM under it, to 5 cm), and a LIDAR tilted at
the ground reads the DEM's ranges to 1 cm of casts computed here from the DEM's own triangles."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sear.geo import geodetic_to_enu
from sear.models.meshfiles import load_terrain
from sear.runtime.simulation import Simulation
from sear.sensors.config import Pose
from sear.sensors.gps import GpsConfig
from sear.sensors.lidar import LidarConfig
from tests.models.geotiff import write_dem

from .helpers import dem_cast, dem_height, rover_project

pytestmark = pytest.mark.slow

SIDE, PIXEL, BASE = 4097, 1.0, 250.0


def hills() -> np.ndarray:
    y = np.arange(SIDE, dtype=np.float64)[:, None] * PIXEL
    x = np.arange(SIDE, dtype=np.float64)[None, :] * PIXEL
    z = BASE + 6.0 * np.sin(x / 180.0) * np.cos(y / 230.0) + 3.0 * np.sin((x + y) / 95.0 + 1.0)
    return (z + 0.4 * np.sin(x / 23.0) * np.sin(y / 31.0)).astype(np.float32)


def test_a_rover_drives_500_m_across_a_4097_dem_on_its_surface_and_its_lidar_reads_it(tmp_path):
    z = hills()
    path = tmp_path / "dem.tif"
    write_dem(path, z, pixel=PIXEL, utm=(17, 500_000.0, 3_900_000.0))
    project = rover_project(tmp_path / "rover")
    project.terrain.file = path
    model = load_terrain(project.terrain)
    assert model.mesh is None and model.geo_origin is not None  # paged; the file says where it lies
    project.terrain.latitude, project.terrain.longitude, project.terrain.altitude = model.geo_origin
    project.body.start_east = -250.0
    gps = GpsConfig(name="gps", update_rate_hz=2.0, pose=Pose(z=0.2))
    lidar = LidarConfig(name="lidar", angle_step_deg=2.0, resolution_mm=0.0, max_range_m=8.0,
                        layers_deg=(-12.0, -5.0), update_rate_hz=2.0, pose=Pose(x=0.2, z=0.16))
    sim = Simulation(project, sensor_configs=[gps, lidar])
    try:
        world = sim.world
        lat0, lon0, alt0 = world.geodetic_origin
        rover = world.vehicles[0]
        clearance = None
        worst, beams, samples, lidar_error = 0.0, 0, 0, 0.0
        lidar_sensor = sim.sensors.sensor("lidar")
        while sim.state.position[0] < 250.0 and world.time < 900.0:
            _x, y, _ = sim.state.position
            rover.accelerate(40.0 if np.linalg.norm(sim.state.linear_velocity) < 3.0 else 0.0)  # ~3 m/s
            rover.steer(max(-0.3, min(0.3, -0.8 * y - 2.0 * math.atan2(sim.state.linear_velocity[1], 1.0))))
            sim.tick()
            if lidar_sensor.last_sample_time is not None and abs(lidar_sensor.last_sample_time - world.time) < 1e-9:
                lat, lon, alt = sim.sensors.read("gps")
                east, north, _ = geodetic_to_enu(lat, lon, alt, lat0, lon0, alt0)
                # altitude above the DEM under the antenna: the DEM's heights are altitudes (the project's
                # origin altitude is the DEM's height at its centre)
                above = alt - dem_height(z, PIXEL, east, north)
                clearance = above if clearance is None else clearance
                worst = max(worst, abs(above - clearance))
                starts, ends = lidar_sensor.rays(sim.state)
                reading = np.asarray(sim.sensors.read("lidar"), dtype=float).ravel()
                expected = np.array([dem_cast(z, PIXEL, s, e) for s, e in zip(starts, ends, strict=True)]) * 8.0
                hit = expected < 8.0
                beams += int(hit.sum())
                assert np.isnan(reading[~hit]).all()
                lidar_error = max(lidar_error, float(np.abs(reading[hit] - expected[hit]).max()))
                assert lidar_error < 0.01, world.time
                samples += 1
        print(f"\n500 m drive: {world.time:.0f} s simulated, GPS altitude above the DEM {clearance:.4f} m "
              f"+- {worst:.4f} m; LIDAR: {beams} terrain returns in {samples} scans, largest error "
              f"{lidar_error * 1000:.3f} mm; tiles loaded {world.pager.loads if world.pager else 0}, "
              f"dropped {world.pager.drops if world.pager else 0}")
        assert sim.state.position[0] >= 250.0, (world.time, sim.state.position)
        assert abs(sim.state.position[1]) < 5.0
        assert samples > 100 and beams > 100 * samples
        assert clearance is not None and 0.1 < clearance < 0.6
        assert worst < 0.05, worst
        pager = world.pager
        assert pager is not None and pager.drops > 0 and len(pager.loaded) <= 9
    finally:
        sim.close()
