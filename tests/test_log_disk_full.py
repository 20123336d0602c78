"""A log whose disk fills up during the run (issue 25 item 1): the run stops at the failing write with one
sentence naming the file and the space needed, the CSV ends with its last whole row, the arrays load; no
traceback, nothing left behind. The failure is made three ways: an injected disk that takes N bytes, the
kernel's file size limit (RLIMIT_FSIZE, EFBIG) in a subprocess, and a real 256 KiB tmpfs when mounting is
permitted."""

from __future__ import annotations

import contextlib
import csv
import errno
import os
import resource
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from sear.runtime import logs
from sear.runtime.logs import TRUTH_COLUMNS, load_arrays
from sear.runtime.simulation import Simulation

from .physics.helpers import rover_project

CONTROL_DT = 1 / 60


def _check_log(csv_path: Path) -> list[list[str]]:
    """The CSV ends with a whole row, every row has the header's cells, times go one control tick at a time;
    every array file loads with np.load. Returns the rows after the header."""
    data = csv_path.read_bytes()
    assert data.endswith(b"\r\n"), data[-80:]
    with open(csv_path, newline="") as fh:
        rows = list(csv.reader(fh))
    assert rows[0][:8] == ["time", *TRUTH_COLUMNS]
    assert {len(row) for row in rows} == {len(rows[0])}
    times = [float(row[0]) for row in rows[1:]]
    assert times == pytest.approx([(k + 1) * CONTROL_DT for k in range(len(times))])
    folder = logs.arrays_dir(csv_path)
    if folder.is_dir():
        for npy in folder.glob("*.npy"):
            np.load(npy)  # the header's count matches whole rows on disk
        arrays = load_arrays(csv_path)
        assert arrays and all(len(v) > 0 for v in arrays.values())
    return rows[1:]


class _FillingDisk:
    """os.write onto a disk that takes `room` bytes in all, then fails with ENOSPC (a partial write first,
    as a real file system does when the last blocks fill)."""

    def __init__(self, room: int) -> None:
        self.room = room
        self.failed = False

    def __call__(self, fd: int, data: bytes | bytearray) -> int:
        if self.room <= 0:
            self.failed = True
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        count = os.write(fd, bytes(data[:self.room]))
        self.room -= count
        return count


def _lidar_project(tmp_path: Path):
    project = rover_project(tmp_path / "p")
    sensors = tmp_path / "p" / "sensors.xml"
    sensors.write_text('<?xml version="1.0"?>\n<sear-sensors version="1">\n  <lidar name="lidar">\n'
                       "    <angle_step_deg>2</angle_step_deg>\n    <max_range_m>10</max_range_m>\n"
                       "    <resolution_mm>10</resolution_mm>\n    <spread_deg>180</spread_deg>\n"
                       "    <update_rate_hz>10</update_rate_hz>\n  </lidar>\n</sear-sensors>\n")
    project.code.sensors = sensors
    return project


def test_an_injected_full_disk_stops_the_log_whole_and_says_where(tmp_path, monkeypatch):
    disk = _FillingDisk(60_000)
    monkeypatch.setattr(logs._RawFile, "_write", staticmethod(disk))
    out: list[str] = []
    simulation = Simulation(_lidar_project(tmp_path), log_path=tmp_path / "run.csv", output=out.append)
    try:
        simulation.run(20.0, after_tick=lambda tick: simulation.log_failure is not None)
        failure = simulation.log_failure
        assert disk.failed and failure is not None  # positive control: the disk did fill during the run
        assert simulation.world.time < 20.0  # stopped at the failing write, not at the end
    finally:
        simulation.close()
    text = "".join(out)
    assert "the disk is full" in text and str(failure.path) in text and "free some space" in text
    assert "about" in text and "for the whole run" in text
    rows = _check_log(tmp_path / "run.csv")
    assert len(rows) == failure.rows and float(rows[-1][0]) == pytest.approx(failure.time)
    assert 0 < len(rows) < 20 * 60


def _run_cli(prj: Path, log: Path, tmp: Path, duration: str = "120", preexec=None) -> subprocess.CompletedProcess:
    env = {**os.environ, "TMPDIR": str(tmp)}
    return subprocess.run([sys.executable, "-m", "sear", "run", str(prj), "--headless", "--fast", "--duration",
                           duration, "--log", str(log)], capture_output=True, text=True, timeout=300, env=env,
                          preexec_fn=preexec)


