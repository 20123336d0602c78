"""One run of a batch, in a process of its own: `python -m sear.batch.worker SPEC.json`.

The process loads the project, applies the run's parameters, simulates headless for the sweep's duration
with the run's seed (its own pybullet instance; its user code in a process of its own, as always) and
writes what it measured to the spec's result file (JSON) before it exits. A process that dies before
that, or is killed at its time-out, is what the pool records as a crash, a kill or a time-out
(sear.batch.pool); everything the run itself can say (an error in the user code, a broken project, a
MemoryError) is in its result.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import resource
import shutil
import signal
import sys
import traceback
from pathlib import Path
from typing import Any

RANGE_TYPES = frozenset({"infrared", "ultrasonic", "lidar"})
"""Sensor types whose readings are distances (m): their smallest reading is a run's `min_range`."""


def prepare_user_code(user_code: Path, variables: dict[str, Any], mirror: Path) -> Path:
    """A copy of the user code with `variables` set, in `mirror`: a folder that looks like the user
    code's own (every other entry a link to the original), so its helper modules import and its data
    files open as before. Returns the copy's path."""
    from sear.batch.parameters import set_user_variables

    mirror.mkdir(parents=True, exist_ok=True)
    for entry in user_code.parent.iterdir():
        if entry.name != user_code.name and not (mirror / entry.name).exists():
            (mirror / entry.name).symlink_to(entry)
    copy = mirror / user_code.name
    copy.write_text(set_user_variables(user_code.read_text(encoding="utf-8"), variables), encoding="utf-8")
    return copy


def _min_reading(reading: Any) -> float | None:
    """The smallest distance in a range sensor's reading (m), None when it has none."""
    if reading is None or isinstance(reading, bool):
        return None
    if isinstance(reading, int | float):
        return float(reading) if math.isfinite(reading) else None
    import numpy as np

    values = np.asarray(reading, dtype=float)
    finite = values[np.isfinite(values)]
    return float(finite.min()) if finite.size else None


def failure_status(error: str, user_code_status: int | None) -> str:
    """What kind of failure a user code error is: 'oom' (a MemoryError), 'crash' or 'killed' (its process
    ended by a signal: a native crash, or SIGKILL/SIGTERM from outside), else 'error' (a Python error, which
    the same seed repeats)."""
    if "MemoryError" in error:
        return "oom"
    if user_code_status is not None and user_code_status < 0:
        return "killed" if -user_code_status in (signal.SIGKILL, signal.SIGTERM) else "crash"
    return "error"


def execute(spec: dict[str, Any]) -> dict[str, Any]:
    """Run one run as `spec` describes it; what it measured, with its status ('ok', 'error', 'oom',
    'crash' or 'killed') and error (text, '' when none)."""
    import numpy as np

    from sear.batch.parameters import SweepError, apply_parameters
    from sear.errors import SearError
    from sear.loading import load_project
    from sear.physics.contacts import touching
    from sear.project import Project
    from sear.runtime.simulation import Simulation
    from sear.state import quaternion_to_euler
    from sear.usercode import UserCodeRunner

    out: dict[str, Any] = {"status": "ok", "error": ""}
    project = Project.load(spec["project"])
    original_code = project.code.user_code
    sensor_params = {k: v for k, v in spec["params"].items() if k.startswith("sensors.")}
    try:
        variables = apply_parameters(project, [], {k: v for k, v in spec["params"].items() if k not in sensor_params})
    except SweepError as exc:
        return {"status": "error", "error": exc.message}
    mirror = Path(spec["scratch"]) / "code"
    if variables and original_code is not None:
        project.code.user_code = prepare_user_code(original_code, variables, mirror)
    loaded = load_project(project)
    if loaded.project is None or loaded.problems:
        return {"status": "error", "error": "; ".join(str(p) for p in loaded.problems)}
    try:
        apply_parameters(project, loaded.robots[0].sensors, sensor_params)
    except SweepError as exc:
        return {"status": "error", "error": exc.message}

    def real(text: str) -> str:  # messages name the user's own file, not the copy with its variables set
        return text.replace(str(mirror), str(original_code.parent)) if original_code is not None else text

    try:
        simulation = Simulation(loaded, seed=int(spec["seed"]), log_path=spec.get("log"))
    except SearError as exc:  # the user code failed on loading or in init(sim)
        return {"status": failure_status(str(exc), None), "error": real(str(exc))}
    world = simulation.world
    runs = simulation.robots
    starts = [run.state.position.copy() for run in runs]
    lasts = [start.copy() for start in starts]
    path_lengths = [0.0] * len(runs)
    collisions = [0] * len(runs)
    contacts: list[frozenset[int]] = [frozenset()] * len(runs)
    falls = [0] * len(runs)
    # Each robot's range sensors' smallest reading so far (m), by sensor name.
    nearest = [{s.name: math.inf for s in run.sensors.sensors if s.TYPE in RANGE_TYPES} for run in runs]
    owner = {id(sensor): run.index for run in runs for sensor in run.sensors.sensors}

    def after_tick(tick: Any) -> bool:
        for index in world.fell:
            falls[index] += 1
        for index in range(len(runs)):
            now = touching(world, index)
            collisions[index] += len(now - contacts[index])
            contacts[index] = now
        for sensor in tick.sampled:
            closest = nearest[owner[id(sensor)]]
            if sensor.name in closest:
                value = _min_reading(sensor.reading)
                if value is not None and value < closest[sensor.name]:
                    closest[sensor.name] = value
        if tick.control:
            for index, run in enumerate(runs):
                here = run.state.position
                path_lengths[index] += float(np.linalg.norm(here - lasts[index]))
                lasts[index] = here.copy()
        return simulation.user_error is not None or simulation.log_failure is not None

    answers: list[Any] = [None] * len(runs)
    try:
        simulation.start_user_code()
        simulation.run(float(spec["duration"]), pace=False, after_tick=after_tick)
        states = [run.state for run in runs]
        for index in range(len(runs)):
            answers[index] = simulation.collect_result(index) if simulation.user_error is None else None
        if simulation.log is not None:
            simulation.log.flush()  # the last rows: a failure to write them is this run's
        failed = next((run for run in runs if run.user_error is not None), None)
        if failed is None and simulation.log_failure is not None:  # the disk filled up: the log stopped whole
            out["status"], out["error"] = "error", simulation.log_failure.message(simulation.run_end)
        if failed is not None:
            runner = failed.runner
            status = runner.proc.returncode if isinstance(runner, UserCodeRunner) and runner.proc else None
            error = str(failed.user_error)
            out["status"], out["error"] = failure_status(error, status), real(error)
    finally:
        simulation.close()
    # One robot: the metrics' own names; several: each robot's prefixed with its name ("rover.final_x").
    for run, answer in zip(runs, answers, strict=True):
        if isinstance(answer, dict):
            for key, value in answer.items():
                out[f"{run.prefix}result.{key}"] = value
    out["sim_time_s"] = round(world.time, 9)
    for index, run in enumerate(runs):
        prefix = run.prefix
        state = states[index]
        x, y, z = state.position.tolist()
        _roll, _pitch, yaw = quaternion_to_euler(state.orientation)
        out.update({
            f"{prefix}final_x": x, f"{prefix}final_y": y, f"{prefix}final_z": z,
            f"{prefix}final_yaw_deg": math.degrees(yaw),
            f"{prefix}distance_m": path_lengths[index],
            f"{prefix}displacement_m": float(np.linalg.norm(state.position[:2] - starts[index][:2])),
            f"{prefix}collisions": collisions[index],
            f"{prefix}falls": falls[index],
        })
        finite = [v for v in nearest[index].values() if math.isfinite(v)]
        out[f"{prefix}min_range_m"] = min(finite) if finite else None
        for name, value in nearest[index].items():
            out[f"{prefix}min_range.{name}"] = value if math.isfinite(value) else None
    return out


