"""Headless runs put errors on stderr and output on stdout (issue 12 item 7): the user code's error, a
stuck hook, the user's own prints to sys.stderr and SEAR's notices that it falls back to a headless run,
where the summary on stderr says "(above)"; the user's ordinary prints and the summary stay on stdout."""

from __future__ import annotations

import os
import re
import subprocess
import sys

from .physics.helpers import rover_project


def _run(tmp_path, code: str, *extra: str, env=None):
    project = rover_project(tmp_path / "p")
    path = tmp_path / "p" / "code.py"
    path.write_text(code)
    project.code.user_code = path
    project.code.hook_timeout = 0.5
    project.save(tmp_path / "p" / "p.prj")
    return subprocess.run([sys.executable, "-m", "sear", "run", str(tmp_path / "p" / "p.prj"), "--headless",
                           "--duration", "0.5", *extra], capture_output=True, text=True, timeout=120, env=env)


def test_an_error_in_user_code_is_on_stderr_and_ordinary_output_on_stdout(tmp_path):
    result = _run(tmp_path, "def main_loop(sim):\n    print('hello from main_loop')\n"
                            "    raise RuntimeError('boom')\n")
    assert result.returncode == 1
    assert "RuntimeError: boom" in result.stderr and "code.py" in result.stderr
    assert "boom" not in result.stdout
    assert "(above)" in result.stderr
    assert "hello from main_loop" in result.stdout and "hello" not in result.stderr  # positive control
    assert "sear: simulated" in result.stdout


def test_a_stuck_hook_is_reported_on_stderr(tmp_path):
    result = _run(tmp_path, "def main_loop(sim):\n    while True:\n        pass\n")
    assert result.returncode == 1
    # The sampled stack is on the `while` (line 2) or the `pass` (line 3): Python 3.11 runs both each turn.
    assert re.search(r"stuck at line [23]\b", result.stderr) and "stuck" not in result.stdout


def test_the_users_prints_to_stderr_go_to_stderr(tmp_path):
    result = _run(tmp_path, "import sys\n\ndef init(sim):\n    print('to err', file=sys.stderr)\n"
                            "    sim.print('sim to err', file=sys.stderr)\n    print('to out')\n\n"
                            "def main_loop(sim):\n    pass\n")
    assert result.returncode == 0, result.stderr
    assert "to err" in result.stderr and "sim to err" in result.stderr and "to err" not in result.stdout
    assert "to out" in result.stdout and "to out" not in result.stderr


def test_the_fallback_to_headless_is_said_on_stderr(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    project = rover_project(tmp_path / "p")
    project.code.user_code = tmp_path / "p" / "code.py"
    project.code.user_code.write_text("def main_loop(sim):\n    pass\n")
    project.save(tmp_path / "p" / "p.prj")
    result = subprocess.run([sys.executable, "-m", "sear", "run", str(tmp_path / "p" / "p.prj"), "--duration",
                             "0.2"], capture_output=True, text=True, timeout=120, env=env)
    assert result.returncode == 0, result.stderr
    assert "no display is available" in result.stderr and "no display" not in result.stdout
    assert "sear: simulated" in result.stdout


def test_a_reader_that_goes_away_ends_the_run_quietly_keeping_the_log(tmp_path):
    """`sear run ... | head`: once the reader closes the pipe the run ends (as a SIGPIPE would end a shell
    tool), with one line on stderr instead of a BrokenPipeError traceback, exit status 141 = 128 + SIGPIPE,
    and the log kept up to there."""
    project = rover_project(tmp_path / "p")
    path = tmp_path / "p" / "code.py"
    path.write_text("def main_loop(sim):\n    for i in range(200):\n        print('line', i)\n")
    project.code.user_code = path
    project.save(tmp_path / "p" / "p.prj")
    log = tmp_path / "a.csv"
    proc = subprocess.Popen([sys.executable, "-m", "sear", "run", str(tmp_path / "p" / "p.prj"), "--headless",
                             "--duration", "30", "--log", str(log)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        first = proc.stdout.readline()  # the positive control: output did flow before the reader left
        proc.stdout.close()
        _, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
        proc.wait()
    assert first == "line 0\n"
    assert proc.returncode == 141, err
    assert "Traceback" not in err and "BrokenPipeError" not in err
    assert "reader went away" in err
    rows = log.read_text().splitlines()
    assert len(rows) >= 2 and rows[0].startswith("time")  # a header and at least one tick
    last_time = float(rows[-1].split(",")[0])
    assert last_time < 30.0 - 1.0  # it ended early, not after the whole 30 s
