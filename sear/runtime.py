"""The simulation loop shared by the simulation window and headless runs, and the `sim` object.

One `Simulation.tick()` is one fixed physics step: inputs -> vehicle -> pybullet step -> sensors sample
(each on its own period of simulated time) -> user code (every control tick, once started) -> log row.
The window only adds a view and a keyboard around the same ticks, so a windowed run and a headless run
with the same seed and inputs compute the same readings.

`tick()` says what it did (a `TickResult`). The one loop around it is `Simulation.advance()`: a number of
ticks, within a wall-time budget for a window's frame; `run(duration)` is that loop for a stretch of
simulated time, optionally kept to the wall clock by a `Pacer`, which also tells a window's timer how many
ticks are due. Choosing a window or none, the summary and the process's exit are sear.launcher's.
"""

from __future__ import annotations

import builtins
import csv
import math
import os
import sys
import time as _time
from collections import deque
from collections.abc import Callable
from pathlib import Path
from types import CodeType
from typing import Any, NamedTuple

import numpy as np

from sear.errors import ProjectError, SearError, StuckHookError, UserCodeError
from sear.physics.world import World
from sear.project import Project, Robot
from sear.protocol import Pose, to_wire
from sear.sensors.base import Sensor, SensorContext
from sear.sensors.config import SensorConfig
from sear.sensors.files import load_sensors
from sear.sensors.gripper import GRIPPER_SENSOR, GripperSensor, GripperSensorConfig
from sear.sensors.mounting import mounted
from sear.sensors.suite import SensorSuite
from sear.simapi import checked
from sear.state import VehicleState
from sear.usercode import ControllerHost, UserCodeRunner
from sear.validate import Loaded


def quaternion_to_euler(q: np.ndarray) -> tuple[float, float, float]:
    """Roll, pitch, yaw (rad; intrinsic z-y'-x'') of a quaternion (x, y, z, w)."""
    x, y, z, w = q.tolist() if isinstance(q, np.ndarray) else (float(c) for c in q)
    roll = math.atan2(2 * (w * x + y * z), 1 - 2 * (x * x + y * y))
    pitch = math.asin(max(-1.0, min(1.0, 2 * (w * y - z * x))))
    yaw = math.atan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))
    return roll, pitch, yaw


class TickResult(NamedTuple):
    """What one `Simulation.tick()` did, so nothing outside the loop works it out again."""

    control: bool
    """A control tick: user code had its turn (when running) and the log got a row (when recording)."""
    sampled: tuple[Sensor, ...]
    """The sensors that took a sample on this tick (their periods are in simulated time)."""


_QUIET_TICK, _CONTROL_TICK = TickResult(False, ()), TickResult(True, ())
"""The results of the ticks that sample no sensor: most ticks, so they allocate nothing."""

class GridImage(NamedTuple):
    """A grid user code showed with sim.show_grid (the window's Grids dock draws it)."""

    values: np.ndarray
    """float32 (rows, columns): row 0 is the south edge, column 0 the west; 0 free/white .. 1 black, NaN
    unknown."""
    x: float
    """m: the grid's south-west corner, east of the terrain centre."""
    y: float
    """m: the grid's south-west corner, north of the terrain centre."""
    cell: float
    """m: a cell's edge."""
    time: float
    """s: simulated time when it was shown."""


TRUTH_COLUMNS = ["truth.x", "truth.y", "truth.z", "truth.roll", "truth.pitch", "truth.yaw", "truth.speed"]


ARRAYS_SUFFIX = ".arrays"
"""FILE.csv's array outputs go into the folder FILE.arrays beside it (see CsvLog.arrays_dir)."""
HISTORY_PIECE = 100_000
"""Characters of one piece of output Simulation.output_history keeps (its end)."""
FLUSH_EVERY = 1.0
"""s of simulated time: the log reaches the disk at least this often (and before every user-code turn)."""


class NpyStream:
    """One array output written to a `.npy` file as the run goes: one row per sample, appended.

    The header's row count is rewritten in place (its length fixed, padded with spaces as the format
    allows) each time the file is flushed, so `np.load` reads every row up to the last flush even when
    the process is killed afterwards; `read_npy_rows` reads every whole row the file holds."""

    HEADER_BYTES = 128
    """Magic, version, length and the dict, padded: room for any row count and a few dimensions."""

    def __init__(self, path: Path, first: np.ndarray) -> None:
        self.path = path
        self.dtype = first.dtype
        self.row_shape = first.shape
        self.rows = 0
        self._headed = 0
        self._file = open(path, "wb")  # noqa: SIM115 - closed in close()
        self._file.write(self._header())
        self._file.flush()

    def _header(self) -> bytes:
        shape = (self.rows, *self.row_shape)
        descr = np.lib.format.dtype_to_descr(self.dtype)
        text = f"{{'descr': {descr!r}, 'fortran_order': False, 'shape': {shape!r}, }}"
        text = text.ljust(self.HEADER_BYTES - 10 - 1) + "\n"
        if len(text) + 10 > self.HEADER_BYTES:
            raise ValueError(f"array shape {shape} too large for a log header")
        return b"\x93NUMPY\x01\x00" + len(text).to_bytes(2, "little") + text.encode("latin1")

    def append(self, array: np.ndarray) -> None:
        array = np.asarray(array, dtype=self.dtype)
        if array.shape != self.row_shape:
            raise ValueError(f"{self.path.name}: a sample of shape {array.shape} after {self.row_shape}")
        self._file.write(array.tobytes())
        self.rows += 1

    def flush(self) -> None:
        """The rows so far to the operating system, then the header's count (never ahead of the data)."""
        if self.rows != self._headed and not self._file.closed:
            self._file.flush()
            os.pwrite(self._file.fileno(), self._header(), 0)
            self._headed = self.rows

    def close(self) -> None:
        if not self._file.closed:
            self.flush()
            self._file.close()