def _limit_memory(megabytes: float | None) -> None:
    """At most `megabytes` of data for this process and the user code process it starts (which inherits
    the limit): past it an allocation fails with MemoryError instead of the machine swapping."""
    if megabytes:
        limit = int(megabytes * 1024 * 1024)
        resource.setrlimit(resource.RLIMIT_DATA, (limit, limit))


def _end_with_the_batch(scratch: Path) -> None:
    """End this worker's session (it and its user code process) as soon as the batch that started it is
    gone, on a thread that waits for that; first the batch's scratch folder (above the run's `scratch`
    folder) is removed, which the batch can no longer do.

    A batch killed with SIGKILL has no chance to end its runs: they simulated on for the rest of their
    duration with nobody left to record them, and kept the fork server alive as long (it lives while a
    worker holds the batch's end of its pipe). multiprocessing's parent sentinel is a pipe whose other end
    the batch holds while it waits for the run, so it reads end-of-file the moment the batch dies."""
    import multiprocessing
    import multiprocessing.connection
    import threading

    parent = multiprocessing.parent_process()
    sentinel = parent.sentinel if parent is not None else None
    if sentinel is None:
        return

    def watch() -> None:
        multiprocessing.connection.wait([sentinel])
        shutil.rmtree(scratch.parent, ignore_errors=True)  # the dead batch's: every run's and its socket
        with contextlib.suppress(OSError):
            os.killpg(0, signal.SIGKILL)

    threading.Thread(target=watch, name="sear-batch-watch", daemon=True).start()


def child(spec_path: str, output_path: str) -> None:
    """A worker forked from the pool's fork server (modules loaded once there): a session of its own, so
    ending it ends its user code process too, its console output into `output_path`, and it ends with
    the batch (_end_with_the_batch)."""
    os.setsid()
    _end_with_the_batch(Path(spec_path).parent)
    fd = os.open(output_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    sys.stdout.flush()
    sys.stderr.flush()
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
    status = main([spec_path])
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)


PRELOAD = ["sear.batch.worker", "sear.batch.sweep", "sear.runtime.simulation", "sear.loading",
           "sear.physics.contacts", "trimesh", "numpy"]
"""Modules the fork server imports once, so each worker starts without importing them again."""


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    spec_path = Path(argv[0])
    spec = json.loads(spec_path.read_text(encoding="utf-8"))
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the batch's to handle: it ends the runs
    _limit_memory(spec.get("memory_limit_mb"))
    try:
        result = execute(spec)
    except MemoryError:
        result = {"status": "oom", "error": "the run ran out of memory (MemoryError in the simulation)."}
    except Exception as exc:  # SEAR itself failed: recorded as a crash, the batch goes on
        lines = traceback.format_exception(exc)
        result = {"status": "crash", "error": f"the simulation failed: {exc!r}\n{''.join(lines[-6:])}"}
    finally:
        with contextlib.suppress(OSError):
            shutil.rmtree(Path(spec["scratch"]) / "code")
    target = Path(spec["result_file"])
    temporary = target.with_suffix(".tmp")
    clean = {k: None if isinstance(v, float) and not math.isfinite(v) else v for k, v in result.items()}
    temporary.write_text(json.dumps(clean, allow_nan=False), encoding="utf-8")
    os.replace(temporary, target)
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
