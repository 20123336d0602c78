"""Batches run on the local pool: the table and its metrics against each run's own log, the manifest,
faults survived and retried, Ctrl+C and --resume, and --rerun reproducing a run's log byte for byte."""

from __future__ import annotations

import csv
import hashlib
import io
import itertools
import json
import math
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from sear.batch.command import rerun, run_batch
from sear.batch.results import read_rows
from sear.cli import main
from tests.batch.helpers import make_project, write_sweep


def table(folder: Path) -> list[dict[str, str]]:
    with open(folder / "results.csv", newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def log_rows(path: Path) -> list[dict[str, float]]:
    with open(path, newline="", encoding="utf-8") as fh:
        return [{k: float(v) for k, v in row.items() if v != ""} for row in csv.DictReader(fh)]


@pytest.fixture(scope="module")
def batch(tmp_path_factory) -> Path:
    """Four runs on two workers: two speeds, one of them towards a wall, two seeds."""
    folder = tmp_path_factory.mktemp("pool")
    make_project(folder)
    sweep = write_sweep(folder, """project = "bot.prj"
duration = 2.0
timeout = 120
seeds = [1, 2]

[vary]
code.MODE = ["ok", "wall"]

[set]
code.SPEED = 2.0
code.WALL_AT = 1.5
""")
    stream = io.StringIO()
    status = run_batch(sweep, workers=2, stream=stream)
    assert status == 0, stream.getvalue()
    return folder / "sweep-results"


def test_every_run_is_a_row_with_its_parameters_and_its_metrics_match_its_own_log(batch):
    rows = table(batch)
    assert [(r["run_id"], r["param.code.MODE"], r["seed"]) for r in rows] == [
        ("run-0000", "ok", "1"), ("run-0001", "ok", "2"), ("run-0002", "wall", "1"), ("run-0003", "wall", "2")]
    assert all(r["status"] == "ok" and r["attempts"] == "1" and r["error"] == "" for r in rows)
    for row in rows:
        log = log_rows(batch / "runs" / row["run_id"] / "log.csv")
        last = log[-1]
        assert last["time"] == pytest.approx(2.0) and float(row["sim_time_s"]) == pytest.approx(2.0)
        assert float(row["final_x"]) == pytest.approx(last["truth.x"], abs=1e-6)
        assert float(row["final_y"]) == pytest.approx(last["truth.y"], abs=1e-6)
        path = sum(math.dist((a["truth.x"], a["truth.y"], a["truth.z"]), (b["truth.x"], b["truth.y"], b["truth.z"]))
                   for a, b in itertools.pairwise(log))
        assert float(row["distance_m"]) == pytest.approx(path, rel=0.02, abs=0.01)
        sonar = [r["front_sonar.distance"] for r in log if "front_sonar.distance" in r]
        if row["param.code.MODE"] == "wall":
            assert sonar and float(row["min_range.front_sonar"]) == pytest.approx(min(sonar), abs=1e-6)
        else:  # nothing in the sonar's range all run long: no minimum either
            assert sonar == [] and row["min_range.front_sonar"] == row["min_range_m"] == ""
        # The user code's result(sim): its own count of main_loop calls, one per control tick as the log's rows.
        assert row["result.ticks"] == str(len(log)) == "120" and row["result.mode"] == row["param.code.MODE"]
        assert float(row["result.east"]) == pytest.approx(float(row["final_x"]), abs=1e-9)
    free, walled = rows[0], rows[2]
    # The wall's face is 1.4 m east of the start and the body's front 0.3 m ahead of its centre: the walled
    # robot's centre stops short of 1.1 m (+ a little give); the free one drives past 1.5 m in the 2 s.
    assert int(walled["collisions"]) >= 1 and int(free["collisions"]) == 0
    assert float(walled["final_x"]) < 1.15 and float(free["final_x"]) > 1.5
    assert float(walled["min_range_m"]) < 0.5
    assert rows[0]["final_x"] != rows[1]["final_x"]  # the seed reaches the noise: another path


RUN_STYLE = """
count = 0

def run(sim):
    global count
    while sim.step():
        count += 1

def result(sim):
    return {"count": count, "late": sim.time, "note": NOTE}

NOTE = "fine"
"""


@pytest.mark.parametrize(("note", "expected"), [('"fine"', "fine"), ("[1, 2]", None)])
def test_result_is_asked_of_a_run_style_controller_before_it_stops(tmp_path, note, expected):
    from sear.loading import load_project
    from sear.runtime.simulation import Simulation

    prj = make_project(tmp_path)
    (tmp_path / "user_code.py").write_text(RUN_STYLE.replace('NOTE = "fine"', f"NOTE = {note}"))
    simulation = Simulation(load_project(prj), seed=1)
    try:
        simulation.start_user_code()
        simulation.run(0.5, pace=False)
        answer = simulation.collect_result(0)
        error = simulation.user_error
    finally:
        simulation.close()
    if expected is None:  # positive control beside it: a list is no result, and the message says what is
        assert answer is None and "result(sim) must return a dict of names to numbers or text" in str(error)
    else:
        assert error is None and answer == {"count": 30, "late": pytest.approx(0.5), "note": "fine"}


def test_the_parquet_table_holds_the_same_cells_typed(batch):
    frame = pq.read_table(batch / "results.parquet").to_pylist()
    rows = table(batch)
    assert len(frame) == len(rows) == 4
    for typed, text in zip(frame, rows, strict=True):
        assert list(typed) == list(text)
        for key, value in typed.items():
            assert ("" if value is None else str(value)) == text[key], key
    assert isinstance(frame[0]["final_x"], float) and isinstance(frame[0]["collisions"], int)


def test_the_manifest_holds_versions_the_sweep_the_project_hashes_and_the_runs(batch):
    manifest = json.loads((batch / "manifest.json").read_text())
    folder = batch.parent
    assert manifest["sweep"]["text"] == (folder / "sweep.toml").read_text()
    for name in ("bot.prj", "user_code.py", "sensors.xml", "terrain.obj", "body.obj", "wheel.obj"):
        assert manifest["project"]["files"][name] == hashlib.sha256((folder / name).read_bytes()).hexdigest()
    assert {"sear", "python", "numpy", "pybullet", "pyarrow"} <= set(manifest["versions"])
    assert manifest["seeds"] == [1, 2] and [r["run_id"] for r in manifest["runs"]] == [f"run-000{i}" for i in range(4)]
    assert manifest["runs"][3]["params"] == {"code.SPEED": 2.0, "code.WALL_AT": 1.5, "code.MODE": "wall"}


def test_the_report_is_a_page_with_its_figures_inside(batch):
    page = (batch / "report.html").read_text()
    assert page.count("data:image/png;base64,") == 3 and "4 runs of <b>bot.prj</b>: <b>4</b> ok" in page
    assert (batch / "report-success.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_rerun_reproduces_a_runs_log_byte_for_byte(batch, tmp_path):
    out = io.StringIO()
    target = tmp_path / "again.csv"
    assert rerun(batch, "run-0003", log=target, stream=out) == 0, out.getvalue()
    kept = batch / "runs" / "run-0003" / "log.csv"
    assert target.read_bytes() == kept.read_bytes() and len(kept.read_bytes()) > 10_000
    assert "byte for byte the same" in out.getvalue()
    # Negative control: the comparison rerun makes tells a log that differs in one byte, or in its arrays.
    from sear.batch.command import _same_log

    changed = tmp_path / "changed.csv"
    data = kept.read_bytes()
    changed.write_bytes(data[:-3] + bytes([data[-3] ^ 1]) + data[-2:])
    assert _same_log(kept, target) and not _same_log(kept, changed)


def test_rerun_of_an_unknown_run_names_the_nearest(batch, capsys):
    assert main(["batch", "--rerun", str(batch), "run-003"]) == 1
    assert "the batch has no run 'run-003'; did you mean 'run-0003'?" in capsys.readouterr().err


FAULT_TIMEOUT = 15.0
"""s of wall time: every run of the faults' batch must end within it, which a 1-s run does many times over
even at a load of 8 on two cores."""
HANG_TIMEOUT = 3.0
"""s of wall time: the hanging run (a batch of its own, so no healthy run has to fit in it) is waited for
twice this long."""


def test_faults_are_recorded_retried_and_never_stop_the_batch(tmp_path):
    """A crash of the run's process, running out of memory and a worker killed from outside with SIGKILL:
    each recorded and retried once; the healthy run unharmed. (A hang: the next test.)"""
    make_project(tmp_path)
    marker = tmp_path / "marker"
    sweep = write_sweep(tmp_path, f"""project = "bot.prj"
duration = 1.0
timeout = {FAULT_TIMEOUT}
seeds = 1

[vary]
code.MODE = ["ok", "crash_once", "oom", "kill_once"]

[set]
code.MARKER = "{marker}"
""")
    pid_file = Path(f"{marker}.kill_once")
    killed: list[int] = []

    def kill_the_worker() -> None:  # from outside, as the system's OOM killer or a user would
        end = time.monotonic() + 60
        while time.monotonic() < end and not killed:
            if pid_file.is_file():
                pid = int(pid_file.read_text())
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
            time.sleep(0.02)

    killer = threading.Thread(target=kill_the_worker)
    killer.start()
    try:
        status = run_batch(sweep, workers=3, stream=None, report=False)
    finally:
        killed.append(0)
        killer.join()
    assert status == 1  # some runs failed for good
    rows = {r["param.code.MODE"]: r for r in read_rows(tmp_path / "sweep-results")}
    assert len(rows) == 4
    assert rows["ok"]["status"] == "ok" and rows["ok"]["attempts"] == 1 and rows["ok"]["earlier_errors"] == ""
    assert rows["oom"]["status"] == "oom" and rows["oom"]["attempts"] == 2 and "MemoryError" in rows["oom"]["error"]
    crashed = rows["crash_once"]
    assert crashed["status"] == "ok" and crashed["attempts"] == 2
    assert "attempt 1: crash: the run's process crashed (SIGSEGV)" in crashed["earlier_errors"]
    assert killed[0] > 0
    survived = rows["kill_once"]
    assert survived["status"] == "ok" and survived["attempts"] == 2
    assert "attempt 1: killed: the run's process was killed by SIGKILL" in survived["earlier_errors"]


def test_a_hanging_run_is_killed_at_its_time_out_retried_once_and_recorded(tmp_path):
    make_project(tmp_path)
    sweep = write_sweep(tmp_path, f"""project = "bot.prj"
duration = 1.0
timeout = {HANG_TIMEOUT}
seeds = 1

[set]
code.MODE = "hang"
code.MARKER = "{tmp_path / 'marker'}"
""")
    assert run_batch(sweep, workers=1, stream=None, report=False) == 1  # it failed for good
    rows = read_rows(tmp_path / "sweep-results")
    assert len(rows) == 1
    hang = rows[0]
    assert hang["status"] == "timeout" and hang["attempts"] == 2
    assert f"did not end within its time-out of {HANG_TIMEOUT:g} s" in hang["error"]
    assert "attempt 1: timeout" in hang["earlier_errors"]


def test_ctrl_c_keeps_the_finished_runs_and_resume_runs_only_the_rest(tmp_path):
    make_project(tmp_path)
    sweep = write_sweep(tmp_path, """project = "bot.prj"
duration = 1.0
seeds = "1..3"

[set]
code.MODE = "slow"
""")
    results = tmp_path / "sweep-results"
    proc = subprocess.Popen([sys.executable, "-m", "sear", "batch", str(sweep), "-j", "1", "--no-report"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        end = time.monotonic() + 120
        while time.monotonic() < end and len(read_rows(results)) < 1:
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        _out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err
    first = read_rows(results)
    assert 1 <= len(first) < 3 and "--resume" in err and "Traceback" not in err
    assert len(table(results)) == len(first)  # the tables hold what finished
    stream = io.StringIO()
    assert run_batch(sweep, workers=2, resume=True, stream=stream, report=False) == 0
    assert f"{3 - len(first)} of 3 runs" in stream.getvalue()
    second = read_rows(results)
    assert [r["run_id"] for r in second] == ["run-0000", "run-0001", "run-0002"]
    for before in first:  # the finished runs were not run again
        assert next(r for r in second if r["run_id"] == before["run_id"]) == before
    # Resuming after the project changed would mix runs of two projects: refused.
    code = tmp_path / "user_code.py"
    code.write_text(code.read_text() + "\n# changed\n")
    assert main(["batch", str(sweep), "--resume"]) == 1


def test_without_ray_installed_ray_says_how_to_install_it(tmp_path, monkeypatch, capsys):
    make_project(tmp_path)
    sweep = write_sweep(tmp_path, 'project = "bot.prj"\nduration = 1.0\n')
    monkeypatch.setitem(sys.modules, "ray", None)
    assert main(["batch", str(sweep), "--ray"]) == 1
    assert "pip install 'sear[ray]'" in capsys.readouterr().err
    assert not (tmp_path / "sweep-results").exists()
