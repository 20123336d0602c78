"""Rewind and take over: a re-simulation from a recording's embedded project, seed and inputs equals the
recording at the moment (positions, sensor values, CSV rows byte for byte), and driving goes on from it
(the keyboard, the project's user code, edited user code); `sear run --resume FILE --at T` does it headless."""

from __future__ import annotations

import os
import random
import subprocess
import sys

import numpy as np
import pytest

from sear.recording import Recording, attach_user_code, resimulate
from sear.recording.resume import resume_step
from tests.recording.conftest import record_demo


def _sear(*args: str, cwd=None, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "sear", *args], capture_output=True, text=True, timeout=timeout,
                          cwd=cwd, env=dict(os.environ, PYTHONUNBUFFERED="1"))


def assert_equals_recording(rec: Recording, simulation, log_text: str) -> None:
    """The re-simulated run at its moment against the recording: ground truth, every sensor, the log."""
    t = simulation.world.time
    assert abs(t - round(t * rec.physics_hz) / rec.physics_hz) < 1e-9
    for run in simulation.robots:
        pose = rec.pose(t + 1e-9, run.name)
        assert pose is not None and abs(pose.time - t) < 1e-9
        np.testing.assert_array_equal(run.state.position, pose.position)
        np.testing.assert_array_equal(run.state.orientation, pose.orientation)
        compared = 0
        for sensor in run.sensors.sensors:
            sample = rec.sensor_value(t + 1e-9, run.name, sensor.name)
            if sample is None:
                assert sensor.last_sample_time is None
                continue
            assert sensor.last_sample_time == pytest.approx(sample.time, abs=1e-9)
            if sample.array is not None:
                np.testing.assert_array_equal(np.asarray(sensor.reading, dtype=float), sample.array)
            else:
                from sear.recording.writer import sensor_values

                assert sensor_values(sensor, sensor.reading) == sample.values
            compared += 1
        assert compared >= 6
    expected = rec.csv_header + "".join(row for _t, row in rec.csv_rows(until=t + 1e-9))
    assert log_text == expected


def test_resimulated_moments_equal_the_recording_and_driving_goes_on(recorded, tmp_path):
    rec = Recording.open(recorded.mcap)
    moments = [1.2, random.Random(27).uniform(0.5, recorded.seconds)]  # inside the keyboard input, and one at random
    for index, moment in enumerate(moments):
        log = tmp_path / f"resumed{index}.csv"
        reports: list[tuple[int, int]] = []
        simulation = resimulate(rec, moment, log_path=log, progress=lambda done, total, reports=reports: reports.append(
            (done, total)))
        try:
            assert simulation.steps == resume_step(rec, moment) and simulation.steps % rec.control_every == 0
            assert simulation.world.time <= moment + 1e-9 and moment - simulation.world.time < 1 / 60 + 1e-9
            assert reports and reports[-1] == (simulation.steps, simulation.steps)
            simulation.log.flush()
            assert_equals_recording(rec, simulation, log.read_bytes().decode())
            start = simulation.state.position.copy()
            if index == 0:  # the keyboard takes over: full throttle ahead for a second
                for _ in range(240):
                    simulation.set_manual_input(1.0, 0.0, False)
                    simulation.tick()
            else:  # the recorded project's user code takes over
                obstacles = len(simulation.world.obstacles)
                assert obstacles >= 5  # the demo's init built its trees, boxes and wall in the recorded run
                attach_user_code(simulation)
                assert len(simulation.world.obstacles) == obstacles  # its init again did not build them twice
                simulation.start_user_code()
                simulation.run(1.0)
                assert simulation.user_error is None and simulation.user_code_running
            moved = float(np.linalg.norm(simulation.state.position[:2] - start[:2]))
            assert moved > 0.3, moved
        finally:
            simulation.close()


def test_edited_user_code_takes_over(recorded, tmp_path):
    rec = Recording.open(recorded.mcap)
    code = tmp_path / "edited.py"
    code.write_text("built = []\n\ndef init(sim):\n    sim.print('edited code here')\n    sim.add_box(30.0, 30.0)\n\n"
                    "def main_loop(sim):\n    sim.accelerate(-40.0)\n    sim.steer(0.0)\n"
                    "    if not built:\n        sim.add_box(-30.0, -30.0)\n        built.append(1)\n", encoding="utf-8")
    printed = []
    simulation = resimulate(rec, 2.0)
    try:
        simulation.output_listeners.append(printed.append)
        heading = simulation.robots[0].state.orientation.copy()
        obstacles = len(simulation.world.obstacles)
        attach_user_code(simulation, 0, code)
        assert len(simulation.world.obstacles) == obstacles  # init's add_box left out: the world is as recorded
        assert any("1 world-building call of init (add_box) left out" in text for text in printed), printed
        simulation.start_user_code()
        start = simulation.state.position.copy()
        simulation.run(1.5)
        assert simulation.user_error is None and "edited code here\n" in printed
        assert len(simulation.world.obstacles) == obstacles + 1  # main_loop's add_box is made as usual
        # reversing: the robot ends up behind where it was facing
        from sear.state import quaternion_to_euler

        yaw = quaternion_to_euler(heading)[2]
        ahead = np.array([np.cos(yaw), np.sin(yaw)])
        assert float(np.dot(simulation.state.position[:2] - start[:2], ahead)) < -0.05
    finally:
        simulation.close()


