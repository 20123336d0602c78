"""User code: loading errors, hook errors, the watchdog, the blocking style, lock-step timing."""

from __future__ import annotations

import itertools
import sys
import textwrap

import numpy as np
import pytest

from sear.errors import StuckHookError, UserCodeError
from sear.runtime.simulation import Simulation
from sear.usercode import UserCodeRunner

from .physics.helpers import rover_project


def _project(tmp_path, code: str, timeout: float = 5.0):
    project = rover_project(tmp_path / "p")
    path = tmp_path / "p" / "robot.py"
    path.write_text(textwrap.dedent(code))
    project.code.user_code = path
    project.code.hook_timeout = timeout
    return project


def test_syntax_error_names_file_and_line_before_the_run(tmp_path):
    project = _project(tmp_path, """\
        def main_loop(sim):
            x = (1 +
        """)
    with pytest.raises(UserCodeError) as info:
        Simulation(project)
    assert info.value.line == 2 and "robot.py" in str(info.value) and "syntax error" in str(info.value)


def test_import_failure_names_the_line_with_user_frames_only(tmp_path):
    project = _project(tmp_path, """\
        import math
        import no_such_module_here

        def main_loop(sim):
            pass
        """)
    with pytest.raises(UserCodeError) as info:
        Simulation(project)
    text = str(info.value)
    assert info.value.line == 2 and "ModuleNotFoundError" in text and "no_such_module_here" in text
    assert "sear/usercode.py" not in text and "threading.py" not in text


def test_code_without_hooks_is_refused(tmp_path):
    with pytest.raises(UserCodeError, match="neither main_loop"):
        Simulation(_project(tmp_path, "x = 1\n"))


def test_exception_in_a_hook_stops_user_code_but_not_the_simulation(tmp_path):
    project = _project(tmp_path, """\
        calls = 0

        def main_loop(sim):
            global calls
            calls += 1
            if calls == 3:
                helper()
            print("call", calls)

        def helper():
            return 1 / 0
        """)
    out = []
    simulation = Simulation(project, output=out.append)
    try:
        simulation.start_user_code()
        simulation.run(0.5)
        assert simulation.world.time == pytest.approx(0.5)  # kept simulating
        error = simulation.user_error
        assert error is not None and error.line == 11
        report = "".join(out)
        assert "ZeroDivisionError" in report and "line 7, in main_loop" in report and "line 11, in helper" in report
        assert "sear/" not in report.replace(str(tmp_path), "")
        assert [t for t in out if t.startswith("call")] == ["call 1\n", "call 2\n"]  # not called after the error
    finally:
        simulation.close()


def test_a_stuck_hook_is_killed_reported_with_its_line_and_the_simulation_goes_on(tmp_path):
    project = _project(tmp_path, """\
        def main_loop(sim):
            x = 0
            while True:
                x += 1
        """, timeout=0.5)
    out = []
    simulation = Simulation(project, output=out.append)
    process = simulation.runner.proc
    try:
        simulation.start_user_code()
        simulation.run(1.0)
        assert simulation.world.time == pytest.approx(1.0)  # the clock runs on
        assert simulation.stuck and type(simulation.user_error) is StuckHookError
        text = "".join(out)
        assert "main_loop(sim) did not return within 0.5 s" in text
        assert simulation.user_error.line in (3, 4) and "stuck at line" in text
        assert process.poll() is not None  # the spinning process was ended
        simulation.set_manual_input(1.0, 0.0, False)  # driving by hand still works
        start = simulation.state.position.copy()
        simulation.run(1.0)
        assert np.linalg.norm(simulation.state.position[:2] - start[:2]) > 0.05
    finally:
        simulation.close()


def test_a_hook_that_raises_is_not_taken_for_a_stuck_one(tmp_path):
    # The error's message says "did not return" yet the hook returned: only the class marks a stuck hook.
    project = _project(tmp_path, """\
        def main_loop(sim):
            raise TimeoutError("the motor did not return its position")
        """, timeout=0.5)
    out = []
    simulation = Simulation(project, output=out.append)
    try:
        simulation.start_user_code()
        simulation.run(0.5)
        assert simulation.user_error is not None and not isinstance(simulation.user_error, StuckHookError)
        assert "did not return its position" in "".join(out)
        assert not simulation.stuck and simulation.world.time == pytest.approx(0.5)
    finally:
        simulation.close()
    assert simulation.runner.proc.poll() is not None  # its process ended with the error


def test_the_watchdog_raises_stuck_hook_error_with_the_line_even_in_native_code(tmp_path):
    # Blocked in C (a lock's wait), where no Python signal handler could run: faulthandler still dumps.
    code = tmp_path / "slow.py"
    code.write_text("import threading\nlock = threading.Lock()\n\ndef init(sim):\n    lock.acquire()\n"
                    "    lock.acquire()\n\ndef main_loop(sim):\n    pass\n")
    runner = UserCodeRunner(code, timeout=0.3)
    try:
        runner.start({"sensors": []})
        with pytest.raises(StuckHookError) as info:
            runner.turn("init", {"time": 0.0, "readings": {}})
        assert isinstance(info.value, UserCodeError)  # the CLI and the window report it like any user code error
        assert info.value.line == 6 and "init(sim) did not return within 0.3 s" in info.value.message
        assert runner.proc.poll() is not None
    finally:
        runner.close()


