"""A batch's results folder: the rows as runs finish, the tables, and the manifest.

    OUTPUT/results.jsonl     one JSON object per finished run, appended as it finishes (what --resume reads)
    OUTPUT/results.csv       the table, one row per run in run order, with its parameters
    OUTPUT/results.parquet   the same table (pyarrow), typed columns
    OUTPUT/manifest.json     versions, the sweep file, the project's files' hashes, the runs and seeds
    OUTPUT/runs/RUN_ID/      each run's log (log.csv, log.arrays/) and console output (output.txt)
"""

from __future__ import annotations

import csv
import datetime
import hashlib
import importlib.metadata
import json
import os
import platform
import sys
from pathlib import Path
from typing import Any

from sear import __version__
from sear.batch.sweep import RunSpec, Sweep, SweepError
from sear.project import Project

RESULTS_JSONL, RESULTS_CSV, RESULTS_PARQUET, MANIFEST = (
    "results.jsonl", "results.csv", "results.parquet", "manifest.json")
LEAD_COLUMNS = ("run_id", "index", "seed")
RUN_COLUMNS = ("status", "error", "attempts", "earlier_errors", "wall_time_s", "sim_time_s")
"""Every row's columns after its parameters: the run's."""
ROBOT_COLUMNS = ("final_x", "final_y", "final_z", "final_yaw_deg", "distance_m", "displacement_m", "collisions",
                 "falls", "min_range_m")
"""Then each robot's (prefixed with its name and a dot when the project has several robots, as the log
names its columns: "rover.final_x"), each followed by its range sensors' min_range.NAME and its user
code's result.KEY (from its result(sim) hook)."""
PACKAGES = ("numpy", "pybullet", "trimesh", "scipy", "lxml", "msgpack", "embreex", "pyarrow", "matplotlib", "ray")


def param_columns(params: dict[str, Any]) -> dict[str, Any]:
    """A run's parameters as table cells: `param.PATH`; a start pose one column per coordinate, a list
    (a vector field) as JSON text."""
    cells: dict[str, Any] = {}
    for path, value in params.items():
        if isinstance(value, dict):
            for key, item in value.items():
                cells[f"param.{path}.{key}"] = item
        elif isinstance(value, list):
            cells[f"param.{path}"] = json.dumps(value)
        else:
            cells[f"param.{path}"] = value
    return cells


def append_row(folder: Path, row: dict[str, Any]) -> None:
    """One finished run's row added to results.jsonl, on disk before this returns (a batch killed
    afterwards keeps it)."""
    with open(folder / RESULTS_JSONL, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(row, allow_nan=False) + "\n")
        fh.flush()
        os.fsync(fh.fileno())


