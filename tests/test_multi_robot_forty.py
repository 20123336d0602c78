"""Forty robots in one world (no cap on the robot count: sear.collision has one group for all robots).

Twenty pairs of demo rovers stand in a column of rows 1.2 m apart; in each row two rovers face each other
across a gap of their own (12 to 23 cm), and drive at each other. Each rover's infrared sensor sits just
behind its own tail and looks forward through its own body: it must read the distance to its partner's
nose (worked out here from the two rovers' true positions: centre distance + TAIL_GAP), never its own
body, and the partners collide (pybullet reports contact between their chassis, and their centres never
come closer than one body length).
"""

from __future__ import annotations

import copy
import math

import pybullet as p
import pytest

from sear.runtime.simulation import Simulation, TickResult
from tests.physics.helpers import rover_project

PAIRS = 20
HALF_LENGTH = 0.30
"""m: the demo rover's hull is 0.6 m long (sear.demo.make_body), its origin in the middle."""
IR_X = -0.36
"""m: the infrared sensor's place in the body frame, 6 cm behind the tail, looking forward along +x."""
TAIL_GAP = -IR_X - HALF_LENGTH
"""m: from the sensor to its own nose is 0.66 m; to the partner's nose, the centre distance + 0.06 m."""
ROW_SPACING = 1.2
"""m between the rows (y): well outside the sensors' narrow beams."""

SENSORS = f"""<?xml version='1.0' encoding='UTF-8'?>
<sear-sensors version="1">
  <infrared name="ir">
    <pose><x>{IR_X}</x><z>0.02</z></pose>
    <output>analog</output>
    <beam_width_cm>4</beam_width_cm>
    <min_range_cm>20</min_range_cm>
    <max_range_cm>150</max_range_cm>
    <resolution_cm>1</resolution_cm>
    <update_rate_hz>30</update_rate_hz>
  </infrared>
</sear-sensors>
"""


def _gap(pair: int) -> float:
    """m between the two noses of row `pair` at the start: each row its own."""
    return 0.12 + 0.006 * pair


@pytest.fixture(scope="module")
def forty(tmp_path_factory):
    folder = tmp_path_factory.mktemp("forty")
    project = rover_project(folder)
    (folder / "sensors.xml").write_text(SENSORS)
    project.code.sensors = folder / "sensors.xml"
    project.robot_name = "w0"
    first = project.robots[0]
    for pair in range(PAIRS):
        half = HALF_LENGTH + _gap(pair) / 2
        for side, x, yaw in (("w", -half, 0.0), ("e", half, math.pi)):
            robot = first if (side, pair) == ("w", 0) else copy.deepcopy(first)
            robot.name = f"{side}{pair}"
            robot.body.start_east, robot.body.start_north = x, pair * ROW_SPACING
            robot.body.rotation = (0.0, 0.0, math.sin(yaw / 2), math.cos(yaw / 2))
            if robot is not first:
                project.add_robot(robot)
    simulation = Simulation(project)
    yield simulation
    simulation.close()


def test_forty_robots_each_see_their_partner_through_their_own_body_and_collide(forty: Simulation) -> None:
    runs = forty.robots
    assert len(runs) == 2 * PAIRS
    client = forty.world.client
    pairs = [(runs[2 * k], runs[2 * k + 1]) for k in range(PAIRS)]
    checked = [0] * len(runs)
    touched = [False] * PAIRS
    closest = math.inf

    def record(_result: TickResult) -> None:
        nonlocal closest
        for k, (west, east) in enumerate(pairs):
            centres = float(east.state.position[0] - west.state.position[0])
            closest = min(closest, centres)
            for run in (west, east):
                if run.sensors.sensor("ir").last_sample_time == forty.world.time:
                    reading = run.sim.read("ir")
                    assert reading == pytest.approx(centres + TAIL_GAP, abs=0.015), (run.name, reading, centres)
                    checked[run.index] += 1
            if not touched[k] and p.getContactPoints(west.vehicle.body_id, east.vehicle.body_id,
                                                     physicsClientId=client):
                touched[k] = True

    for run in runs:
        run.sim.accelerate(40.0)  # 2 m/s² each: the widest gap closes in 0.35 s
    forty.run(0.5, after_tick=record)
    assert min(checked) >= 10  # every robot's sensor sampled and checked
    assert all(touched), [k for k in range(PAIRS) if not touched[k]]
    assert closest > 2 * HALF_LENGTH - 0.03, f"two robots passed into each other (centres {closest:.3f} m apart)"