def test_blocking_style_runs_in_lock_step(tmp_path):
    project = _project(tmp_path, """\
        def run(sim):
            print(repr(sim.time))
            sim.wait(1.0)
            print(repr(sim.time))
            for _ in range(3):
                sim.step()
                print(repr(sim.time))
        """)
    out = []
    simulation = Simulation(project, output=out.append)
    try:
        simulation.start_user_code()
        simulation.run(2.0)
        log = [float(t) for t in "".join(out).split()]
        tick = 4 / 240  # control ticks every 4 physics steps at 240/60 Hz
        assert log[0] == pytest.approx(0.0)
        assert log[1] == pytest.approx(1.0, abs=1e-9)
        assert [b - a for a, b in itertools.pairwise(log[1:])] == pytest.approx([tick] * 3)
        assert not simulation.user_code_running  # run() returned
    finally:
        simulation.close()


def test_blocking_code_is_unwound_when_the_simulation_closes(tmp_path):
    project = _project(tmp_path, """\
        def run(sim):
            while sim.step():
                sim.accelerate(10.0)
        """)
    simulation = Simulation(project)
    simulation.start_user_code()
    simulation.run(0.2)
    process = simulation.runner.proc
    simulation.close()
    assert process.poll() == 0  # told to stop, it returned from run(sim) and ended by itself


def test_step_inside_main_loop_is_a_clear_error(tmp_path):
    project = _project(tmp_path, """\
        def main_loop(sim):
            sim.step()
        """)
    out = []
    simulation = Simulation(project, output=out.append)
    try:
        simulation.start_user_code()
        simulation.run(0.1)
        assert "belong in run(sim)" in "".join(out)
    finally:
        simulation.close()


def test_user_print_goes_to_the_console_and_reading_an_unknown_sensor_lists_names(tmp_path):
    project = _project(tmp_path, """\
        def init(sim):
            print("hello", 42)

        def main_loop(sim):
            sim.read("nope")
        """)
    out = []
    simulation = Simulation(project, output=out.append)
    try:
        simulation.start_user_code()
        simulation.run(0.1)
        text = "".join(out)
        assert "hello 42\n" in text
        assert "no sensor named 'nope'" in text
    finally:
        simulation.close()


def test_every_simulate_loads_the_file_afresh(tmp_path):
    project = _project(tmp_path, "print('value', 1)\ndef main_loop(sim):\n    pass\n")
    first = []
    Simulation(project, output=first.append).close()
    project.code.user_code.write_text("print('value', 22)\ndef main_loop(sim):\n    pass\n")
    second = []
    Simulation(project, output=second.append).close()
    assert first == ["value 1\n"] and second == ["value 22\n"]


def test_print_takes_prints_arguments_and_a_users_file(tmp_path):
    project = _project(tmp_path, f"""\
        import sys

        def init(sim):
            print("a", "b", sep="-", end="!\\n", flush=True)
            print("to stderr is the console too", file=sys.stderr)
            with open({str(tmp_path / "mine.txt")!r}, "w") as fh:
                print("kept", 7, file=fh)

        def main_loop(sim):
            pass
        """)
    out = []
    simulation = Simulation(project, output=out.append)
    try:
        assert simulation.user_error is None
        assert out[:2] == ["a-b!\n", "to stderr is the console too\n"]
        assert (tmp_path / "mine.txt").read_text() == "kept 7\n"
    finally:
        simulation.close()


def test_helper_modules_import_from_hooks_and_are_read_afresh_each_load(tmp_path):
    project = _project(tmp_path, """\
        def init(sim):
            import robot_helper
            print("gain", robot_helper.GAIN)

        def main_loop(sim):
            pass
        """)
    helper = project.code.user_code.parent / "robot_helper.py"
    for gain in (1, 22):  # different sizes: a .pyc written the same second must not be reused
        helper.write_text(f"GAIN = {gain}\n")
        out = []
        simulation = Simulation(project, output=out.append)
        simulation.close()
        assert simulation.user_error is None and out == [f"gain {gain}\n"]
    assert str(helper.parent) not in sys.path  # the user's folder is on the user code process's path only


def test_when_the_simulation_ends_step_returns_false_and_code_after_the_loop_runs(tmp_path):
    project = _project(tmp_path, """\
        def run(sim):
            ticks = 0
            while sim.step():
                ticks += 1
            print("loop ended after", ticks, "ticks at", round(sim.time, 6), "s")
            sim.step()                     # stepping on after the end unwinds the code
            print("never printed")
        """)
    out = []
    simulation = Simulation(project, output=out.append)
    simulation.start_user_code()
    simulation.run(0.5)                    # 30 control ticks at 60 Hz
    simulation.close()
    assert out == ["loop ended after 30 ticks at 0.5 s\n"]
    assert simulation.runner.proc.poll() == 0
