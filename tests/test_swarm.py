"""The swarm controller (project.simulation.swarm): one process runs every robot's user code, each robot
with its own module, `sim` and state, in the same lock-step turns as a process per robot.

Checked: the same run with and without the swarm writes the same log byte for byte (each robot's commands
come from its own readings alike), every robot's module globals are its own (a counter each robot's
main_loop steps once per tick reads the tick count, not the robots' total), all robots' code runs in one
process; a robot whose code raises is reported by name and stopped while the others go on; a hook that
never returns ends the swarm with a message naming the robot and its line, and leaves no process behind.
"""

from __future__ import annotations

import copy
import os
import re
from pathlib import Path

import pytest

from sear.runtime.simulation import Simulation
from tests.physics.helpers import rover_project

COUNTER = """
ticks = 0

def init(sim):
    sim.accelerate(5.0)

def main_loop(sim):
    global ticks
    ticks += 1
    sim.steer(0.01 * ticks if sim.time < 1.0 else 0.0)
    if ticks % 30 == 0:
        print("ticks", ticks, "at", round(sim.time, 3))
"""

RAISES = """
def main_loop(sim):
    if sim.time > 0.5:
        raise ValueError("robot b gives up")
"""

HANGS = """
def main_loop(sim):
    while sim.time > 0.5:
        pass
"""

ROBOTS = ("a", "b", "c")


def _project(folder: Path, codes: dict[str, str], *, swarm: bool):
    project = rover_project(folder)
    project.robot_name = ROBOTS[0]
    template = copy.deepcopy(project.robots[0])
    for index, name in enumerate(ROBOTS):
        robot = project.robots[0] if index == 0 else copy.deepcopy(template)
        if index:
            robot.name = name
            project.add_robot(robot)
        robot.body.start_north = 3.0 * index
        file = folder / f"{name}.py"
        file.write_text(codes.get(name, COUNTER))
        robot.code.user_code = file
        robot.code.hook_timeout = 1.0
    project.simulation.swarm = swarm
    return project


def _children() -> set[int]:
    """The pids of this process's children (Linux /proc)."""
    me = str(os.getpid())
    found = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if stat[1] == me and stat[0] != "Z":
                found.add(int(entry))
    return found


def _run(folder: Path, codes: dict[str, str], *, swarm: bool, seconds: float = 1.0):
    out: list[str] = []
    before = _children()
    simulation = Simulation(_project(folder, codes, swarm=swarm), log_path=folder / "run.csv", output=out.append)
    try:
        simulation.start_user_code()
        controllers = _children() - before
        simulation.run(seconds)
        errors = [str(run.user_error) if run.user_error else None for run in simulation.robots]
    finally:
        simulation.close()
    assert _children() - before == set()  # nothing left behind
    return "".join(out), (folder / "run.csv").read_bytes(), controllers, errors


def test_a_swarm_runs_as_a_process_per_robot_does_with_its_own_state_per_robot(tmp_path):
    alone_out, alone_log, alone_pids, _ = _run(tmp_path / "alone", {}, swarm=False)
    swarm_out, swarm_log, swarm_pids, errors = _run(tmp_path / "swarm", {}, swarm=True)
    assert len(alone_pids) == len(ROBOTS) and len(swarm_pids) == 1
    assert errors == [None] * len(ROBOTS)
    assert swarm_log == alone_log
    # 1 s at 60 Hz control: 60 ticks, a print every 30 of each robot's own ticks.
    for name in ROBOTS:
        lines = [line for line in swarm_out.splitlines() if line.startswith(f"[{name}] ticks")]
        assert [line.split()[2] for line in lines] == ["30", "60"], swarm_out
    assert sorted(swarm_out.splitlines()) == sorted(alone_out.splitlines())


def test_a_robot_that_raises_stops_alone(tmp_path):
    out, _, _, errors = _run(tmp_path, {"b": RAISES}, swarm=True)
    assert errors[0] is None and errors[2] is None
    assert errors[1] is not None and "robot b gives up" in errors[1] and "b.py" in errors[1]
    assert "[b] " in out and "ValueError" in out
    # The others went on to the end (their 60th tick, half a second after b stopped at 0.5 s).
    for name in ("a", "c"):
        assert f"[{name}] ticks 60 at" in out


def test_a_hook_that_hangs_ends_the_swarm_naming_the_robot_and_its_line(tmp_path):
    out, _, pids, errors = _run(tmp_path, {"c": HANGS}, swarm=True)
    assert len(pids) == 1
    assert errors[0] is None and errors[1] is None
    assert errors[2] is not None
    assert "robot c's main_loop(sim) did not return within 1 s" in errors[2]
    assert re.search(r"c\.py, line [34]:", errors[2]) and "stuck at line" in errors[2]  # the while loop
    assert "all 3 robots" in errors[2]
    assert not any(run for run in pids if Path(f"/proc/{run}").exists())
    # No turn after the hang: robots a and b printed their 30th tick (0.5 s) but not their 60th.
    assert "[a] ticks 30" in out and "[a] ticks 60" not in out


if __name__ == "__main__":
    pytest.main([__file__])
