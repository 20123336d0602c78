"""Batch metrics of every robot: with several robots each robot's metrics and result(sim) are columns
prefixed with its name, checked against that robot's own columns of the run's log; with one robot the
columns are what they always were."""

from __future__ import annotations

import csv
import io
import itertools
import math
from pathlib import Path

import pytest

from sear.batch.command import run_batch
from sear.batch.results import columns
from sear.project import Project
from tests.batch.helpers import USER_CODE, make_project, write_sweep

ONE_ROBOT_TABLE = ["run_id", "index", "seed", "param.code.MODE", "status", "error", "attempts", "earlier_errors",
                   "wall_time_s", "sim_time_s", "final_x", "final_y", "final_z", "final_yaw_deg", "distance_m",
                   "displacement_m", "collisions", "falls", "min_range_m", "min_range.front_sonar", "result.east",
                   "result.mode", "result.ticks"]
"""A one-robot batch's columns, in order, as `sear batch` wrote them before tables had robots."""


def _one_robot_row() -> dict:
    """A one-robot worker's row, its keys in the order the worker and the pool put them."""
    return {"run_id": "run-0000", "index": 0, "seed": 1, "param.code.MODE": "ok", "status": "ok", "error": "",
            "result.ticks": 120, "result.mode": "ok", "result.east": 1.0, "sim_time_s": 2.0, "final_x": 1.0,
            "final_y": 0.0, "final_z": 0.1, "final_yaw_deg": 0.0, "distance_m": 1.0, "displacement_m": 1.0,
            "collisions": 0, "falls": 0, "min_range_m": None, "min_range.front_sonar": None, "attempts": 1,
            "earlier_errors": "", "wall_time_s": 3.0}


def test_a_one_robot_table_keeps_its_columns():
    assert columns([_one_robot_row()], [""]) == ONE_ROBOT_TABLE


def test_each_robot_has_its_block_of_columns_after_the_runs():
    rows = [{"run_id": "r", "index": 0, "seed": 1, "status": "error", "error": "x", "attempts": 1,
             "earlier_errors": "", "wall_time_s": 1.0},  # failed before it measured anything
            {"run_id": "s", "index": 1, "seed": 2, "status": "ok", "error": "", "attempts": 1, "earlier_errors": "",
             "wall_time_s": 1.0, "sim_time_s": 2.0, "a.result.z": 1, "a.min_range.ir": 0.5, "a.final_x": 0.0,
             "a.b.final_x": 2.0, "a.b.result.k": 3}]
    names = columns(rows, ["a.", "a.b."])
    block = ["final_x", "final_y", "final_z", "final_yaw_deg", "distance_m", "displacement_m", "collisions",
             "falls", "min_range_m"]
    assert names == ["run_id", "index", "seed", "status", "error", "attempts", "earlier_errors", "wall_time_s",
                     "sim_time_s", *(f"a.{c}" for c in block), "a.min_range.ir", "a.result.z",
                     *(f"a.b.{c}" for c in block), "a.b.result.k"]


def _log(path: Path) -> list[dict[str, float]]:
    with open(path, newline="", encoding="utf-8") as fh:
        return [{k: float(v) for k, v in row.items() if v != ""} for row in csv.DictReader(fh)]


@pytest.mark.slow
def test_every_robot_has_its_metrics_and_result_in_the_table(tmp_path):
    """Robot 'free' drives ahead on open ground; robot 'walled' (the same code, MODE "wall") drives into a
    wall 1.5 m ahead (its face 1.4 m, and the body's front 0.3 m ahead of its centre). Each robot's cells
    match its own columns of the run's log."""
    prj = make_project(tmp_path)
    project = Project.load(prj)
    project.robot_name = "free"
    project.body.start_north = 8.0  # clear of the other robot's wall (y -3 to 3 m)
    walled = project.duplicate_robot(0, "walled")
    walled.body.start_north = 0.0
    walled.code.user_code = tmp_path / "walled.py"
    fast = USER_CODE.replace("SPEED = 1.0", "SPEED = 2.0")
    (tmp_path / "user_code.py").write_text(fast, encoding="utf-8")
    (tmp_path / "walled.py").write_text(fast.replace('MODE = "ok"', 'MODE = "wall"').replace(
        "WALL_AT = 3.0", "WALL_AT = 1.5"), encoding="utf-8")
    project.save()
    sweep = write_sweep(tmp_path, 'project = "bot.prj"\nduration = 2.0\ntimeout = 120\nseeds = [1]\n')
    stream = io.StringIO()
    assert run_batch(sweep, workers=1, stream=stream, report=True) == 0, stream.getvalue()
    folder = tmp_path / "sweep-results"
    with open(folder / "results.csv", newline="", encoding="utf-8") as fh:
        header = next(csv.reader(fh))
        fh.seek(0)
        (row,) = list(csv.DictReader(fh))
    assert "final_x" not in header and header.index("free.final_x") < header.index("walled.final_x")
    log = _log(folder / "runs" / row["run_id"] / "log.csv")
    assert row["status"] == "ok" and float(row["sim_time_s"]) == pytest.approx(2.0)
    for name in ("free", "walled"):
        last = log[-1]
        assert float(row[f"{name}.final_x"]) == pytest.approx(last[f"{name}.truth.x"], abs=1e-6), name
        assert float(row[f"{name}.final_y"]) == pytest.approx(last[f"{name}.truth.y"], abs=1e-6), name
        points = [tuple(r[f"{name}.truth.{c}"] for c in "xyz") for r in log]
        path = sum(math.dist(a, b) for a, b in itertools.pairwise(points))
        assert float(row[f"{name}.distance_m"]) == pytest.approx(path, rel=0.02, abs=0.01), name
        # Its own result(sim): a main_loop call per control tick, as the log's rows.
        assert row[f"{name}.result.ticks"] == str(len(log)) == "120", name
        assert float(row[f"{name}.result.east"]) == pytest.approx(float(row[f"{name}.final_x"]), abs=1e-9)
    assert row["free.result.mode"] == "ok" and row["walled.result.mode"] == "wall"
    sonar = [r["walled.front_sonar.distance"] for r in log if "walled.front_sonar.distance" in r]
    assert sonar and float(row["walled.min_range.front_sonar"]) == pytest.approx(min(sonar), abs=1e-6)
    assert row["free.min_range.front_sonar"] == ""  # nothing in its sonar's range all run long
    assert int(row["walled.collisions"]) >= 1 and int(row["free.collisions"]) == 0
    assert float(row["walled.final_x"]) < 1.15 < 1.5 < float(row["free.final_x"])
    assert (folder / "report.html").is_file()
