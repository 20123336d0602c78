"""Failures of the user code process are contained: each is reported, the simulation goes on (and a
headless run ends with status 1, its log whole up to the failing tick)."""

from __future__ import annotations

import csv
import subprocess
import sys

import numpy as np
import pytest

from sear.errors import StuckHookError
from sear.runtime.logs import TRUTH_COLUMNS
from sear.runtime.simulation import Simulation

from .failure_cases import CASES
from .physics.helpers import rover_project


def _project(tmp_path, code: str):
    project = rover_project(tmp_path / "p")
    path = tmp_path / "p" / "robot.py"
    path.write_text(code)
    project.code.user_code = path
    project.code.hook_timeout = 0.5
    return project


def _rows(path):
    with open(path, newline="") as fh:
        rows = list(csv.reader(fh))
    assert rows[0][:8] == ["time", *TRUTH_COLUMNS]
    assert len(rows) > 1 and {len(r) for r in rows} == {len(rows[0])}
    return [[float(cell) for cell in row[:8]] for row in rows[1:]]


def _failing_time(text: str) -> float:
    line = next(ln for ln in text.splitlines() if ln.startswith("failing at"))
    return float(line.split()[-1])


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_failing_controller_is_reported_and_the_simulation_goes_on(tmp_path, case):
    code, expected = CASES[case]
    out = []
    simulation = Simulation(_project(tmp_path, code), log_path=tmp_path / "log.csv", output=out.append)
    try:
        simulation.start_user_code()
        simulation.run(0.5)
        text = "".join(out)
        assert simulation.user_error is not None and not simulation.user_code_running
        assert (type(simulation.user_error) is StuckHookError) == (case == "stuck") == simulation.stuck
        for words in expected:
            assert words in text, (words, text)
        # Printed right before the failure, and shown before its report: nothing lost, in order.
        assert text.index("failing at") < text.index("robot.py")
        assert "sear/" not in text.replace(str(tmp_path), "")  # only the user's own frames
        assert simulation.runner.proc.poll() is not None  # its process is gone
        assert simulation.world.time == pytest.approx(0.5)  # the clock ran on
        simulation.set_manual_input(1.0, 0.0, False)  # and the robot can still be driven
        before = simulation.state.position.copy()
        simulation.run(1.0)
        assert simulation.world.time == pytest.approx(1.5)
        assert np.linalg.norm(simulation.state.position[:2] - before[:2]) > 0.05
        # Space in the window: a fresh process, whose init and main_loop run again.
        assert simulation.can_restart and simulation.restart_user_code()
        assert simulation.user_error is None and simulation.user_code_running
    finally:
        simulation.close()
    rows = _rows(tmp_path / "log.csv")
    assert len(rows) == 90 and rows[-1][0] == pytest.approx(1.5)  # every control tick of 1.5 s


@pytest.mark.parametrize("case", sorted(CASES))
def test_headless_a_failing_controller_ends_the_run_with_status_1_and_a_whole_log(tmp_path, case):
    code, expected = CASES[case]
    project = _project(tmp_path, code)
    project.save(tmp_path / "p" / "robot.prj")
    log = tmp_path / "run.csv"
    result = subprocess.run([sys.executable, "-m", "sear", "run", str(tmp_path / "p" / "robot.prj"), "--headless",
                             "--duration", "5", "--log", str(log)], capture_output=True, text=True, timeout=120)
    text = result.stdout + result.stderr
    assert result.returncode == 1, text
    for words in expected:
        assert words in text, (words, text)
    assert "Traceback" not in result.stderr.replace("Traceback (most recent call last):\n  File \"" +
                                                     str(tmp_path), "")
    assert result.stdout.index("failing at") < text.index("robot.py")
    failed_at = _failing_time(result.stdout)
    rows = _rows(log)
    # Whole up to the failing tick, and it ended there: one row per control tick from 1/60 s.
    assert rows[-1][0] == pytest.approx(failed_at)
    assert [r[0] for r in rows] == pytest.approx([(k + 1) / 60 for k in range(len(rows))])


def test_a_print_longer_than_a_protocol_frame_reaches_the_console_whole(tmp_path):
    """One print of 10 MB (more than a frame of the controller protocol holds, 8 MiB) is output, not a
    protocol error that disconnects the user code; what is printed after it follows in order."""
    line = ("abcdefghijklmnopqrstuvwxyz" * 400_000)[:10_000_000]
    code = ("def main_loop(sim):\n    if 0.1 < sim.time < 0.12:  # one control tick, 7/60 s\n"
            "        print(('abcdefghijklmnopqrstuvwxyz' * 400_000)[:10_000_000])\n        print('after')\n")
    out: list[str] = []
    simulation = Simulation(_project(tmp_path, code), output=out.append)
    try:
        simulation.start_user_code()
        simulation.run(0.2)
        assert simulation.user_error is None and simulation.user_code_running
        assert simulation.world.time == pytest.approx(0.2)
    finally:
        simulation.close()
    assert "".join(out) == line + "\nafter\n"
