"""A recording run killed (SIGKILL) at seeded random moments leaves a file that opens and replays up to at
most one simulated second before the kill (its chunks are closed every simulated second)."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sear import resources
from sear.recording import Recording


def _last_time(csv: Path) -> float:
    """The simulated time of the CSV log's last whole row (0 before any)."""
    try:
        text = csv.read_bytes().decode()
    except FileNotFoundError:
        return 0.0
    rows = text.split("\r\n")[1:-1]  # the header, and whatever follows the last CR LF (a row cut short)
    return float(rows[-1].split(",", 1)[0]) if rows else 0.0


def kill_at(folder: Path, moments: list[float]) -> list[tuple[float, Path, Path]]:
    """The demo run with --record and --log in one process per moment (started together), each killed
    once its log reaches its moment (s): [(the log's last row time at the kill, recording, log)]."""
    resources.copy_demo(folder / "demo")
    runs = []
    for index, moment in enumerate(moments):
        mcap, csv = folder / f"killed{index}.mcap", folder / f"killed{index}.csv"
        proc = subprocess.Popen([sys.executable, "-m", "sear", "run", str(folder / "demo" / "demo.prj"), "--headless",
                                 "--duration", "120", "--record", str(mcap), "--log", str(csv)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        runs.append([moment, proc, mcap, csv, None])
    deadline = time.monotonic() + 300
    try:
        while any(run[4] is None for run in runs) and time.monotonic() < deadline:
            for run in runs:
                moment, proc, _mcap, csv, killed = run
                if killed is None and _last_time(csv) >= moment:
                    os.killpg(proc.pid, signal.SIGKILL)  # the run and its user code process
                    proc.wait()
                    run[4] = _last_time(csv)
                elif killed is None and proc.poll() is not None:
                    raise AssertionError(f"the run ended by itself (status {proc.returncode})")
            time.sleep(0.01)
    finally:
        for run in runs:
            if run[1].poll() is None:
                os.killpg(run[1].pid, signal.SIGKILL)
                run[1].wait()
    assert all(run[4] is not None for run in runs), "a run never reached its moment"
    return [(run[4], run[2], run[3]) for run in runs]


def check_killed(killed_at: float, mcap: Path, csv: Path) -> None:
    rec = Recording.open(mcap)
    assert not rec.complete  # no footer: the run was killed
    assert killed_at - 1.0 - 1e-6 <= rec.duration <= killed_at + 1.0
    rows = rec.csv_rows()
    logged = csv.read_bytes().decode()
    assert logged.startswith(rec.csv_header)
    on_disk = [row + "\r\n" for row in logged.split("\r\n")[1:-1]]
    recorded = [row for _t, row in rows]
    # the same rows as the log; the recording may hold one row more: a chunk written at a whole second holds
    # that tick's row, which the log hands to the disk before the next turn of user code (a kill in between)
    common = min(len(on_disk), len(recorded))
    assert recorded[:common] == on_disk[:common] and len(recorded) <= len(on_disk) + 1
    state = rec.state_at(rec.duration)
    pose = state.poses["robot"]
    assert pose is not None and rec.duration - pose.time < 1 / 60 + 1e-9
    if not rows:  # killed before the first second's chunk was written: the start (project, scene, poses) is kept
        assert killed_at < 1.0 + 1e-6 and rec.files and rec.scene() and pose.time == 0.0
        return
    assert rows and rows[-1][0] >= killed_at - 1.0 - 1e-6
    assert state.sensors["robot"]["lidar"] is not None and state.csv_row == rows[-1][1]


def _moments(count: int, seed: int) -> list[float]:
    rng = random.Random(seed)
    return [round(rng.uniform(0.3, 6.0), 3) for _ in range(count)]


def test_killed_runs_read_back_to_a_second_before_the_kill(tmp_path):
    for killed_at, mcap, csv in kill_at(tmp_path, _moments(2, 27)):
        check_killed(killed_at, mcap, csv)


@pytest.mark.slow
@pytest.mark.parametrize("batch", range(10))
def test_twenty_killed_runs(tmp_path, batch):
    """The issue's 20 seeded random moments, two runs at a time."""
    for killed_at, mcap, csv in kill_at(tmp_path, _moments(20, 2027)[2 * batch:2 * batch + 2]):
        check_killed(killed_at, mcap, csv)
