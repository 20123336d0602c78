"""A run's logs: the CSV of ground truth and sensor readings (one row per control tick) and the sensors'
array outputs (LIDAR scans) streamed into `.npy` files beside it, written as the run goes so a killed
run keeps what it logged; and reading them back (`load_arrays`).

`check_log_path` says whether a log may be written at a path at all (never over the project's own
files). Units are SI throughout; docs/logs.md describes the files for users.
"""

from __future__ import annotations

import csv
import math
import os
from pathlib import Path

import numpy as np

from sear.errors import ProjectError
from sear.project import Project
from sear.state import VehicleState, quaternion_to_euler

TRUTH_COLUMNS = ["truth.x", "truth.y", "truth.z", "truth.roll", "truth.pitch", "truth.yaw", "truth.speed"]
"""The ground-truth columns of a robot's block of a log row: position m, roll/pitch/yaw rad, speed m/s."""
ARRAYS_SUFFIX = ".arrays"
"""FILE.csv's array outputs go into the folder FILE.arrays beside it (see CsvLog.arrays_dir)."""
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
