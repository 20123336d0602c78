"""Headless runs: the CSV log, determinism, the command line, and the demo driving its route."""

from __future__ import annotations

import csv
import math
import re
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from sear.project import Project
from sear.runtime.logs import TRUTH_COLUMNS, load_arrays
from sear.runtime.pacer import Pacer
from sear.runtime.simulation import Simulation, TickResult

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
    scans = load_arrays(tmp_path / "log.csv")  # log.arrays/lidar.time.npy, lidar.ranges.npy
    assert sorted(scans) == ["lidar.ranges", "lidar.time"]
    assert np.load(tmp_path / "log.arrays" / "lidar.ranges.npy").shape == (31, 180)  # a plain .npy too
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


def test_tick_says_which_ticks_are_control_ticks_and_which_sensors_sampled(demo_copy):
    project = Project.load(demo_copy / "demo.prj")
    assert (project.simulation.physics_hz, project.simulation.control_hz) == (240.0, 60.0)
    simulation = Simulation(project, seed=1)
    try:
        results = [simulation.tick() for _ in range(240)]  # one simulated second
    finally:
        simulation.close()
    assert all(isinstance(r, TickResult) for r in results) and len(results) == 240
    # 240 Hz physics, 60 Hz control: every 4th tick, counting from the first (tick 1 at t = 1/240 s).
    assert [n for n, r in enumerate(results, start=1) if r.control] == list(range(4, 241, 4))

    def ticks_sampling(name):
        return [n for n, r in enumerate(results, start=1) if name in [s.name for s in r.sampled]]

    # Every sensor samples on the first tick, then on its own period: LIDAR 10 Hz = every 24 ticks,
    # GPS 5 Hz = every 48, sonar 20 Hz = every 12.
    assert ticks_sampling("lidar") == [1, *range(24, 241, 24)]
    assert len(ticks_sampling("lidar")[1:]) == 10
    assert ticks_sampling("gps") == [1, *range(48, 241, 48)]
    assert ticks_sampling("front_sonar") == [1, *range(12, 241, 12)]
    quiet = [r for r in results if not r.sampled]
    assert quiet and all(r.sampled == () for r in quiet)


def test_run_advances_exactly_the_steps_of_its_duration(tmp_path):
    simulation = Simulation(rover_project(tmp_path / "p"))
    try:
        assert simulation.run(0.5) == 120 and simulation.steps == 120
        assert simulation.run(1 / 3) == 80 and simulation.steps == 200  # 80.0
        assert simulation.run(0.051) == 12 and simulation.steps == 212  # 12.24 rounds to 12
        assert simulation.world.time == pytest.approx(212 / 240)
        ticks = []
        assert simulation.run(0.1, after_tick=ticks.append) == 24
        assert len(ticks) == 24 and [t.control for t in ticks].count(True) == 6
        # after_tick ends a run early by returning a true value: here on the first control tick, the 4th
        # step at 240 Hz physics and 60 Hz control (after 236 steps, 240 is the next multiple of 4).
        assert simulation.run(1.0, after_tick=lambda result: result.control) == 4
        assert simulation.steps == 240
    finally:
        simulation.close()


def test_a_paced_run_keeps_to_the_wall_clock(tmp_path):
    simulation = Simulation(rover_project(tmp_path / "p"))
    try:
        start = time.perf_counter()
        simulation.run(0.5, pace=True)
        assert time.perf_counter() - start >= 0.45
        assert simulation.steps == 120
    finally:
        simulation.close()


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_the_pacer_asks_for_the_ticks_the_clock_says_catching_up_at_most_a_quarter_second(tmp_path):
    simulation = Simulation(rover_project(tmp_path / "p"))
    clock = _Clock()
    try:
        pacer = Pacer(simulation, clock=clock)
        assert pacer.due() == 0
        clock.now += 0.125
        assert pacer.due() == 30  # 0.125 s behind at 240 Hz
        simulation.advance(30)
        assert pacer.due() == 0
        clock.now += 2.0  # far behind: a quarter second of ticks, and the clock slips
        assert pacer.due() == 60
        simulation.advance(60)
        assert pacer.due() == 0 and pacer.ahead() == pytest.approx(0.25)
        clock.now += 0.5
        assert pacer.due() == 60
        pacer.realtime = False  # as fast as possible: a simulated second a call
        assert pacer.due() == 240
        pacer.until = simulation.world.time + 0.1  # never past the end
        assert pacer.due() == 24 and not pacer.finished
        simulation.advance(pacer.due())
        assert pacer.due() == 0 and pacer.finished
    finally:
        simulation.close()


def test_advance_stops_when_its_wall_budget_is_spent(tmp_path):
    simulation = Simulation(rover_project(tmp_path / "p"))
    try:
        calls = []
        assert simulation.advance(5, before_tick=lambda: calls.append(simulation.steps)) == 5
        assert calls == [0, 1, 2, 3, 4]
        done = simulation.advance(10_000_000, budget=0.05)
        assert 0 < done < 10_000_000
    finally:
        simulation.close()


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
    # The sampled stack is on the `while` (line 2) or the `pass` (line 3): Python 3.11 runs both each turn.
    assert re.search(r"stuck at line [23]\b", result.stdout + result.stderr)
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