def _processes_mentioning(text: str) -> list[int]:
    found = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            with contextlib.suppress(OSError):
                if text.encode() in (proc / "cmdline").read_bytes():
                    found.append(int(proc.name))
    return found


def _check_cli(result: subprocess.CompletedProcess, log: Path, tmp: Path, reason: str) -> None:
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr and "OSError" not in result.stderr, result.stderr
    assert f"the log could not be written to {log}" in result.stderr and reason in result.stderr
    assert "the run ended early because its log could not be written" in result.stderr
    rows = _check_log(log)
    assert 0 < len(rows) < 120 * 60
    assert sorted(p.name for p in tmp.iterdir()) == []  # nothing left in the run's temporary folder
    assert _processes_mentioning(str(log.parent)) == []  # no process of the run left


@pytest.mark.skipif(not hasattr(resource, "RLIMIT_FSIZE"), reason="no file size limit on this platform")
def test_the_file_size_limit_stops_a_headless_run_cleanly(demo_copy, tmp_path):
    """The kernel refuses writes past RLIMIT_FSIZE with EFBIG (Python ignores SIGXFSZ): the same path as a
    full disk, through real system calls."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    log = tmp_path / "out" / "x.csv"
    log.parent.mkdir()

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (150_000, 150_000))

    result = _run_cli(demo_copy / "demo.prj", log, tmp, preexec=limit)
    _check_cli(result, log, tmp, "ulimit -f")


def test_a_full_tmpfs_stops_a_headless_run_cleanly(demo_copy, tmp_path):
    """The issue's reproduction: --log into a 256 KiB tmpfs (needs permission to mount: root, no sandbox)."""
    full = tmp_path / "FULL"
    full.mkdir()
    if shutil.which("mount") is None or shutil.which("umount") is None:
        pytest.skip("no mount command here")
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(full)],
                             capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip() or mounted.returncode}")
    try:
        tmp = tmp_path / "tmp"
        tmp.mkdir()
        log = full / "x.csv"
        result = _run_cli(demo_copy / "demo.prj", log, tmp)
        _check_cli(result, log, tmp, "the disk is full")
        assert "for the whole run" in result.stderr and "free some space" in result.stderr
    finally:
        subprocess.run(["umount", str(full)], check=True)


@pytest.mark.skipif(not hasattr(resource, "RLIMIT_FSIZE"), reason="no file size limit on this platform")
def test_a_log_that_fails_at_its_last_flush_still_ends_the_run_with_status_1(tmp_path):
    """Once user code has finished (a run(sim) that returns) the rows wait in memory up to a simulated
    second: a run of 0.5 s writes them only when it ends. That last write failing is the same failure,
    reported, with the same exit status."""
    project = rover_project(tmp_path / "p")
    project.code.user_code = tmp_path / "p" / "done.py"
    project.code.user_code.write_text("def run(sim):\n    pass\n")
    project.save(tmp_path / "p" / "robot.prj")
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    log = tmp_path / "out" / "x.csv"
    log.parent.mkdir()

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (800, 800))  # the header fits, 30 rows (1.4 kB) do not

    result = _run_cli(tmp_path / "p" / "robot.prj", log, tmp, duration="0.5", preexec=limit)
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"the log could not be written to {log}" in result.stderr and "Traceback" not in result.stderr
    assert log.read_bytes().endswith(b"\r\n") and 1 < len(log.read_bytes().splitlines()) < 31


def test_a_batch_run_whose_log_fills_the_disk_is_an_error_not_ok(tmp_path, monkeypatch):
    """sear batch's worker (a --rerun's log): the same failure is the run's error, with the same sentence."""
    from sear.batch.worker import execute

    project = _lidar_project(tmp_path)
    project.code.user_code = tmp_path / "p" / "code.py"
    project.code.user_code.write_text("def main_loop(sim):\n    sim.accelerate(20.0)\n")
    project.save(tmp_path / "p" / "robot.prj")
    disk = _FillingDisk(30_000)
    monkeypatch.setattr(logs._RawFile, "_write", staticmethod(disk))
    log = tmp_path / "run.csv"
    result = execute({"project": str(tmp_path / "p" / "robot.prj"), "params": {}, "seed": 0, "duration": 30.0,
                      "log": str(log), "scratch": str(tmp_path / "scratch")})
    assert disk.failed  # positive control: the disk did fill during the run
    assert result["status"] == "error" and f"the log could not be written to {log}" in result["error"]
    assert result["sim_time_s"] < 30.0
    _check_log(log)