def read_npy_rows(path: str | Path) -> np.ndarray:
    """A `.npy` file written by NpyStream: every whole row on disk, whatever its header's count says (a
    run killed between two flushes has rows past it); an ordinary `.npy` file reads as np.load reads it."""
    with open(path, "rb") as fh:
        version = np.lib.format.read_magic(fh)
        shape, fortran, dtype = (np.lib.format.read_array_header_1_0(fh) if version == (1, 0)
                                 else np.lib.format.read_array_header_2_0(fh))
        offset = fh.tell()
    row_shape = tuple(shape[1:])
    row_bytes = dtype.itemsize * int(np.prod(row_shape, dtype=np.int64))
    size = Path(path).stat().st_size - offset
    rows = size // row_bytes if row_bytes else shape[0]
    if fortran or rows == 0:
        return np.load(path) if fortran else np.empty((0, *row_shape), dtype)
    return np.fromfile(path, dtype=dtype, count=rows * (row_bytes // dtype.itemsize), offset=offset).reshape(
        (rows, *row_shape))


def arrays_dir(csv_path: str | Path) -> Path:
    """The folder of a log's array outputs: FILE.arrays beside FILE.csv."""
    path = Path(csv_path)
    return path.with_name(path.stem + ARRAYS_SUFFIX)


def load_arrays(csv_path: str | Path) -> dict[str, np.ndarray]:
    """The array outputs of the log FILE.csv (from FILE.arrays/), by `<sensor>.time` (s, float64) and
    `<sensor>.<key>` (e.g. `lidar.ranges`, m, one row per sample). A sensor's arrays are cut to the rows
    all of them hold, so a run killed mid-sample reads as if it had ended at the sample before."""
    folder = arrays_dir(csv_path)
    found: dict[str, np.ndarray] = {}
    if not folder.is_dir():
        return found
    for file in sorted(folder.glob("*.npy")):
        found[file.name[:-4]] = read_npy_rows(file)
    sensors = {key.rsplit(".", 1)[0] for key in found}
    for sensor in sensors:
        keys = [k for k in found if k.rsplit(".", 1)[0] == sensor]
        rows = min(len(found[k]) for k in keys)
        for key in keys:
            found[key] = found[key][:rows]
    return found


def check_log_path(path: str | Path, project: Project, *, force: bool = False) -> Path:
    """`path` as a log may be written there, or ProjectError saying why not: the log (FILE.csv and its
    FILE.arrays folder) never replaces the project file, a file the project refers to (models, sensors
    file, user code) or a folder, and replaces an existing file only with `force` (`sear run --force`)."""
    path = Path(path)
    inputs: dict[str, str] = {}
    if project.path is not None:
        inputs[os.path.realpath(project.path)] = "the project file"
    for choice in project.file_choices().values():
        if choice.path is not None:
            inputs.setdefault(os.path.realpath(choice.path), f"the project's {choice.label}")
    for output in (path, arrays_dir(path)):
        what = inputs.get(os.path.realpath(output))
        if what is not None:
            raise ProjectError(f"the log would overwrite {what}; choose another path for the log "
                               "(e.g. run.csv).", file=output)
    if path.is_dir():
        raise ProjectError("the log path is a folder; give a file name (e.g. run.csv).", file=path)
    folder = arrays_dir(path)
    if folder.exists() and not folder.is_dir():
        raise ProjectError(f"the log's array outputs go into the folder {folder.name}, and a file has that "
                           "name; choose another path for the log.", file=path)
    if not force:
        for output in (path, folder):
            if output.exists():
                raise ProjectError(f"{output.name} exists; choose another path for the log, or add --force "
                                   "to overwrite it.", file=output)
    return path


class CsvLog:
    """CSV log of ground truth and sensor readings, one row per control tick (SI units), and the sensors'
    array outputs (LIDAR scans) streamed into FILE.arrays/ beside it.

    Nothing waits for the end of the run: rows and samples reach the operating system at least every
    FLUSH_EVERY simulated seconds and whenever `flush()` is called (the simulation calls it before every
    turn of user code, so a crash of user code loses nothing logged before it), and closing completes
    every file."""

    def __init__(self, path: str | Path, sensor_columns: list[str], *,
                 robots: list[tuple[str, list[str]]] | None = None) -> None:
        """`sensor_columns`: a one-robot run's sensor columns (after time and TRUTH_COLUMNS). `robots`:
        instead, one block per robot of a run with several, as (prefix, sensor columns): each block is
        the robot's truth and sensor columns with its prefix ('rover.truth.x'); rows are then written
        with write_robots()."""
        self.path = Path(path)
        self.streams: dict[str, NpyStream] = {}
        """Array outputs by `<sensor>.time` and `<sensor>.<key>`, each streamed to its .npy file."""
        try:
            self._file = open(self.path, "w", newline="", encoding="utf-8")  # noqa: SIM115 - closed in close()
        except OSError as exc:
            raise ProjectError(f"the log file cannot be written ({exc.strerror}); choose another path.",
                               file=self.path) from None
        blocks = [("", sensor_columns)] if robots is None else robots
        csv.writer(self._file).writerow(["time", *(f"{prefix}{column}" for prefix, columns in blocks
                                                   for column in (*TRUTH_COLUMNS, *columns))])
        self._file.flush()
        if self.arrays_dir.is_dir():  # an earlier log's arrays (the CSV was replaced too)
            for stale in self.arrays_dir.glob("*.npy"):
                stale.unlink(missing_ok=True)
        self.rows = 0
        self._dirty = False
        self._next_flush = FLUSH_EVERY

    @staticmethod
    def _truth(state: VehicleState) -> str:
        """The TRUTH_COLUMNS cells of a state."""
        roll, pitch, yaw = quaternion_to_euler(state.orientation)
        x, y, z = state.position.tolist()
        speed = math.hypot(*state.linear_velocity.tolist())
        return f"{x:.9g},{y:.9g},{z:.9g},{roll:.9g},{pitch:.9g},{yaw:.9g},{speed:.9g}"

    def write(self, state: VehicleState, sensor_cells: list[str]) -> None:
        """One row: time, ground truth, then the sensors' cells (numbers or empty, so no quoting)."""
        row = f"{state.time:.9g},{self._truth(state)}"
        self._file.write(f"{row},{','.join(sensor_cells)}\r\n" if sensor_cells else f"{row}\r\n")
        self._written(state.time)

    def write_robots(self, time: float, robots: list[tuple[VehicleState, list[str]]]) -> None:
        """One row of a run with several robots: time (s), then each robot's truth and sensor cells, in
        the order of the `robots` blocks given when the log was made."""
        parts = [f"{time:.9g}"]
        for state, cells in robots:
            parts.append(self._truth(state))
            parts.extend(cells)
        self._file.write(",".join(parts) + "\r\n")
        self._written(time)

    def _written(self, time: float) -> None:
        self.rows += 1
        self._dirty = True
        if time >= self._next_flush:
            self.flush()
            self._next_flush = (math.floor(time / FLUSH_EVERY) + 1) * FLUSH_EVERY

    def add_arrays(self, name: str, time: float, arrays: dict[str, np.ndarray]) -> None:
        """Append one sample's array outputs of sensor `name` (Sensor.arrays) to its .npy files."""
        items = [("time", np.float64(time)), *arrays.items()]
        for key, array in items:
            full = f"{name}.{key}"
            stream = self.streams.get(full)
            if stream is None:
                folder = self.arrays_dir
                try:
                    folder.mkdir(exist_ok=True)
                    stream = self.streams[full] = NpyStream(folder / f"{full}.npy", np.asarray(array))
                except OSError as exc:
                    raise ProjectError(f"the log's array folder cannot be written ({exc.strerror}); choose "
                                       "another path.", file=folder) from None
            stream.append(np.asarray(array))
        self._dirty = True

    @property
    def arrays_dir(self) -> Path:
        """FILE.arrays beside FILE.csv: per sensor with array outputs `<name>.time.npy` (s) and
        `<name>.<key>.npy` (e.g. a LIDAR's `<name>.ranges.npy`, m), one row per sample; read them with
        `load_arrays(FILE.csv)` or np.load."""
        return arrays_dir(self.path)

    def flush(self) -> None:
        """Everything logged so far to the operating system (it survives the process being killed)."""
        if self._dirty and not self._file.closed:
            self._file.flush()
            for stream in self.streams.values():
                stream.flush()
            self._dirty = False

    def close(self) -> None:
        if not self._file.closed:
            self.flush()
            self._file.close()
            for stream in self.streams.values():
                stream.close()


class Sim:
    """The simulation's side of the `sim` calls a controller makes (sear.controller.Sim is what user code
    holds; its calls arrive here through the controller protocol), and of the same calls made directly
    by a script that drives a Simulation itself: read sensors, drive, add obstacles, print.

    Units: metres, seconds, newtons, radians. Drive inputs hold until changed, like pedals. Each robot
    has its own `sim` (RobotRun.sim): its sensors, its drive, its pose; the world's calls (time, obstacles)
    are shared.
    """

    def __init__(self, simulation: Simulation, robot: RobotRun | None = None) -> None:
        self._s = simulation
        self._r = simulation.robots[0] if robot is None else robot

    @property
    def time(self) -> float:
        """Simulated time since the start, s."""
        return self._s.world.time

    @property
    def sensor_names(self) -> list[str]:
        """Names of the project's sensors, for read()."""
        return list(self._r.sensors.names)

    @checked
    def read(self, name: str) -> Any:
        """Latest reading of the sensor called `name` (None until its first sample or when nothing is in
        range). Raises an error listing the sensor names when there is no such sensor."""
        return self._r.sensors.read(name)

    @checked
    def gripper(self, open: bool | None = None, height: float | None = None) -> None:
        """The gripper at the robot's front (Robot Body Model tab): open (True) or close (False) its
        paddles, and lift them to `height` m above their lowest position (clamped to the lift's travel);
        None keeps either command as it is. Commands hold until changed; the motors move at their own
        speed (docs/gripper.md). An error when the robot has no gripper."""
        gripper = self._s.world.grippers.get(self._r.index)
        if gripper is None:
            raise SearError("sim.gripper: this robot has no gripper; add one on the Robot Body Model tab "
                            "(Gripper) or in the project file's <body><gripper>.")
        gripper.command(open=open, height=height)

    @checked
    def accelerate(self, force: float) -> None:
        """Engine force, N (negative reverses); 0 to coast."""
        self._r.vehicle.accelerate(force)

    @checked
    def brake(self, force: float) -> None:
        """Brake force, N (0 releases the brake)."""
        self._r.vehicle.brake(force)

    @checked
    def steer(self, angle: float) -> None:
        """Steering angle, rad, positive left, clamped to the robot's steering limit (skid and
        differential drive: turns by driving the sides differentially)."""
        self._r.vehicle.steer(angle)

    @checked
    def drive(self, left: float, right: float) -> None:
        """Drive force of the left and right side, N (negative reverses), until accelerate() (or, skid
        and differential drive, steer()) takes over. Skid: each side's two wheels share its force;
        differential: each driven wheel gets its side's; car: each rear wheel gets its side's (the
        front wheels still steer)."""
        self._r.vehicle.drive(left, right)

    @checked
    def add_tree(self, x: float, y: float, z: float | None = None) -> None:
        """A static tree whose trunk axis stands at (x, y) m, its foot at height z m: a trunk 0.3 m wide
        and 2 m tall, a conical crown 2.4 m wide from 1.5 m up to its tip 4.5 m above the foot. z None
        puts the foot on the lowest ground under the trunk (on a slope the uphill edge sinks in)."""
        self._s.world.add_tree(x, y, z)

    @checked
    def add_box(self, x: float, y: float, z: float | None = None, size: float = 1.0, mass: float = 1.0) -> None:
        """A cube of edge `size` m and `mass` kg (0: immovable), edges along x and y, its CENTRE at
        (x, y, z) m. z None rests its bottom on the highest ground under it (on a slope: touching the
        uphill edge; a movable box then settles). A movable box falls under gravity; mass 0 stays put."""
        self._s.world.add_box(x, y, z, size=size, mass=mass)

    @checked
    def add_wall(self, x1: float, y1: float, x2: float, y2: float, height: float = 1.0,
                 thickness: float = 0.2) -> None:
        """A static wall `height` m tall and `thickness` m thick whose centre line runs from (x1, y1) to
        (x2, y2) m, extended past each end point by thickness / 2 (walls sharing an end point close
        the corner). Level bottom at the lowest ground under it, top `height` above that: on a slope
        it never floats and its uphill part sinks into the ground."""
        self._s.world.add_wall(x1, y1, x2, y2, height=height, thickness=thickness)

    @checked
    def add_table(self, x: float, y: float, width: float, depth: float, height: float) -> None:
        """A static table centred on (x, y) m: a top `width` m along x and `depth` m along y whose upper
        face is `height` m above the lowest ground under its legs, on four legs at its corners. A robot
        lower than the top's underside drives under it; the sensors see its legs and top."""
        self._s.world.add_table(x, y, width, depth, height)

    @checked
    def read_sick(self, name: str) -> np.ndarray | None:
        """The latest scan of LIDAR `name` packed as SICK LMS2xx 16-bit values (needs sick_format in its
        definition): millimetres when its range fits 8.191 m, else centimetres; 0x1FFF = no return."""
        return getattr(self._r.sensors.sensor(name), "sick", None)

    @checked
    def show_grid(self, grid: np.ndarray, x: float = 0.0, y: float = 0.0, cell: float = 0.1,
                  title: str | None = "grid") -> None:
        """Show `grid` (rows south to north, columns west to east; 0 white .. 1 black, NaN unknown) in the
        window's Grids dock under `title` (None: "grid"), its south-west corner at (x, y) m, cells `cell`
        m wide. The latest grid of each title is kept in Simulation.grids (headless runs too; with several
        robots the title starts with the robot's name and a dot)."""
        self._s.grids[self._r.prefix + (title or "grid")] = GridImage(grid.copy(), x, y, cell, self._s.world.time)

    @property
    def pose(self) -> Pose:
        """Ground-truth pose (for debugging; a real robot has only its sensors)."""
        state = self._r.state
        x, y, z = state.position.tolist()
        roll, pitch, yaw = quaternion_to_euler(state.orientation)
        return Pose(x, y, z, roll, pitch, yaw)

    @property
    def speed(self) -> float:
        """Ground-truth speed, m/s."""
        return float(np.linalg.norm(self._r.state.linear_velocity))

    @checked
    def print(self, *args: Any, sep: str | None = " ", end: str | None = "\n", file: Any = None,
              flush: bool = False) -> None:
        """Print to the console (the window's console panel, or stdout when headless: stderr for
        `file=sys.stderr`), flushed.

        Takes print()'s arguments; `file=` an open file of the user's writes there instead (standard
        output and standard error mean the console)."""
        if file is not None and file is not sys.stdout and file is not sys.stderr:
            builtins.print(*args, sep=sep, end=end, file=file, flush=flush)
            return
        sep = " " if sep is None else sep
        end = "\n" if end is None else end
        self._r.emit(sep.join(str(a) for a in args) + end, error=file is sys.stderr)


def silence_closed_pipe(name: str) -> None:
    """Standard output or error (`name`) whose reader went away (`sear run ... | head`): its descriptor
    now points at /dev/null, so later writes and the interpreter's own flush at exit don't fail."""
    fd = 1 if name == "stdout" else 2
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, fd)
    finally:
        os.close(devnull)


