"""A recorded demo run shared by the recording tests: user code driving, keyboard inputs mixed in."""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import pytest

from sear import resources

RECORDED_SECONDS = 3.0
"""Simulated seconds of the shared recording."""
KEYS = ((0.9, 1.3, (1.0, 0.6, False)), (1.8, 2.1, (0.0, 0.0, True)))
"""Keyboard inputs of the shared recording: (from s, to s, (throttle, steer, brake)) held in between."""


class RecordedRun(NamedTuple):
    folder: Path
    project: Path
    mcap: Path
    csv: Path
    seconds: float
    ros2: Path | None
    """The same run in ROS 2's format (--record-format ros2), when asked for."""


def record_demo(folder: Path, seconds: float, *, keys: tuple = KEYS, seed: int = 3, ros2: bool = False
                ) -> RecordedRun:
    """The demo (copied into `folder`) run `seconds` with its user code and the keyboard inputs `keys`
    (held from/to the given simulated times, as the window's held keys call set_manual_input before
    every tick), recorded (with `ros2` also in ROS 2's format) and logged."""
    from sear.loading import load_project
    from sear.recording.fanout import Observers
    from sear.recording.ros2 import Ros2Recorder
    from sear.recording.writer import Recorder
    from sear.runtime.simulation import Simulation

    resources.copy_demo(folder / "demo")
    project = folder / "demo" / "demo.prj"
    mcap, csv, ros2_path = folder / "run.mcap", folder / "run.csv", folder / "run-ros2.mcap"
    observer = Observers(Recorder(mcap), Ros2Recorder(ros2_path)) if ros2 else Recorder(mcap)
    simulation = Simulation(load_project(project), seed=seed, log_path=csv, observer=observer,
                            output=lambda text: None)
    try:
        simulation.start_user_code()

        def held_keys() -> None:
            now = simulation.world.time
            for start, end, (throttle, steer, brake) in keys:
                if start <= now < end:
                    simulation.set_manual_input(throttle, steer, brake)

        simulation.advance(round(seconds * simulation.physics_hz), before_tick=held_keys)
        assert simulation.user_error is None
    finally:
        simulation.close()
    return RecordedRun(folder, project, mcap, csv, seconds, ros2_path if ros2 else None)


@pytest.fixture(scope="package")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> RecordedRun:
    return record_demo(tmp_path_factory.mktemp("recorded"), RECORDED_SECONDS, ros2=True)
