"""`<altitude>` is the altitude of the terrain's surface at its centre, not of the model's z = 0.

The terrain is a heightmap whose centre stands 6 m above the image's black level, so a robot parked
there must read `<altitude>` plus its antenna's height above the ground, never 6 m more.
"""

from __future__ import annotations

import numpy as np
import pybullet as p
import pytest
from PIL import Image

from sear.project import Project
from sear.runtime.simulation import Simulation
from sear.sensors.config import Pose
from sear.sensors.gps import GpsConfig

from .helpers import rover_project

ALTITUDE = 230.0
PLATEAU_GREY, HEIGHT_RANGE = 153, 10.0
PLATEAU = PLATEAU_GREY / 255 * HEIGHT_RANGE
"""Height of the flat middle of the test heightmap above its black level: 6.0 m."""
ANTENNA = (0.05, -0.03, 0.12)
"""GPS mount on the body, m (body frame)."""


def _plateau_project(folder) -> Project:
    """The demo rover on a 16 m heightmap (9 x 9 pixels, 2 m apart): a flat 8 m square plateau PLATEAU
    high in the middle, sloping down to a lower ring and a black edge."""
    pixels = np.zeros((9, 9), dtype=np.uint8)
    pixels[1:8, 1:8] = 60
    pixels[2:7, 2:7] = PLATEAU_GREY
    project = rover_project(folder)
    Image.fromarray(pixels, mode="L").save(folder / "hills.png")
    project.terrain.file = folder / "hills.png"
    project.terrain.heightmap_size, project.terrain.heightmap_height = 16.0, HEIGHT_RANGE
    project.terrain.altitude = ALTITUDE
    return project


def test_gps_altitude_of_a_robot_parked_on_a_raised_centre(tmp_path):
    project = _plateau_project(tmp_path)
    gps = GpsConfig(name="gps", update_rate_hz=10.0, pose=Pose(*ANTENNA))
    simulation = Simulation(project, sensor_configs=[gps])
    try:
        simulation.world.vehicles[0].brake(20.0)
        simulation.run(3.0)
        state = simulation.state
        rotation = np.array(p.getMatrixFromQuaternion(state.orientation.tolist())).reshape(3, 3)
        antenna = state.position + rotation @ np.array(ANTENNA)
        above_ground = antenna[2] - PLATEAU
        assert 0.1 < above_ground < 0.5  # the rover stands on the plateau, not on z = 0
        fix = simulation.sensors.read("gps")
        assert fix.altitude == pytest.approx(ALTITUDE + above_ground, abs=1e-3)
    finally:
        simulation.close()


def test_absolute_start_altitude_is_above_the_same_sea_level(tmp_path):
    """An absolute start at the centre `h` m above `<altitude>` is a relative start `h` m above the
    ground there: the wheels' lowest point `h` m above the plateau."""
    h = 0.3
    relative = _plateau_project(tmp_path / "rel")
    relative.body.start_altitude = h
    absolute = _plateau_project(tmp_path / "abs")
    absolute.body.start_mode = "absolute"
    absolute.body.start_latitude, absolute.body.start_longitude = absolute.terrain.latitude, absolute.terrain.longitude
    absolute.body.start_abs_altitude = ALTITUDE + h
    wheel_bottom = 0.08 + 0.1  # demo rover: wheel centres 0.08 m below the body origin, radius 0.1 m
    for project in (relative, absolute):
        project.body.drop_start = True  # the altitudes are those of a drop start
        simulation = Simulation(project, sensor_configs=[])
        try:
            assert simulation.world.start_poses[0][0] == pytest.approx([0.0, 0.0, PLATEAU + h + wheel_bottom],
                                                                    abs=1e-4)
        finally:
            simulation.close()