def reopen_std_streams() -> None:
    """Standard output and error usable again after user code closed them (`sys.stdout.close()` closes
    Python's file object, not the process's descriptors 1 and 2): new file objects on the same descriptors."""
    for name, fd in (("stdout", 1), ("stderr", 2)):
        stream = getattr(sys, name)
        if stream is None or stream.closed:
            try:
                setattr(sys, name, open(fd, "w", buffering=1, encoding="utf-8",  # noqa: SIM115
                                        errors="backslashreplace", closefd=False))
            except OSError:
                setattr(sys, name, open(os.devnull, "w"))  # noqa: SIM115 - the descriptor itself is gone


class RobotRun:
    """One robot of a running simulation: its vehicle, its sensors, its controller (user code process) and
    the `sim` that controller's calls act on. Simulation._build_robot makes one for every robot of the
    project, the one place a robot's sensors and controller are made; the world's factory
    (sear.physics.robot.build_vehicle) made its vehicle."""

    def __init__(self, simulation: Simulation, index: int, robot: Robot, sensors: SensorSuite,
                 code: CodeType | None) -> None:
        self.simulation = simulation
        self.index = index
        """Its place in Project.robots (and World.vehicles)."""
        self.robot = robot
        self.name = robot.name
        self.vehicle = simulation.world.vehicles[index]
        self.sensors = sensors
        self.prefix = f"{robot.name}." if len(simulation.project.robots) > 1 else ""
        """What its log columns and array outputs start with: '' in a one-robot run (today's names),
        'name.' with several robots."""
        self._code = code
        self.runner: ControllerHost | None = None
        self._sent: dict[str, float | None] = {}
        """Each sensor's sample time last sent to the controller: a turn carries only newer readings."""
        self._state: VehicleState | None = None
        self.user_started = False
        self.user_error: UserCodeError | None = None
        self.stuck = False
        """The user code's last failure was a hook that did not return in time."""
        self.with_arrays = any(s.HAS_ARRAYS for s in sensors.sensors)
        self.sim = Sim(simulation, self)

    @property
    def state(self) -> VehicleState:
        """Ground truth of this robot now, worked out once per tick on the ticks that ask for it."""
        state = self._state
        if state is None:
            state = self._state = self.vehicle.state(self.simulation.world.time)
        return state

    def emit(self, text: str, *, error: bool = False) -> None:
        """This robot's output: the simulation's, each line marked with the robot's name when there are
        several robots."""
        if self.prefix and text:
            lines = text.splitlines(keepends=True)
            text = "".join(f"[{self.name}] {line}" for line in lines)
        self.simulation.emit(text, error=error)

    # --- its controller ---------------------------------------------------------------------------

    def _welcome(self) -> dict[str, Any]:
        """The protocol's welcome fields: what a controller knows of the run from the start."""
        simulation = self.simulation.project.simulation
        return {"sensors": list(self.sensors.names), "time": self.simulation.world.time,
                "physics_hz": float(simulation.physics_hz), "control_hz": float(simulation.control_hz),
                "timeout": float(self.robot.code.hook_timeout), "seed": self.simulation.seed}

    def _spawn(self, welcome: dict[str, Any]) -> UserCodeRunner:
        """The robot's user code in a new process (its hello taken, `welcome` sent)."""
        code = self.robot.code
        assert code.user_code is not None
        runner = UserCodeRunner(code.user_code, code.hook_timeout, code=self._code)
        runner.emit = self.emit
        runner.start(welcome)
        return runner

    def attach(self, controller: Callable[[dict[str, Any]], ControllerHost]) -> None:
        """Replace the controller (closing the old one) with the one `controller` returns when given the
        welcome fields, and give it its init turn (UserCodeError when that fails)."""
        if self.runner is not None:
            self.runner.close()
            self.runner = None
        self.user_error, self.stuck, self.user_started = None, False, False
        self._attach(controller(self._welcome()))

    def _attach(self, runner: ControllerHost) -> None:
        """Make `runner` the controller and give it its init turn (before the first physics step)."""
        self.runner = runner
        runner.emit = self.emit
        runner.dispatch = self._serve_call
        self._sent = {}
        runner.turn("init", self._turn_fields())

    def _turn_fields(self) -> dict[str, Any]:
        """A turn's time (s) and the readings of the sensors sampled since the last turn."""
        readings: dict[str, Any] = {}
        sent = self._sent
        for sensor in self.sensors.sensors:
            when = sensor.last_sample_time
            if when is not None and sent.get(sensor.name) != when:
                sent[sensor.name] = when
                readings[sensor.name] = to_wire(sensor.value(sensor.reading))
        return {"time": self.simulation.world.time, "readings": readings}

    def _serve_call(self, name: str, args: list[Any]) -> Any:
        """A controller's `sim` call (checked by sear.protocol.check_call), made on this robot's sim."""
        sim = self.sim
        if name == "pose":
            return list(sim.pose)
        if name == "speed":
            return sim.speed
        if name == "read_sick":
            return to_wire(sim.read_sick(args[0]))
        getattr(sim, name)(*args)
        return None

    @property
    def user_code_running(self) -> bool:
        return (self.user_started and self.user_error is None and self.runner is not None
                and not self.runner.finished)

    def start_user_code(self) -> None:
        runner = self.runner
        if self.user_started or runner is None:
            return
        self.user_started = True
        self.guard(lambda: runner.turn("start", self._turn_fields()))

    @property
    def can_restart(self) -> bool:
        runner = self.runner
        return (isinstance(runner, UserCodeRunner) and self.user_started
                and (self.user_error is not None or runner.finished))

    def restart_user_code(self) -> bool:
        if not self.can_restart or self.runner is None:
            return False
        self.emit("sear: restarting the user code in a new process.\n")
        try:
            self.attach(self._spawn)
        except UserCodeError as exc:
            self.user_started = True
            self.user_error = exc
            self.emit(f"{exc}\n")
            return False
        self.start_user_code()
        return True

    def guard(self, action: Callable[[], Any]) -> bool:
        """Run `action` (a controller's turn): its result as a bool, False when the controller failed (the
        error is kept in user_error and reported)."""
        try:
            return bool(action())
        except UserCodeError as exc:
            self.user_error = exc
            self.stuck = isinstance(exc, StuckHookError)
            log = self.simulation.log
            if log is not None:
                log.flush()
            self.emit(f"{exc}\n", error=True)
            return False

    def set_manual_input(self, throttle: float, steer: float, brake: bool) -> None:
        """Keyboard driving: throttle and steer in -1..1 of the robot's engine force and steering limit;
        brake applies the full brake force."""
        dyn = self.robot.dynamics
        vehicle = self.vehicle
        vehicle.accelerate(max(-1.0, min(1.0, throttle)) * dyn.engine_force)
        vehicle.steer(max(-1.0, min(1.0, steer)) * dyn.max_steering)
        vehicle.brake(dyn.brake_force if brake else 0.0)


