"""The worked examples in docs/user-code.md run as written."""

from __future__ import annotations

import re
from pathlib import Path

from sear.runtime.simulation import Simulation
from sear.sensors.config import Pose
from sear.sensors.range import UltrasonicConfig

from .physics.helpers import rover_project

DOC = Path(__file__).resolve().parent.parent / "docs" / "user-code.md"


def _python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S)


def test_the_wall_follower_keeps_about_a_metre_from_the_wall(tmp_path):
    code = next(b for b in _python_blocks() if "right_sonar" in b)
    project = rover_project(tmp_path / "p")
    project.code.user_code = tmp_path / "p" / "robot.py"
    project.code.user_code.write_text(code)
    sonar = UltrasonicConfig(name="right_sonar", beam_width_cm=20.0, resolution_cm=2.54, max_range_cm=400.0,
                             pose=Pose(z=0.05, yaw=-90.0))
    simulation = Simulation(project, sensor_configs=[sonar], output=lambda text: None)
    try:
        simulation.start_user_code()
        simulation.run(20.0)
        assert simulation.user_error is None
        pose = simulation.sim.pose
        assert pose.x > 8.0                      # it drove along the wall
        # The wall's face is at y = -1.4; the sonar sits on the body's centre line.
        assert abs((pose.y + 1.4) - 1.0) < 0.35
    finally:
        simulation.close()


def test_the_blocking_example_stops_and_reports(tmp_path):
    code = next(b for b in _python_blocks() if "def run(sim)" in b)
    project = rover_project(tmp_path / "p")
    project.code.user_code = tmp_path / "p" / "robot.py"
    project.code.user_code.write_text(code)
    out = []
    simulation = Simulation(project, output=out.append)
    try:
        simulation.start_user_code()
        simulation.run(6.0)
        assert simulation.user_error is None and "stopped at" in "".join(out)
    finally:
        simulation.close()
