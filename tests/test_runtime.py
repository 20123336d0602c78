"""Headless runs: the CSV log, determinism, the command line, and the demo driving its route."""

from __future__ import annotations

import csv
import math
import signal
import subprocess
import sys

import numpy as np
import pytest

from sear.project import Project
from sear.runtime import TRUTH_COLUMNS, Simulation

from .physics.helpers import rover_project


def _sear(*args, cwd=None, timeout=120):
    return subprocess.run([sys.executable, "-m", "sear", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=timeout)


def test_log_has_time_truth_and_every_sensor_column(demo_copy, tmp_path):
    project = Project.load(demo_copy / "demo.prj")
    simulation = Simulation(project, seed=3, log_path=tmp_path / "log.csv")
    simulation.run(3.0)  # user code not started: the robot drops 5 cm and settles
    simulation.close()
    with open(tmp_path / "log.csv", newline="") as fh:
        rows = list(csv.reader(fh))
    assert rows[0][:8] == ["time", *TRUTH_COLUMNS]
    expected_sensor_columns = [
        "front_ir.distance", "front_sonar.distance", "gps.latitude", "gps.longitude", "gps.altitude",
        "lidar.min", "accel.x", "accel.y", "accel.z", "gyro.x", "gyro.y", "gyro.z", "compass.heading",
        "odometer.distance", "odometer.ticks",
    ]
    assert rows[0][8:] == expected_sensor_columns
    assert len(rows) == 1 + 180  # one row per control tick (60 Hz) for 3 s
    assert float(rows[-1][0]) == pytest.approx(3.0)
    # At rest the accelerometer feels +1 g up (ADXL335 noise and 1 % scale error within 0.15 m/s²).
    accel_z = rows[0].index("accel.z")
    assert float(rows[-1][accel_z]) == pytest.approx(9.81, abs=0.15)
    # Full LIDAR scans go beside the CSV: the first at the first step, then every 0.1 s up to 3.0 s.
    scans = np.load(tmp_path / "log.lidar.npz")
    assert scans["lidar.ranges"].shape == (31, 180)
    assert scans["lidar.time"][:3] == pytest.approx([1 / 240, 0.1, 0.2], abs=1e-9)
    minimum = rows[0].index("lidar.min")
    logged = [float(r[minimum]) for r in rows[1:] if r[minimum]]
    assert logged, "no row has a LIDAR minimum"
    assert all(0.0 <= m <= 8.0 for m in logged)  # within the demo LIDAR's max_range_m


def test_same_seed_same_log_and_another_seed_another(demo_copy, tmp_path):
    def run(seed, name):
        simulation = Simulation(Project.load(demo_copy / "demo.prj"), seed=seed, log_path=tmp_path / name)
        simulation.start_user_code()
        simulation.run(3.0)
        simulation.close()
        return (tmp_path / name).read_bytes()

    a, b, c = run(7, "a.csv"), run(7, "b.csv"), run(8, "c.csv")
    assert a == b
    assert a != c  # the GPS, IMU and compass noise differ


def test_demo_drives_its_route_in_sixty_seconds(demo_copy, tmp_path):
    result = _sear("run", str(demo_copy / "demo.prj"), "--headless", "--duration", "60", "--log",
                   str(tmp_path / "demo.csv"))
    assert result.returncode == 0, result.stderr
    assert "reached corner" in result.stdout
    with open(tmp_path / "demo.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    xs = [float(r["truth.x"]) for r in rows]
    ys = [float(r["truth.y"]) for r in rows]
    path = sum(math.hypot(x1 - x0, y1 - y0) for x0, y0, x1, y1 in zip(xs, ys, xs[1:], ys[1:], strict=False))
    assert path > 40.0
    # It visits the corners of its 12 m square (GPS error of a metre or two allowed).
    for cx, cy in [(12.0, 0.0), (12.0, 12.0), (0.0, 12.0)]:
        assert min(math.hypot(x - cx, y - cy) for x, y in zip(xs, ys, strict=True)) < 3.0


def test_cli_exit_codes(tmp_path, demo_copy):
    assert _sear("run", str(demo_copy / "demo.prj"), "--headless", "--duration", "0.5").returncode == 0
    usage = _sear("run")
    assert usage.returncode == 2 and "usage" in usage.stderr
    assert _sear("run", str(demo_copy / "demo.prj"), "--duration", "-1").returncode == 2

    project = rover_project(tmp_path / "p")
    code = tmp_path / "p" / "crash.py"
    code.write_text("def main_loop(sim):\n    raise RuntimeError('boom')\n")
    project.code.user_code = code
    project.save(tmp_path / "p" / "crash.prj")
    result = _sear("run", str(tmp_path / "p" / "crash.prj"), "--headless", "--duration", "0.5")
    assert result.returncode == 1
    assert "RuntimeError: boom" in result.stdout + result.stderr
    assert "crash.py" in result.stdout + result.stderr


def test_cli_stuck_hook_ends_the_run_cleanly(tmp_path):
    project = rover_project(tmp_path / "p")
    code = tmp_path / "p" / "stuck.py"
    code.write_text("def main_loop(sim):\n    while True:\n        pass\n")
    project.code.user_code = code
    project.code.hook_timeout = 0.5
    project.save(tmp_path / "p" / "stuck.prj")
    result = _sear("run", str(tmp_path / "p" / "stuck.prj"), "--headless", "--duration", "5", timeout=30)
    assert result.returncode == 1
    assert "stuck at line 2" in result.stdout + result.stderr
    assert "Traceback" not in result.stderr


def test_ctrl_c_ends_a_headless_run_keeping_its_log(tmp_path):
    project = rover_project(tmp_path / "p")
    code = tmp_path / "p" / "drive.py"
    code.write_text("def main_loop(sim):\n    sim.accelerate(20.0)\n    if sim.time > 0.5:\n"
                    "        print('running', flush=True)\n")
    project.code.user_code = code
    project.save(tmp_path / "p" / "drive.prj")
    log = tmp_path / "drive.csv"
    proc = subprocess.Popen([sys.executable, "-m", "sear", "run", str(tmp_path / "p" / "drive.prj"), "--headless",
                             "--duration", "600", "--log", str(log)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline() == "running\n"  # past 0.5 simulated s, inside the loop
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 130 and "interrupted" in err and "simulated" in out
    with open(log, newline="") as fh:
        rows = list(csv.reader(fh))
    assert rows[0][:8] == ["time", *TRUTH_COLUMNS] and len(rows) > 30
    # Every row whole, up to the interrupt: the signal can land between the print at t = 0.517 s and that
    # tick's log row, so the last row is at least the 0.5 s one.
    assert {len(r) for r in rows} == {8} and float(rows[-1][0]) >= 0.5