class Simulation:
    """A project loaded into a world with its robots' sensors and user code, advanced one tick at a time.

    Every robot has a RobotRun (`robots`): its vehicle, sensors and controller, all advanced in lock-step
    by one tick. The attributes without a robot in their name (sensors, runner, sim, state) are the first
    robot's, a one-robot run's only one; `driven` is the robot the keyboard drives and the window follows."""

    def __init__(self, project: Project | Loaded, *, seed: int = 0, log_path: str | Path | None = None,
                 realtime: bool = False, output: Callable[[str], None] | None = None,
                 sensor_configs: list[SensorConfig] | None = None,
                 controller: Callable[[dict[str, Any]], ControllerHost] | None = None) -> None:
        """`project` is what sear.validate.load_project loaded (its sensors, compiled user code and models
        are used as they are: nothing is read twice), or a bare Project, whose files are read here.
        `sensor_configs`: the first robot's sensors instead of its sensors file's. `controller`: instead of
        the first robot's user code, the controller it returns when given the protocol's welcome fields
        (an external controller: sear.usercode.ExternalListener.accept)."""
        models = None
        robot_sensors: list[list[SensorConfig] | None] = []
        robot_code: list[CodeType | None] = []
        if isinstance(project, Loaded):
            if not project.ok or project.project is None:
                problem = project.problems[0] if project.problems else "the project was not loaded"
                raise ProjectError(f"cannot simulate: {problem}")
            models = project.models
            robot_sensors = list(project.robot_sensors)
            robot_code = list(project.robot_code)
            project = project.project
        self.project = project
        self.seed = seed
        self.realtime = realtime
        self.output_listeners: list[Callable[[str], None]] = [output] if output else []
        self.output_history: deque[str] = deque(maxlen=2000)
        self.output_gone = False
        """True once standard output's reader went away (a closed pipe): a headless run ends there."""
        self.rng = np.random.default_rng(seed)
        """The first robot's sensors' noise; robot k > 0 draws from default_rng([seed, k])."""
        self.world = World(project, models=models)
        self.robots: list[RobotRun] = []
        self.driven = 0
        """The robot the keyboard drives and the window's camera follows (an index into `robots`)."""
        self.grids: dict[str, GridImage] = {}
        """The latest grid user code showed under each title (sim.show_grid), in the order first shown."""
        self.log: CsvLog | None = None
        try:
            count = len(project.robots)
            robot_sensors += [None] * (count - len(robot_sensors))
            robot_code += [None] * (count - len(robot_code))
            if sensor_configs is not None:
                robot_sensors[0] = sensor_configs
            for index, robot in enumerate(project.robots):
                self.robots.append(self._build_robot(index, robot, robot_sensors[index], robot_code[index]))
            self._with_arrays = any(r.with_arrays for r in self.robots)
            self.physics_hz = project.simulation.physics_hz
            self.control_every = max(1, round(project.simulation.physics_hz / project.simulation.control_hz))
            self.steps = 0
            first = self.robots[0]
            if controller is not None:
                first._attach(controller(first._welcome()))
            for run in self.robots:
                if run.runner is None and run.robot.code.user_code is not None:
                    run._attach(run._spawn(run._welcome()))
            if log_path is not None:
                self.start_log(log_path)
        except BaseException:
            self.close()
            raise

    def _build_robot(self, index: int, robot: Robot, configs: list[SensorConfig] | None,
                     code: CodeType | None) -> RobotRun:
        """Robot `index`'s sensors (from `configs`, else its sensors file; mounted on its URDF links where
        they name one) and run; its controller is attached by the caller. Its sensors ignore its own body
        and see the others."""
        if configs is None:
            configs = load_sensors(robot.code.sensors) if robot.code.sensors else []
        world = self.world
        try:
            configs = mounted(configs, world.descriptions[index])
        except ProjectError as exc:
            raise ProjectError(exc.message, file=robot.code.sensors, field=exc.field) from None
        vehicle = world.vehicles[index]
        rng = self.rng if index == 0 else np.random.default_rng([self.seed, index])
        # A URDF's base whose centre-of-mass frame is turned against its link frame: rays in the world frame.
        aligned = getattr(vehicle, "cog_aligned", True)
        sensors = SensorSuite(configs, rng=rng, client=world.client, ignore_bodies=world.robot_body_ids(index),
                              origin=world.geodetic_origin, body=vehicle.body_id if aligned else None,
                              body_centre=vehicle.cog, static_world=world.static_world,
                              accessories=self._accessories(index, robot, configs, rng))
        return RobotRun(self, index, robot, sensors, code)

    def _accessories(self, index: int, robot: Robot, configs: list[SensorConfig],
                     rng: np.random.Generator) -> list[Sensor]:
        """The sensors of robot `index`'s accessories, which its sensors file does not list: the gripper's."""
        gripper = self.world.grippers.get(index)
        if gripper is None:
            return []
        if any(config.name == GRIPPER_SENSOR for config in configs):
            raise ProjectError(f"the sensors file has a sensor named {GRIPPER_SENSOR!r}, the name of the "
                               "gripper's sensor; rename that sensor.", file=robot.code.sensors)
        rate = min(self.project.simulation.control_hz, self.project.simulation.physics_hz)
        config = GripperSensorConfig(name=GRIPPER_SENSOR, update_rate_hz=rate)
        context = SensorContext(origin=self.world.geodetic_origin)
        return [GripperSensor(config, rng, context, source=gripper.reading)]

    # --- the first robot (a one-robot run's only one) ------------------------------------------------

    @property
    def sensors(self) -> SensorSuite:
        """The first robot's sensors."""
        return self.robots[0].sensors

    @property
    def sim(self) -> Sim:
        """The first robot's `sim`."""
        return self.robots[0].sim

    @property
    def runner(self) -> ControllerHost | None:
        """The first robot's controller."""
        return self.robots[0].runner if self.robots else None

    @property
    def state(self) -> VehicleState:
        """Ground truth of the first robot now. Worked out on the ticks that ask for it (sensor samples,
        user code, the log, the window), not on every physics step."""
        return self.robots[0].state

    @property
    def user_started(self) -> bool:
        """Whether the user code has been started (Space, or at once headless)."""
        return any(r.user_started for r in self.robots)

    @property
    def user_error(self) -> UserCodeError | None:
        """The failure of a robot's user code (the first robot's that failed), None while all run."""
        return next((r.user_error for r in self.robots if r.user_error is not None), None)

    @property
    def stuck(self) -> bool:
        """A robot's user code failed by a hook that did not return in time."""
        return any(r.stuck for r in self.robots)

    @property
    def driven_robot(self) -> RobotRun:
        """The robot the keyboard drives and the window follows."""
        return self.robots[self.driven]

    def choose_next_robot(self) -> RobotRun:
        """Tab in the window: the keyboard drives the next robot (after the last, the first)."""
        self.driven = (self.driven + 1) % len(self.robots)
        return self.driven_robot

    # --- output ------------------------------------------------------------------------------------------

    def emit(self, text: str, *, error: bool = False) -> None:
        """User output and error reports: to every listener, or when there is none to stdout (an `error`
        report to stderr, where a headless run's summary says it is). The text is also kept (the last
        2,000 pieces, each cut to its last HISTORY_PIECE characters), so a console opened later can show
        what came before."""
        self.output_history.append(text if len(text) <= HISTORY_PIECE else text[-HISTORY_PIECE:])
        if not self.output_listeners:
            stream = sys.stderr if error else sys.stdout
            if stream is None or stream.closed:  # user code closed it: SEAR's console stays
                reopen_std_streams()
                stream = sys.stderr if error else sys.stdout
            try:
                stream.write(text)
                stream.flush()
            except BrokenPipeError:
                silence_closed_pipe("stderr" if error else "stdout")
                self.output_gone = True
        for listener in self.output_listeners:
            listener(text)

    def start_log(self, path: str | Path, *, force: bool = True) -> None:
        """Start (or restart) a CSV log at `path`: ProjectError when that would overwrite one of the
        project's files, or (without `force`) any existing file (check_log_path). A run of several robots
        has a column block per robot ('name.truth.x', 'name.front_ir.distance')."""
        check_log_path(path, self.project, force=force)
        self.stop_log()
        if len(self.robots) == 1:
            self.log = CsvLog(path, self.sensors.log_columns())
        else:
            self.log = CsvLog(path, [], robots=[(r.prefix, r.sensors.log_columns()) for r in self.robots])

    def stop_log(self) -> Path | None:
        if self.log is None:
            return None
        self.log.close()
        path, self.log = self.log.path, None
        return path

    # --- control (every robot's controller) ---------------------------------------------------------------

    def attach(self, controller: Callable[[dict[str, Any]], ControllerHost]) -> None:
        """Replace the first robot's controller (closing the old one) with the one `controller` returns
        when given the welcome fields, and give it its init turn (UserCodeError when that fails). User
        code is then not started: start_user_code() starts it."""
        self.robots[0].attach(controller)

    @property
    def user_code_running(self) -> bool:
        """Whether any robot's user code is running."""
        return any(r.user_code_running for r in self.robots)

    def start_user_code(self) -> None:
        """Start every robot's main_loop / run(sim) (Space in the window; at once in headless runs)."""
        for run in self.robots:
            run.start_user_code()

    def collect_result(self, index: int) -> Any:
        """What robot `index`'s user code's optional result(sim) hook returns now (a dict of names to
        numbers or text; None without the hook, or when the user code is not running): `sear batch` asks
        each robot at the end of a run, over the protocol's `collect` turn. A failure there is the user
        code's error, as in any hook."""
        run = self.robots[index]
        runner = run.runner
        if runner is None or not run.user_code_running:
            return None
        runner.turn_result = None
        run.guard(lambda: runner.turn("collect", run._turn_fields()))
        return runner.turn_result if run.user_error is None else None

    @property
    def can_restart(self) -> bool:
        """Whether restart_user_code() can start some robot's user code again: it is the project's own (an
        external controller cannot be restarted from here) and it has failed or finished."""
        return any(r.can_restart for r in self.robots)

    def restart_user_code(self) -> bool:
        """Space after user code failed or finished: each such robot's code in a fresh process, its init
        again, then started. True when one was restarted (a failure to load is reported like any user
        code error)."""
        restarted = False
        for run in self.robots:
            restarted = run.restart_user_code() or restarted
        return restarted

    def reset(self) -> None:
        """Put every robot back at its start pose (Enter in the window)."""
        self.world.reset_vehicle()
        for run in self.robots:
            run._state = None

    def set_manual_input(self, throttle: float, steer: float, brake: bool) -> None:
        """Keyboard driving of the driven robot: throttle and steer in -1..1 of its engine force and
        steering limit; brake applies its full brake force."""
        self.driven_robot.set_manual_input(throttle, steer, brake)

    def set_gripper_input(self, open: bool | None = None, lift: int = 0) -> None:
        """Keyboard gripper of the driven robot (on a key's press or release, not every tick): `open`
        True/False opens/closes the paddles (None: as they are); `lift` +1 sends the lift towards its top,
        -1 towards its bottom, 0 stops it where it is now. Nothing without a gripper."""
        gripper = self.world.grippers.get(self.driven)
        if gripper is None:
            return
        if lift == 0:
            gripper.stop_lift()
        gripper.command(open=open, height=gripper.travel if lift > 0 else 0.0 if lift < 0 else None)

    # --- the loop ----------------------------------------------------------------------------------------

    def tick(self) -> TickResult:
        """One physics step, then sensors, then (on control ticks) user code and the log; says which.
        Robots take their control turns together: every controller is given its turn, the log row is
        written while they think, then each turn is finished."""
        world = self.world
        robots = self.robots
        if world.step():
            for index, (t, x, y) in zip(world.fell, world.falls[-len(world.fell):], strict=True):
                who = "The robot" if len(robots) == 1 else f"Robot {robots[index].name}"
                self.emit(f"{who} fell off the edge of the terrain (at x = {x:.1f} m, y = {y:.1f} m) and is back "
                          f"at its start pose (t = {t:.2f} s).\n")
        self.steps += 1
        log = self.log
        sampled: list[Sensor] | tuple[()] = ()
        for run in robots:
            run._state = None
            sensors = run.sensors
            if world.time + 1e-9 >= sensors.next_due:
                due = sensors.update(run.state)
                if self._with_arrays and log is not None:
                    for sensor in due:
                        if sensor.HAS_ARRAYS and sensor.reading is not None:
                            log.add_arrays(run.prefix + sensor.name, world.time, sensor.arrays(sensor.reading))
                sampled = due if not sampled else [*sampled, *due]
        control = self.steps % self.control_every == 0
        if control:
            turns: list[RobotRun] = []
            for run in robots:
                runner = run.runner
                if runner is not None and run.user_code_running:
                    if log is not None and not turns:  # the log on disk reaches this tick before a controller moves on
                        log.flush()
                    fields = run._turn_fields()
                    if run.guard(lambda runner=runner, fields=fields: runner.give_turn("tick", fields)):  # type: ignore[misc]
                        turns.append(run)
            if log is not None:  # while the controllers take their turns: their commands do not change the row
                if len(robots) == 1:
                    log.write(self.state, self.sensors.log_values())
                else:
                    log.write_robots(world.time, [(r.state, r.sensors.log_values()) for r in robots])
            for run in turns:
                runner = run.runner
                if runner is not None:
                    run.guard(runner.finish_turn)
        if sampled:
            return TickResult(control, tuple(sampled))
        return _CONTROL_TICK if control else _QUIET_TICK

    def steps_until(self, time: float) -> int:
        """Ticks from now until simulated `time` (s), 0 when it has passed: a run stops exactly there."""
        return max(0, round((time - self.world.time) * self.physics_hz))

    def advance(self, steps: int, *, budget: float | None = None, pacer: Pacer | None = None,
                before_tick: Callable[[], None] | None = None,
                after_tick: Callable[[TickResult], object] | None = None) -> int:
        """Up to `steps` ticks; returns how many were done. Fewer with `budget` once that many wall
        seconds have passed (a window's frame must not freeze), or when
        `after_tick` returns a true value. With `pacer`, each tick waits for the wall clock. `before_tick`
        runs before every tick (a window's held keys), `after_tick` after it with what the tick did (a
        script's own bookkeeping and its reasons to stop early)."""
        deadline = None if budget is None else _time.perf_counter() + budget
        tick = self.tick
        for done in range(steps):
            if deadline is not None and _time.perf_counter() > deadline:
                return done
            if before_tick is not None:
                before_tick()
            result = tick()
            if after_tick is not None and after_tick(result):
                return done + 1
            if pacer is not None:
                pacer.wait()
        return steps

    def run(self, duration: float, *, pace: bool | None = None,
            after_tick: Callable[[TickResult], object] | None = None) -> int:
        """Tick until `duration` more simulated seconds have passed (or `after_tick` returned a true
        value); returns the ticks done. `pace` keeps to the wall clock (default: the
        simulation's `realtime`); `after_tick` as for advance()."""
        pace = self.realtime if pace is None else pace
        return self.advance(round(duration * self.physics_hz), pacer=Pacer(self) if pace else None,
                            after_tick=after_tick)

    def close(self) -> None:
        """Stop the controller (a run(sim) sees sim.step() return False and may finish; its process
        ends), flush the log, free the physics. Closing twice does nothing more."""
        for run in getattr(self, "robots", ()):
            if run.runner is not None:
                run.runner.close()
        self.stop_log()
        self.world.close()


