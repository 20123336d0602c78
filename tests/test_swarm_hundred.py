"""A hundred robots driven by one swarm controller process (slow tier): fifty pairs of demo rovers face each
other across a gap of their own (12 to 41 cm, rows 1.2 m apart, in two columns 10 m apart), and each robot's
own user code, all of it in one process, drives it at its partner. Every robot's code ran (each greets once
by name), the user code of all hundred is one process, every pair collides (pybullet reports contact between
the two chassis: no collision between robots is filtered out) and no two robots pass into each other
(centres never closer than one body length)."""

from __future__ import annotations

import copy
import math
import os
from pathlib import Path

import pybullet as p
import pytest

from sear.runtime.simulation import Simulation, TickResult
from tests.physics.helpers import rover_project

pytestmark = pytest.mark.slow

PAIRS = 50
HALF_LENGTH = 0.30
"""m: the demo rover's hull is 0.6 m long (sear.demo.make_body), its origin in the middle."""
ROW_SPACING = 1.2
COLUMN_SPACING = 10.0
CODE = """
greeted = False

def init(sim):
    sim.accelerate(40.0)   # 2 m/s²: the widest gap closes in under 0.5 s

def main_loop(sim):
    global greeted
    if not greeted:
        greeted = True
        print("ready")
"""


def _gap(pair: int) -> float:
    return 0.12 + 0.006 * pair


def test_a_hundred_robots_in_one_swarm_process_drive_into_each_other(tmp_path: Path) -> None:
    project = rover_project(tmp_path)
    (tmp_path / "code.py").write_text(CODE)
    project.code.user_code = tmp_path / "code.py"
    project.simulation.swarm = True
    first = project.robots[0]
    for pair in range(PAIRS):
        half = HALF_LENGTH + _gap(pair) / 2
        centre = (pair % 2) * COLUMN_SPACING
        for side, x, yaw in (("w", centre - half, 0.0), ("e", centre + half, math.pi)):
            robot = first if (side, pair) == ("w", 0) else copy.deepcopy(first)
            robot.name = f"{side}{pair}"
            robot.body.start_east, robot.body.start_north = x, (pair // 2) * ROW_SPACING
            robot.body.rotation = (0.0, 0.0, math.sin(yaw / 2), math.cos(yaw / 2))
            if robot is not first:
                project.add_robot(robot)
    out: list[str] = []
    simulation = Simulation(project, output=out.append)
    try:
        runs = simulation.robots
        assert len(runs) == 2 * PAIRS
        assert simulation.swarm is not None and simulation.swarm.pid is not None
        children = [e for e in os.listdir("/proc") if e.isdigit() and _parent(e) == os.getpid()]
        assert len(children) == 1  # one process for all hundred robots' code
        client = simulation.world.client
        pairs = [(runs[2 * k], runs[2 * k + 1]) for k in range(PAIRS)]
        touched = [False] * PAIRS
        closest = math.inf

        def record(_result: TickResult) -> None:
            nonlocal closest
            for k, (west, east) in enumerate(pairs):
                closest = min(closest, float(east.state.position[0] - west.state.position[0]))
                if not touched[k] and p.getContactPoints(west.vehicle.body_id, east.vehicle.body_id,
                                                         physicsClientId=client):
                    touched[k] = True

        simulation.start_user_code()
        simulation.run(0.6, after_tick=record)
        assert [str(run.user_error) for run in runs if run.user_error is not None] == []
    finally:
        simulation.close()
    text = "".join(out)
    assert sorted(line.split("]")[0][1:] for line in text.splitlines() if line.endswith("] ready")) == \
        sorted(run.name for run in runs)
    assert all(touched), [k for k in range(PAIRS) if not touched[k]]
    assert closest > 2 * HALF_LENGTH - 0.03, f"two robots passed into each other (centres {closest:.3f} m apart)"


def _parent(pid: str) -> int:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return -1
    return int(stat[1]) if stat[0] != "Z" else -1
