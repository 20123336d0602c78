"""Rewind and take over: re-simulate a recorded run from its embedded project, seed and recorded inputs
up to a moment (`resimulate`), then hand a robot to the keyboard or to user code (`attach_user_code`).

The re-simulation runs no user code: the `sim` calls and keyboard inputs the recording kept are made
again after the same physics steps, so it equals the recording exactly (positions, sensor readings,
CSV rows byte for byte) whatever the user code did, and edited code can take over where the old one
left off. Inputs made on the tick of the moment itself (the old controller's answer to it) are not
made: the new driver makes its own.
"""

from __future__ import annotations

import math
import shutil
import tempfile
import weakref
from collections.abc import Callable
from pathlib import Path

from sear.errors import SearError
from sear.loading import load_project
from sear.recording.reader import Input, Recording, RecordingError
from sear.runtime.robotrun import RunObserver
from sear.runtime.sim import serve_call
from sear.runtime.simulation import Simulation
from sear.usercode import UserCodeRunner

PROGRESS_EVERY = 240
"""Ticks between two progress reports of a re-simulation."""


def resume_step(recording: Recording, time: float) -> int:
    """The physics step a re-simulation to `time` s stops after: the last control tick at or before it
    (the moment a controller takes its turn), never past the recording's end."""
    every = recording.control_every
    last = math.floor(recording.duration * recording.physics_hz + 1e-6)
    steps = min(math.floor(max(0.0, time) * recording.physics_hz + 1e-6), last)
    return steps // every * every


def _apply(simulation: Simulation, item: Input, observer: RunObserver | None) -> None:
    """Make a recorded input again (and tell the new run's observer, so its own recording has it)."""
    if item.kind == "call":
        run = simulation.robots[item.robot]
        serve_call(run.sim, item.name, item.args)
        if observer is not None:
            observer.call(item.robot, item.name, item.args)
    elif item.kind == "manual":
        driven = simulation.driven
        simulation.driven = item.robot
        try:
            simulation.set_manual_input(float(item.args[0]), float(item.args[1]), bool(item.args[2]))
        finally:
            simulation.driven = driven
    elif item.kind == "gripper":
        driven = simulation.driven
        simulation.driven = item.robot
        try:
            simulation.set_gripper_input(open=item.args[0], lift=int(item.args[1]))
        finally:
            simulation.driven = driven
    elif item.kind == "reset":
        simulation.reset()
    elif item.kind == "pull":
        simulation.start_pull(int(item.args[0]), [float(c) for c in item.args[1:4]])
    elif item.kind == "pull_to":
        simulation.pull_to([float(c) for c in item.args[:3]])
    elif item.kind == "release":
        simulation.release_pull()
    else:
        raise RecordingError(f"the recording holds an input of an unknown kind {item.kind!r}; update SEAR.")


def resimulate(recording: Recording | str | Path, until: float, *,
               progress: Callable[[int, int], object] | None = None, log_path: str | Path | None = None,
               observer: RunObserver | None = None, realtime: bool = False) -> Simulation:
    """A live Simulation of the recorded project at the last control tick at or before `until` s,
    re-simulated with the recorded seed and inputs and no user code (see the module's docstring).

    `progress(done, total)` is called with ticks done and to do every PROGRESS_EVERY ticks and at the
    end (an exception it raises stops the re-simulation; the simulation is closed). `log_path`: the new
    run's CSV log, from t = 0 (its rows up to the moment equal the recording's). `observer`: the new run's
    (a new recording of it). The project is extracted to a temporary folder removed when the simulation
    is garbage collected or the process ends. The caller closes the simulation."""
    if not isinstance(recording, Recording):
        recording = Recording.open(recording)
    if not recording.resumable:
        raise RecordingError(f"{recording.path}: recording started at t = {recording.start_time:.2f} s in a run that "
                             "kept no journal of its inputs, so the run cannot be re-simulated from its start; "
                             "record from the start (sear run --record, or a window's Record Run).")
    folder = Path(tempfile.mkdtemp(prefix="sear-resume-"))
    try:
        project_path = recording.extract(folder)
        loaded = load_project(project_path)
        if loaded.project is None or loaded.problems:
            problem = loaded.problems[0] if loaded.problems else "it could not be loaded"
            raise RecordingError(f"{recording.path}: the embedded project cannot be simulated: {problem}")
        simulation = Simulation(loaded, seed=recording.seed, log_path=log_path, user_code=False, observer=observer,
                                realtime=realtime)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    weakref.finalize(simulation, shutil.rmtree, str(folder), ignore_errors=True)
    simulation.resumed_from = folder  # type: ignore[attr-defined]
    if abs(simulation.physics_hz - recording.physics_hz) > 1e-9 or simulation.control_every != recording.control_every:
        simulation.close()
        raise RecordingError(f"{recording.path}: the embedded project's rates differ from the recording's.")
    target = resume_step(recording, until)
    inputs = [item for item in recording.inputs() if item.step < target]
    next_input = 0
    try:
        while True:
            steps = simulation.steps
            while next_input < len(inputs) and inputs[next_input].step <= steps:
                _apply(simulation, inputs[next_input], observer)
                next_input += 1
            if steps >= target:
                break
            simulation.tick()
            if progress is not None and (simulation.steps % PROGRESS_EVERY == 0 or simulation.steps == target):
                progress(simulation.steps, target)
    except BaseException:
        simulation.close()
        raise
    return simulation


def attach_user_code(simulation: Simulation, index: int = 0, path: str | Path | None = None) -> None:
    """Give robot `index` of a re-simulated run user code to take over with: its project's (None) or the
    file at `path` (edited code). Its init turn runs now (UserCodeError when it fails); start it with
    simulation.start_user_code().

    The world already holds what the recorded run's init built (its obstacles were re-made with the
    recorded calls), so the world-building calls of this init turn (add_tree, add_box, add_wall, add_table,
    add_shelf) are left out, and the console says how many; the rest of init (its variables, its prints)
    runs as written, and later turns build as usual."""
    run = simulation.robots[index]
    if path is None:
        if run.robot.code.user_code is None:
            raise SearError(f"robot {run.name!r} has no user code in the recorded project; give a file.")
        spawn = run._spawn
    else:
        code_path = Path(path)
        timeout = run.robot.code.hook_timeout

        def spawn(welcome: dict) -> UserCodeRunner:
            runner = UserCodeRunner(code_path, timeout)
            runner.emit = run.emit
            runner.start(welcome)
            return runner

    run.world_kept = []
    try:
        run.attach(spawn)
    finally:
        kept, run.world_kept = run.world_kept, None
    if kept:
        names = ", ".join(sorted(set(kept)))
        run.emit(f"sear: taking over at t = {simulation.world.time:.3f} s: {len(kept)} world-building call"
                 f"{'s' if len(kept) != 1 else ''} of init ({names}) left out: the world already holds what the "
                 "recorded run built.\n")