class Pacer:
    """Keeps a simulation to the wall clock: simulated time since `restart()` against wall time since.

    A blocking run sleeps when it is ahead (`wait()`); a window's timer asks how many ticks are due for
    its frame (`due()`), simulates those, draws, and comes back. A simulation that cannot keep up slips
    behind the clock rather than trying to catch up without end.
    """

    SLEEP_AHEAD = 0.002
    """s: ahead of the clock by more than this, wait() sleeps (sleeps shorter than that are not kept)."""
    CATCH_UP = 0.25
    """s of simulated time due() asks for at most; further behind than that, the clock restarts."""

    def __init__(self, simulation: Simulation, *, realtime: bool = True, until: float | None = None,
                 clock: Callable[[], float] = _time.perf_counter) -> None:
        """`realtime` False: due() asks for one simulated second a call (as fast as possible). `until`:
        a simulated time (s) that due() never passes. `clock`: wall seconds (a test's own clock)."""
        self.simulation = simulation
        self.realtime = realtime
        self.until = until
        self.clock = clock
        self.wall_start = self.sim_start = 0.0
        self.restart()

    def restart(self) -> None:
        """Count from now: after a pause, a change of mode, or a jump the clock should not see."""
        self.wall_start = self.clock()
        self.sim_start = self.simulation.world.time

    def elapsed(self) -> tuple[float, float]:
        """Simulated and wall seconds since `restart()`."""
        return self.simulation.world.time - self.sim_start, self.clock() - self.wall_start

    def ahead(self) -> float:
        """Seconds the simulation is ahead of the wall clock (negative: behind)."""
        simulated, wall = self.elapsed()
        return simulated - wall

    def wait(self) -> None:
        """Sleep while the simulation is ahead of the wall clock."""
        ahead = self.ahead()
        if ahead > self.SLEEP_AHEAD:
            _time.sleep(ahead)

    def due(self) -> int:
        """Ticks to simulate now: as many as the simulation is behind the clock, at most CATCH_UP s of
        them (restarting the clock: it slips); not realtime, one simulated second's; never past `until`."""
        hz = self.simulation.physics_hz
        if self.realtime:
            steps = int(-self.ahead() * hz)
            if steps > hz * self.CATCH_UP:  # too slow to keep up: do not spiral, slip instead
                steps = int(hz * self.CATCH_UP)
                self.restart()
        else:
            steps = int(hz)
        if self.until is not None:  # stop exactly at `until`, as a headless run does
            steps = min(steps, self.simulation.steps_until(self.until))
        return max(0, steps)

    @property
    def finished(self) -> bool:
        """Whether `until` has been reached (to within half a tick)."""
        return self.until is not None and self.simulation.world.time >= self.until - 0.5 / self.simulation.physics_hz
