"""The launcher sits between the command line and the window; the loop imports neither of them."""

from __future__ import annotations

import ast
import csv
import itertools
import math
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

import sear
from sear import launcher

from .physics.helpers import rover_project

SEAR_DIR = Path(sear.__file__).resolve().parent
FRONT_ENDS = ("sear.cli", "sear.launcher", "sear.gui")


def _imported(path: Path) -> set[str]:
    """Every sear module `path` imports, at the top or inside a function (an import run only when a
    function is called is an import all the same)."""
    package = ".".join(path.relative_to(SEAR_DIR.parent).with_suffix("").parts[:-1])
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join([*package.split(".")[: len(package.split(".")) - node.level + 1], base]).strip(".")
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
    return {n for n in names if n == "sear" or n.startswith("sear.")}


def _up(names: set[str], above: tuple[str, ...]) -> set[str]:
    return {n for n in names if any(n == a or n.startswith(a + ".") for a in above)}


def test_the_scan_sees_imports_at_the_top_and_inside_functions():
    # Positive controls: the window imports the loop at the top, the command line the launcher in a function.
    assert "sear.runtime.simulation" in _imported(SEAR_DIR / "gui" / "simwindow.py")
    assert "sear.launcher" in _imported(SEAR_DIR / "cli.py")
    assert _up(_imported(SEAR_DIR / "launcher.py"), ("sear.gui",)) == {
        "sear.gui.simwindow", "sear.gui.simwindow.run_window", "sear.gui.startup", "sear.gui.startup.show_startup",
        "sear.gui.startup.StartupProgress", "sear.gui.replay", "sear.gui.replay.run_replay", "sear.gui.render",
        "sear.gui.render.render"}


def test_the_loop_imports_no_front_end():
    modules = sorted((SEAR_DIR / "runtime").glob("*.py"))
    assert SEAR_DIR / "runtime" / "simulation.py" in modules
    for module in modules:
        assert _up(_imported(module), FRONT_ENDS) == set(), module.name


def test_the_windows_import_neither_the_launcher_nor_the_command_line():
    modules = sorted((SEAR_DIR / "gui").glob("*.py"))
    assert len(modules) >= 5 and SEAR_DIR / "gui" / "simwindow.py" in modules
    for module in modules:
        assert _up(_imported(module), ("sear.cli", "sear.launcher")) == set(), module.name


def test_importing_the_loop_loads_no_front_end():
    code = ("import sys, sear.runtime.simulation; "
            "print(' '.join(sorted(m for m in sys.modules if m.startswith('sear.'))))")
    loaded = set(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                                timeout=120).stdout.split())
    assert {"sear.runtime.simulation", "sear.usercode", "sear.physics.world"} <= loaded  # the check sees what loads
    assert _up(loaded, FRONT_ENDS) == set()


def test_importing_the_launcher_loads_no_physics():
    # `sear` asks the launcher whether there is a display before opening the settings window.
    code = "import sys, sear.launcher; print(' '.join(sorted(sys.modules)))"
    loaded = set(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                                timeout=120).stdout.split())
    assert "sear.launcher" in loaded
    assert not {"pybullet", "numpy", "sear.gui"} & loaded
    assert _up(loaded, ("sear.runtime",)) == set()


SUMMARY = re.compile(r"sear: simulated (\d+\.\d\d) s in \d+\.\d\d s of real time \(\d+\.\dx real time\); the robot "
                     r"drove (\d+\.\d) m and ended (\d+\.\d) m from its start at x=(-?\d+\.\d\d) "
                     r"y=(-?\d+\.\d\d) z=(-?\d+\.\d\d)\.")


def test_a_headless_run_summarises_what_its_log_shows(demo_copy, tmp_path, capsys):
    log = tmp_path / "run.csv"
    status = launcher.run_from_cli(demo_copy / "demo.prj", headless=True, duration=2.0, log=str(log), seed=2,
                                   realtime=None)
    out = capsys.readouterr().out
    assert status == 0
    summary = SUMMARY.search(out)
    assert summary is not None, out
    sim_time, drove, ended, x, y, z = (float(v) for v in summary.groups())
    assert f"sear: log written to {log} (120 rows)." in out  # 2 s of 60 Hz control ticks
    with open(log, newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 120 and sim_time == 2.0
    # The path is measured on the control ticks, which are the log's rows (its first step from the start
    # pose, before the first row, is short: the robot has barely moved in 1/60 s).
    points = [(float(r["truth.x"]), float(r["truth.y"]), float(r["truth.z"])) for r in rows]
    path = sum(math.dist(a, b) for a, b in itertools.pairwise(points))
    assert path > 1.0 and drove == pytest.approx(path, abs=0.06)
    assert ended <= drove + 0.05
    assert (x, y, z) == pytest.approx(points[-1], abs=0.006)


def test_a_realtime_headless_run_keeps_to_the_clock(demo_copy, capsys):
    start = time.perf_counter()
    assert launcher.run_from_cli(demo_copy / "demo.prj", headless=True, duration=0.5, log=None, seed=0,
                                 realtime=True) == 0
    assert time.perf_counter() - start >= 0.45
    assert "sear: simulated 0.50 s" in capsys.readouterr().out


def test_leave_closes_a_finished_run_and_returns_its_status(tmp_path):
    from sear.runtime.simulation import Simulation

    project = rover_project(tmp_path / "p")
    simulation = Simulation(project, log_path=tmp_path / "ok.csv")
    simulation.run(0.1)
    assert launcher.leave(simulation, 130) == 130
    assert simulation.log is None
    with open(tmp_path / "ok.csv", newline="") as fh:
        assert len(list(csv.reader(fh))) == 1 + 6  # closed and whole: 0.1 s of 60 Hz rows


@pytest.mark.parametrize("logged", [False, True])
def test_a_stopped_run_says_its_log_is_kept_only_when_it_writes_one(demo_copy, tmp_path, logged):
    """Stop (SIGTERM) ends a run early: "the log so far is kept" names the log when there is one (--log),
    and is not said when the run writes none (issue 24 item 6)."""
    import os
    import signal

    log = tmp_path / "run.csv"
    command = [sys.executable, "-m", "sear", "run", str(demo_copy / "demo.prj"), "--headless", "--fast",
               "--duration", "3600", *(["--log", str(log)] if logged else [])]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        assert process.stdout is not None
        for line in process.stdout:  # the user code's main loop printed: the loop runs
            if line.startswith("t="):
                break
        process.send_signal(signal.SIGTERM)
        _out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 143 and "terminated" in err, err
    assert ("log so far is kept" in err) == logged, err
    if logged:
        assert f"kept in {log}" in err and log.exists()