def test_cli_resume_at_writes_the_recorded_rows_then_drives(recorded, tmp_path):
    rec = Recording.open(recorded.mcap)
    log = tmp_path / "resumed.csv"
    result = _sear("run", "--resume", str(recorded.mcap), "--at", "1.5", "--headless", "--duration", "0.5",
                   "--log", str(log), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "re-simulated 1.50 s" in result.stdout
    text = log.read_bytes().decode()
    rows = text.split("\r\n")
    assert len(rows) - 2 == round(2.0 * 60)  # header, rows to 2.0 s, the empty piece after the last CR LF
    expected = rec.csv_header + "".join(row for _t, row in rec.csv_rows(until=1.5 + 1e-9))
    assert text.startswith(expected) and len(text) > len(expected)


def test_cli_resume_needs_at_and_no_project(recorded, tmp_path):
    result = _sear("run", "--resume", str(recorded.mcap), "--headless")
    assert result.returncode == 2 and "--at SECONDS" in result.stderr
    result = _sear("run", "--resume", str(tmp_path / "missing.mcap"), "--at", "1", "--headless")
    assert result.returncode == 1 and "cannot read the recording" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.slow
def test_sixty_seconds_five_moments(tmp_path):
    """The issue's variant: a 60 s recorded run with user code and keyboard inputs, five random moments."""
    keys = tuple((t, t + 0.7, (1.0, (-1) ** i * 0.5, False)) for i, t in enumerate(range(5, 60, 9)))
    run = record_demo(tmp_path, 60.0, keys=keys)
    rec = Recording.open(run.mcap)
    for index, moment in enumerate(sorted(random.Random(60).uniform(1.0, 60.0) for _ in range(5))):
        log = tmp_path / f"resumed{index}.csv"
        simulation = resimulate(rec, moment, log_path=log)
        try:
            simulation.log.flush()
            assert_equals_recording(rec, simulation, log.read_bytes().decode())
            attach_user_code(simulation)
            simulation.start_user_code()
            start = simulation.state.position.copy()
            simulation.run(1.0)
            assert simulation.user_error is None
            assert float(np.linalg.norm(simulation.state.position[:2] - start[:2])) > 0.3
        finally:
            simulation.close()


def test_a_recording_started_mid_run_with_a_pull_resumes_from_the_journal(tmp_path):
    """The window's Record Run ticked at t = 1 s in a run that kept its journal (a window's runs keep one):
    the file holds every input since t = 0 - user code's calls, a held key, the mouse pulling a movable box
    (Simulation.start_pull / pull_to / release_pull, which the window's picker calls) - and re-simulates
    exactly. The same recording from a run without a journal says it cannot be re-simulated."""
    from sear import resources
    from sear.loading import load_project
    from sear.recording.fanout import Observers
    from sear.recording.reader import RecordingError
    from sear.recording.writer import Recorder
    from sear.runtime.simulation import Simulation

    resources.copy_demo(tmp_path / "demo")
    with_journal, without = tmp_path / "late.mcap", tmp_path / "late-no-journal.mcap"
    simulation = Simulation(load_project(tmp_path / "demo" / "demo.prj"), seed=5, journal=True,
                            output=lambda text: None)
    try:
        world = simulation.world
        box = next(i for i, o in enumerate(world.obstacles) if o.kind == "box" and o.dynamic)
        start = world.obstacle_pose(world.obstacles[box])[0].copy()
        simulation.start_user_code()
        simulation.start_pull(world.obstacles[box].body_id, start)
        for step in range(240):  # a second with a held key, the box pulled north
            simulation.set_manual_input(1.0, 0.3, False)
            simulation.pull_to(start + np.array([0.0, 0.004 * step, 0.3]))
            simulation.tick()
        simulation.release_pull()
        first, second = Recorder(with_journal), Recorder(without)
        first.started(simulation)  # as the window's Record Run does, mid-run
        journal, simulation.journal = simulation.journal, None
        second.started(simulation)  # the same, in a run that kept no journal
        simulation.journal = journal
        simulation.observer = Observers(first, second)
        simulation.run(0.5)
        end, box_end = simulation.state.position.copy(), world.obstacle_pose(world.obstacles[box])[0].copy()
    finally:
        simulation.close()
    assert np.linalg.norm(box_end[:2] - start[:2]) > 0.1  # the pull moved the box
    rec = Recording.open(with_journal)
    assert rec.start_time == pytest.approx(1.0) and rec.resumable
    assert rec.csv_rows()[0][0] > 1.0 and rec.pose(0.5) is None
    kinds = [i.kind for i in rec.inputs(until=1.0)]
    assert {"call", "manual", "pull", "pull_to", "release"} <= set(kinds)  # from the journal
    again = resimulate(rec, 1.5 + 1e-9)
    try:
        np.testing.assert_array_equal(again.state.position, end)
        np.testing.assert_array_equal(again.world.obstacle_pose(again.world.obstacles[box])[0], box_end)
    finally:
        again.close()
    late = Recording.open(without)
    assert not late.resumable and late.inputs(until=1.0) == []
    with pytest.raises(RecordingError, match="journal"):
        resimulate(late, 1.5)
