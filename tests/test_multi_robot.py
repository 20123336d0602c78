"""Several robots in one world: one vehicle, one sensor set and one controller per robot, in lock-step.

Two demo rovers start 4 m apart on flat ground, facing each other, and drive at each other. Checked
against geometry worked out here from their true positions: each one's infrared sensor sees the other
(its reading is the gap between its own nose and the other's nose: centre distance minus the two
half-lengths), neither sees itself, they collide (pybullet reports contact between the two chassis and
their centres never come closer than one body length), and the log has a column block per robot.
"""

from __future__ import annotations

import copy
import csv
import math
from pathlib import Path

import pybullet as p
import pytest

from sear.runtime.simulation import Simulation, TickResult
from tests.physics.helpers import rover_project

HALF_LENGTH = 0.30
"""m: the demo rover's hull is 0.6 m long (sear.demo.make_body), its origin in the middle."""
IR_X = 0.30
"""m: the infrared sensor sits on the nose (x = 0.30 m in the body frame)."""
IR_RANGE = (0.10, 0.80)
"""m: the sensor's minimum and maximum range (Sharp GP2D12)."""

SENSORS = f"""<?xml version='1.0' encoding='UTF-8'?>
<sear-sensors version="1">
  <infrared name="front_ir">
    <pose><x>{IR_X}</x><z>0.02</z></pose>
    <output>analog</output>
    <beam_width_cm>6</beam_width_cm>
    <min_range_cm>{IR_RANGE[0] * 100:g}</min_range_cm>
    <max_range_cm>{IR_RANGE[1] * 100:g}</max_range_cm>
    <resolution_cm>1</resolution_cm>
    <update_rate_hz>26</update_rate_hz>
  </infrared>
</sear-sensors>
"""


@pytest.fixture
def duel(tmp_path: Path):
    """Rovers 'west' (x = -2 m, facing east) and 'east' (x = +2 m, facing west), each with a front IR."""
    project = rover_project(tmp_path)
    (tmp_path / "sensors.xml").write_text(SENSORS)
    project.code.sensors = tmp_path / "sensors.xml"
    project.robot_name = "west"
    project.body.start_east = -2.0
    east = copy.deepcopy(project.robots[0])
    east.name = "east"
    east.body.start_east = 2.0
    east.body.rotation = (0.0, 0.0, 1.0, 0.0)  # yaw 180°: facing west
    project.add_robot(east)
    simulation = Simulation(project, log_path=tmp_path / "run.csv")
    yield simulation
    simulation.close()


def test_two_robots_see_each_other_on_ir_and_collide(duel: Simulation, tmp_path: Path) -> None:
    west, east = duel.robots
    assert (west.name, east.name) == ("west", "east")
    client = duel.world.client
    samples: dict[str, list[tuple[float | None, float]]] = {"west": [], "east": []}
    closest = math.inf
    touched_at: float | None = None

    def record(_result: TickResult) -> None:
        nonlocal closest, touched_at
        gap_centres = float(east.state.position[0] - west.state.position[0])
        closest = min(closest, gap_centres)
        nose_to_nose = gap_centres - 2 * HALF_LENGTH  # sensor on one nose, the other's nose facing it
        for run in (west, east):
            ir = run.sensors.sensor("front_ir")
            if ir.last_sample_time == duel.world.time:
                samples[run.name].append((run.sim.read("front_ir"), nose_to_nose))
        if touched_at is None and p.getContactPoints(west.vehicle.body_id, east.vehicle.body_id,
                                                     physicsClientId=client):
            touched_at = duel.world.time

    for run in (west, east):
        run.sim.accelerate(10.0)  # 0.5 m/s² each: they meet after about 2.6 s
    duel.run(3.5, after_tick=record)

    for name, got in samples.items():
        seen = [(reading, gap) for reading, gap in got if reading is not None]
        assert len(seen) >= 3, f"{name} saw the other robot on only {len(seen)} samples"
        for reading, gap in seen:
            assert reading == pytest.approx(gap, abs=0.015), name
        # Nothing read while the other robot was out of range: its own body is never seen.
        far = [reading for reading, gap in got if gap > IR_RANGE[1] + 0.05]
        assert len(far) > 10 and all(reading is None for reading in far), name
    assert touched_at is not None and 2.0 < touched_at < 3.5, "the two chassis never touched"
    assert closest > 2 * HALF_LENGTH - 0.03, f"the robots passed into each other (centres {closest:.3f} m apart)"


def test_log_has_a_column_block_per_robot(duel: Simulation, tmp_path: Path) -> None:
    west, east = duel.robots
    duel.run(1.0)  # both drop onto the ground and settle
    west.sim.accelerate(10.0)
    duel.run(1.0)
    duel.stop_log()
    with open(tmp_path / "run.csv", newline="") as fh:
        rows = list(csv.reader(fh))
    header, last = rows[0], dict(zip(rows[0], rows[-1], strict=True))
    assert header[0] == "time"
    for name in ("west", "east"):
        assert [c for c in header if c.startswith(f"{name}.")] == [
            f"{name}.truth.{c}" for c in ("x", "y", "z", "roll", "pitch", "yaw", "speed")] + [
            f"{name}.front_ir.distance"]
    assert len(rows) == 1 + round(2.0 * 60)  # a row per control tick at 60 Hz
    assert float(last["time"]) == pytest.approx(2.0)
    assert float(last["west.truth.x"]) == pytest.approx(float(west.state.position[0]), abs=1e-6)
    assert float(last["east.truth.x"]) == pytest.approx(float(east.state.position[0]), abs=1e-6)
    assert float(last["west.truth.speed"]) > 0.3 and float(last["east.truth.speed"]) < 0.02  # only west drove
    assert float(last["east.truth.yaw"]) == pytest.approx(math.pi, abs=0.01) or \
        float(last["east.truth.yaw"]) == pytest.approx(-math.pi, abs=0.01)