def read_rows(folder: Path) -> list[dict[str, Any]]:
    """The rows of results.jsonl (a last line cut short by a kill is left out), the last row of each run."""
    path = folder / RESULTS_JSONL
    if not path.is_file():
        return []
    rows: dict[str, dict[str, Any]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(row, dict) and "run_id" in row:
            rows[row["run_id"]] = row
    return sorted(rows.values(), key=lambda r: r.get("index", 0))


def robot_prefixes(project: Project) -> list[str]:
    """What each robot's columns start with: "" for a project of one robot, "NAME." for each of several."""
    robots = project.robots
    return [f"{robot.name}." for robot in robots] if len(robots) > 1 else [""]


def columns(rows: list[dict[str, Any]], prefixes: list[str]) -> list[str]:
    """The table's columns: LEAD_COLUMNS, the parameters, RUN_COLUMNS, then for each robot (`prefixes`,
    robot_prefixes) ROBOT_COLUMNS, its min_range.NAME and then its other columns (result.KEY) by name;
    any other column last."""
    names: list[str] = list(LEAD_COLUMNS)
    for row in rows:
        for key in row:
            if key.startswith("param.") and key not in names:
                names.append(key)
    names += RUN_COLUMNS
    seen = set(names)
    # The longest prefix first: a robot named "a" does not take robot "a.b"'s columns.
    owners = sorted(prefixes, key=len, reverse=True)
    extra: dict[str, set[str]] = {prefix: set() for prefix in prefixes}
    others: set[str] = set()
    for key in {k for row in rows for k in row} - seen:
        owner = next((prefix for prefix in owners if key.startswith(prefix)), None)
        (others if owner is None else extra[owner]).add(key)
    for prefix in prefixes:
        block = [prefix + column for column in ROBOT_COLUMNS]
        ranges = sorted(k for k in extra[prefix] if k.startswith(prefix + "min_range."))
        names += block + ranges + sorted(extra[prefix] - set(block) - set(ranges))
    return names + sorted(others)


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def write_tables(folder: Path, rows: list[dict[str, Any]], prefixes: list[str]) -> None:
    """results.csv and results.parquet from `rows` (run order), each written whole then moved into place;
    `prefixes`: the robots' (robot_prefixes)."""
    names = columns(rows, prefixes)
    temporary = folder / (RESULTS_CSV + ".tmp")
    with open(temporary, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(names)
        for row in rows:
            writer.writerow([_cell(row.get(name)) for name in names])
    os.replace(temporary, folder / RESULTS_CSV)
    import pyarrow as pa
    import pyarrow.parquet as pq

    arrays = {}
    for name in names:
        values = [row.get(name) for row in rows]
        present = [v for v in values if v is not None]
        if present and all(isinstance(v, bool) for v in present):
            arrays[name] = pa.array(values, type=pa.bool_())
        elif present and all(isinstance(v, int) and not isinstance(v, bool) for v in present):
            arrays[name] = pa.array(values, type=pa.int64())
        elif present and all(isinstance(v, int | float) and not isinstance(v, bool) for v in present):
            arrays[name] = pa.array([None if v is None else float(v) for v in values], type=pa.float64())
        else:
            arrays[name] = pa.array([None if v is None else _cell(v) for v in values], type=pa.string())
    temporary = folder / (RESULTS_PARQUET + ".tmp")
    pq.write_table(pa.table(arrays), temporary)
    os.replace(temporary, folder / RESULTS_PARQUET)


# --- manifest -----------------------------------------------------------------------------------------

def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def project_hashes(project_path: Path) -> dict[str, str]:
    """sha256 of the project file, every file it refers to and the Python files beside its user code
    (helper modules it may import), by path relative to the project's folder where it lies below it."""
    project = Project.load(project_path)
    folder = project_path.parent
    files = [project_path] + [c.path for c in project.file_choices().values() if c.path is not None]
    if project.code.user_code is not None:
        files += sorted(project.code.user_code.parent.glob("*.py"))
    hashes: dict[str, str] = {}
    for file in files:
        if file.is_file():
            key = str(file.relative_to(folder)) if file.is_relative_to(folder) else str(file)
            hashes.setdefault(key, _sha256(file))
    return hashes


def versions() -> dict[str, str]:
    found = {"sear": __version__, "python": sys.version.split()[0]}
    for name in PACKAGES:
        try:
            found[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return found


def make_manifest(sweep: Sweep, runs: list[RunSpec]) -> dict[str, Any]:
    """What a batch ran and with what, so it can be checked, resumed and one run reproduced."""
    return {
        "created": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "versions": versions(),
        "platform": platform.platform(),
        "command": list(sys.argv),
        "sweep": {"file": str(sweep.path.absolute()), "sha256": sweep.sha256, "text": sweep.text},
        "project": {"file": str(sweep.project), "files": project_hashes(sweep.project)},
        "settings": {"duration": sweep.duration, "timeout": sweep.timeout, "retries": sweep.retries,
                     "retry_on": list(sweep.retry_on), "keep_logs": sweep.keep_logs,
                     "memory_limit_mb": sweep.memory_limit_mb, "sampling": sweep.sampling,
                     "samples": sweep.samples, "sampling_seed": sweep.sampling_seed},
        "seeds": sweep.seeds,
        "runs": [{"run_id": r.run_id, "index": r.index, "seed": r.seed, "params": r.params} for r in runs],
    }


def write_manifest(folder: Path, manifest: dict[str, Any]) -> None:
    temporary = folder / (MANIFEST + ".tmp")
    temporary.write_text(json.dumps(manifest, indent=1, allow_nan=False) + "\n", encoding="utf-8")
    os.replace(temporary, folder / MANIFEST)


def record_placements(folder: Path, placements: dict[str, dict[str, str]]) -> None:
    """Write into the manifest where each run of `placements` (by run id) ran: `ran_on`, the host name and,
    on a Ray cluster, the Ray node's id (runs of an earlier --resume keep theirs)."""
    if not placements:
        return
    manifest = read_manifest(folder)
    for run in manifest["runs"]:
        where = placements.get(run["run_id"])
        if where is not None:
            run["ran_on"] = dict(where)
    write_manifest(folder, manifest)


def read_manifest(folder: Path) -> dict[str, Any]:
    path = folder / MANIFEST
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SweepError(f"{folder} holds no {MANIFEST}: give the output folder of a batch.", file=folder) from None
    except (OSError, ValueError) as exc:
        raise SweepError(f"the manifest cannot be read ({exc}).", file=path) from None
    if not isinstance(data, dict) or "runs" not in data:
        raise SweepError("this is not a SEAR batch manifest.", file=path)
    return data


def changes(manifest: dict[str, Any], sweep_sha: str | None, hashes: dict[str, str]) -> list[str]:
    """How the sweep file and project differ from what the manifest recorded (empty: the same)."""
    found = []
    if sweep_sha is not None and manifest["sweep"]["sha256"] != sweep_sha:
        found.append("the sweep file")
    old = manifest["project"]["files"]
    for name in sorted(set(old) | set(hashes)):
        if old.get(name) != hashes.get(name):
            found.append(name)
    return found
