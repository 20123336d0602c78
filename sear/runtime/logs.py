"""A run's logs: the CSV of ground truth and sensor readings (one row per control tick) and the sensors'
array outputs (LIDAR scans) streamed into `.npy` files beside it, written as the run goes so a killed
run keeps what it logged; and reading them back (`load_arrays`).

`check_log_path` says whether a log may be written at a path at all (never over the project's own
files). Units are SI throughout; docs/logs.md describes the files for users.
"""

from __future__ import annotations

import csv
import errno
import io
import math
import os
import shutil
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

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


BUFFER_BYTES = 1 << 16
"""Bytes a log file gathers before they go to the operating system (besides every flush)."""


class LogWriteError(OSError):
    """A write of a log file failed (the disk is full, the file size limit, an I/O error): `path` is the
    file, `cause` the operating system's error."""

    def __init__(self, path: Path, cause: OSError) -> None:
        super().__init__(cause.errno, cause.strerror)
        self.path = path
        self.cause = cause


class _RawFile:
    """A log file written through its descriptor with a buffer of our own, so after a failed write
    exactly the bytes the operating system took are on disk and nothing is written again behind our back
    (a Python file object retries its buffer when it is closed)."""

    _write = staticmethod(os.write)
    """How bytes reach the operating system (a test puts a disk that fills up here)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_BINARY", 0), 0o666)
        self._buf = bytearray()
        self.closed = False
        self.taken = 0
        """Bytes the operating system took so far (on disk, also after a failed write)."""

    def fileno(self) -> int:
        return self._fd

    def write(self, data: bytes) -> None:
        """Append `data` (to the operating system once BUFFER_BYTES are gathered): LogWriteError on failure."""
        self._buf += data
        if len(self._buf) >= BUFFER_BYTES:
            self.flush()

    def flush(self) -> None:
        """Everything gathered to the operating system: LogWriteError when it takes less (what it took
        stays written; the rest is dropped)."""
        buf = self._buf
        try:
            while buf:
                count = self._write(self._fd, buf)
                del buf[:count]
                self.taken += count
        except OSError as exc:
            buf.clear()
            raise LogWriteError(self.path, exc) from None

    def pwrite(self, data: bytes, offset: int) -> None:
        try:
            os.pwrite(self._fd, data, offset)
        except OSError as exc:
            raise LogWriteError(self.path, exc) from None

    def size(self) -> int:
        """Bytes on disk (what the operating system took)."""
        return os.fstat(self._fd).st_size

    def cut(self, size: int) -> None:
        """Drop what is gathered and everything on disk past `size` bytes (never more space needed)."""
        self._buf.clear()
        os.ftruncate(self._fd, size)

    def close(self) -> None:
        """Close after a flush (LogWriteError when that fails: the descriptor is closed anyway)."""
        if self.closed:
            return
        try:
            self.flush()
        finally:
            self.abandon()

    def abandon(self) -> None:
        """Close without writing what is gathered."""
        if not self.closed:
            self.closed = True
            self._buf.clear()
            os.close(self._fd)


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
        self._file = _RawFile(path)
        self._file.write(self._header())
        self._file.flush()
        self.bytes = self.HEADER_BYTES
        """Bytes given to the file so far (header included)."""

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
        data = array.tobytes()
        self.rows += 1
        self.bytes += len(data)
        self._file.write(data)

    def flush(self) -> None:
        """The rows so far to the operating system, then the header's count (never ahead of the data)."""
        if self.rows != self._headed and not self._file.closed:
            self._file.flush()
            self._file.pwrite(self._header(), 0)
            self._headed = self.rows

    def close(self) -> None:
        if not self._file.closed:
            self.flush()
            self._file.close()

    def cut_to_whole_rows(self) -> None:
        """After a failed write: the file cut to the whole rows on disk and its header's count set to them
        (rewriting the header's bytes in place needs no new space), then closed. np.load reads it."""
        if self._file.closed:
            return
        try:
            row_bytes = max(1, self.dtype.itemsize * int(np.prod(self.row_shape, dtype=np.int64)))
            self.rows = max(0, self._file.size() - self.HEADER_BYTES) // row_bytes
            self._file.cut(self.HEADER_BYTES + self.rows * row_bytes)
            self._file.pwrite(self._header(), 0)
            self._headed = self.rows
        except OSError:
            pass  # the header keeps its last count, never ahead of the data: still loadable
        finally:
            self._file.abandon()


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


class LogFull(NamedTuple):
    """Why and where a log stopped being written during a run (CsvLog.failure)."""

    path: Path
    """The file whose write failed (FILE.csv, or one of FILE.arrays/*.npy)."""
    reason: str
    """The operating system's words, as a user reads them ('the disk is full')."""
    time: float
    """s: the simulated time of the last whole row the CSV kept (0 when none)."""
    rows: int
    """The CSV's whole rows kept."""
    bytes: int
    """The bytes the log had been given up to the failure (CSV and arrays): its size had it been written."""
    full: bool
    """The disk (or the user's quota) was full: more free space lets the same run log."""

    def message(self, end_time: float | None = None) -> str:
        """The sentence for the user: the file, why, what was kept and, when the run's end is known
        (`end_time`, s), about how much free space the whole log needs."""
        text = (f"the log could not be written to {self.path} ({self.reason}), so the run stopped there; the "
                f"log keeps its {self.rows} whole rows, up to t = {self.time:.2f} s, and its arrays up to "
                "their last whole sample.")
        if self.full:
            rate = self.bytes / self.time if self.time > 0 else 0.0
            whole = self.bytes + rate * max(0.0, (end_time or 0.0) - self.time)
            free = _free_space(self.path)
            need = f"about {_size(whole)} for the whole run" if end_time is not None and rate > 0 else (
                f"more than {_size(self.bytes)}")
            text += (f" The log needs {need}" + (f" and {_size(free)} is free there" if free is not None else "")
                     + ": free some space on that disk or choose another path for the log.")
        return text


def _free_space(path: Path) -> int | None:
    try:
        return shutil.disk_usage(path.parent).free
    except OSError:
        return None


def _size(count: float) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if count >= scale:
            return f"{count / scale:.1f} {unit}"
    return f"{int(count)} bytes"


_FULL = {errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)}
_REASONS = {errno.ENOSPC: "the disk is full", errno.EFBIG: "the file reached the largest size this process may "
            "write (ulimit -f)", getattr(errno, "EDQUOT", errno.ENOSPC): "the disk quota is used up"}


def csv_header(blocks: list[tuple[str, list[str]]]) -> str:
    """A log's header line (CR LF at its end): time, then for each (prefix, sensor columns) block the
    robot's truth and sensor columns with its prefix."""
    header = io.StringIO()
    csv.writer(header, lineterminator="\r\n").writerow(
        ["time", *(f"{prefix}{column}" for prefix, columns in blocks for column in (*TRUTH_COLUMNS, *columns))])
    return header.getvalue()


def _truth(state: VehicleState) -> str:
    """The TRUTH_COLUMNS cells of a state."""
    roll, pitch, yaw = quaternion_to_euler(state.orientation)
    x, y, z = state.position.tolist()
    speed = math.hypot(*state.linear_velocity.tolist())
    return f"{x:.9g},{y:.9g},{z:.9g},{roll:.9g},{pitch:.9g},{yaw:.9g},{speed:.9g}"


def csv_row(state: VehicleState, sensor_cells: list[str]) -> str:
    """A one-robot log row as the file holds it (CR LF at its end): time, ground truth, sensor cells."""
    row = f"{state.time:.9g},{_truth(state)}"
    return f"{row},{','.join(sensor_cells)}\r\n" if sensor_cells else f"{row}\r\n"


def csv_robots_row(time: float, robots: list[tuple[VehicleState, list[str]]]) -> str:
    """A log row of a run with several robots as the file holds it: time (s), then each robot's truth
    and sensor cells."""
    parts = [f"{time:.9g}"]
    for state, cells in robots:
        parts.append(_truth(state))
        parts.extend(cells)
    return ",".join(parts) + "\r\n"


class CsvLog:
    """CSV log of ground truth and sensor readings, one row per control tick (SI units), and the sensors'
    array outputs (LIDAR scans) streamed into FILE.arrays/ beside it.

    Nothing waits for the end of the run: rows and samples reach the operating system at least every
    FLUSH_EVERY simulated seconds and whenever `flush()` is called (the simulation calls it before every
    turn of user code, so a crash of user code loses nothing logged before it), and closing completes
    every file.

    A write that fails during the run (the disk is full) stops the log whole: the CSV is cut to its last
    whole row, each array file to its whole rows with its header's count set to them, every file closed;
    `failure` says where and why, `on_failure` is told, and later writes do nothing. The run carries on
    or stops as its owner decides (a headless run stops)."""

    def __init__(self, path: str | Path, sensor_columns: list[str], *,
                 robots: list[tuple[str, list[str]]] | None = None,
                 on_failure: Callable[[LogFull], None] | None = None) -> None:
        """`sensor_columns`: a one-robot run's sensor columns (after time and TRUTH_COLUMNS). `robots`:
        instead, one block per robot of a run with several, as (prefix, sensor columns): each block is
        the robot's truth and sensor columns with its prefix ('rover.truth.x'); rows are then written
        with write_robots(). `on_failure`: called once when a write fails during the run."""
        self.path = Path(path)
        self.streams: dict[str, NpyStream] = {}
        """Array outputs by `<sensor>.time` and `<sensor>.<key>`, each streamed to its .npy file."""
        self.failure: LogFull | None = None
        """Why the log stopped being written, once a write failed during the run."""
        self.on_failure = on_failure
        blocks = [("", sensor_columns)] if robots is None else robots
        try:
            self._file = _RawFile(self.path)
            self._file.write(csv_header(blocks).encode("utf-8"))
            self._file.flush()
        except OSError as exc:
            if hasattr(self, "_file"):
                self._file.abandon()
            raise ProjectError(f"the log file cannot be written ({exc.strerror}); choose another path.",
                               file=self.path) from None
        self.bytes = self._file.taken
        """Bytes given to the log so far, CSV and arrays."""
        self._kept = (self._file.taken, 0, 0.0)
        """The CSV's last row the operating system took whole: (its end in bytes, rows up to it, its time)."""
        self._unsure: deque[tuple[int, int, float]] = deque()
        """The rows after it, each (end, rows, time): handed to the file, not yet known to be on disk."""
        self._end = self._file.taken
        if self.arrays_dir.is_dir():  # an earlier log's arrays (the CSV was replaced too)
            for stale in self.arrays_dir.glob("*.npy"):
                stale.unlink(missing_ok=True)
        self.rows = 0
        self.last_row = ""
        """The text of the last row written (a recording of the run keeps the same text)."""
        self._dirty = False
        self._next_flush = FLUSH_EVERY

    def write(self, state: VehicleState, sensor_cells: list[str]) -> None:
        """One row: time, ground truth, then the sensors' cells (numbers or empty, so no quoting)."""
        if self.failure is not None:
            return
        self._row(csv_row(state, sensor_cells), state.time)

    def write_robots(self, time: float, robots: list[tuple[VehicleState, list[str]]]) -> None:
        """One row of a run with several robots: time (s), then each robot's truth and sensor cells, in
        the order of the `robots` blocks given when the log was made."""
        if self.failure is not None:
            return
        self._row(csv_robots_row(time, robots), time)

    def _row(self, text: str, time: float) -> None:
        self.last_row = text
        data = text.encode("utf-8")
        self.rows += 1
        self.bytes += len(data)
        self._end += len(data)
        self._dirty = True
        unsure = self._unsure
        unsure.append((self._end, self.rows, time))
        try:
            self._file.write(data)
            self._settle()
            if time >= self._next_flush:
                self.flush()
                self._next_flush = (math.floor(time / FLUSH_EVERY) + 1) * FLUSH_EVERY
        except LogWriteError as exc:
            self._fail(exc)

    def add_arrays(self, name: str, time: float, arrays: dict[str, np.ndarray]) -> None:
        """Append one sample's array outputs of sensor `name` (Sensor.arrays) to its .npy files."""
        if self.failure is not None:
            return
        items = [("time", np.float64(time)), *arrays.items()]
        try:
            for key, array in items:
                full = f"{name}.{key}"
                stream = self.streams.get(full)
                if stream is None:
                    folder = self.arrays_dir
                    target = folder / f"{full}.npy"
                    try:
                        folder.mkdir(exist_ok=True)
                        stream = self.streams[full] = NpyStream(target, np.asarray(array))
                    except LogWriteError:
                        raise
                    except OSError as exc:
                        raise LogWriteError(target, exc) from None
                    self.bytes += NpyStream.HEADER_BYTES
                before = stream.bytes
                stream.append(np.asarray(array))
                self.bytes += stream.bytes - before
        except LogWriteError as exc:
            self._fail(exc)
            return
        self._dirty = True

    @property
    def arrays_dir(self) -> Path:
        """FILE.arrays beside FILE.csv: per sensor with array outputs `<name>.time.npy` (s) and
        `<name>.<key>.npy` (e.g. a LIDAR's `<name>.ranges.npy`, m), one row per sample; read them with
        `load_arrays(FILE.csv)` or np.load."""
        return arrays_dir(self.path)

    def flush(self) -> None:
        """Everything logged so far to the operating system (it survives the process being killed)."""
        if self._dirty and self.failure is None and not self._file.closed:
            try:
                self._file.flush()
                self._settle()
                for stream in self.streams.values():
                    stream.flush()
            except LogWriteError as exc:
                self._fail(exc)
                return
            self._dirty = False

    def close(self) -> None:
        if not self._file.closed:
            self.flush()
            if self.failure is not None:
                return
            try:
                self._file.close()
                for stream in self.streams.values():
                    stream.close()
            except LogWriteError as exc:
                self._fail(exc)

    def _settle(self) -> None:
        """The rows the operating system has taken whole are sure (bounded bookkeeping: a buffer's worth)."""
        unsure, taken = self._unsure, self._file.taken
        while unsure and unsure[0][0] <= taken:
            self._kept = unsure.popleft()

    def _fail(self, exc: LogWriteError) -> None:
        """A write failed: every file cut to what it holds whole and closed, the failure kept and told."""
        if self.failure is not None:
            return
        rows, last = self._cut_csv()
        for stream in self.streams.values():
            stream.cut_to_whole_rows()
        cause = exc.cause
        reason = _REASONS.get(cause.errno or 0) or cause.strerror or str(cause)
        self.failure = LogFull(exc.path, reason, last, rows, self.bytes, cause.errno in _FULL)
        self.rows = rows
        if self.on_failure is not None:
            self.on_failure(self.failure)

    def _cut_csv(self) -> tuple[int, float]:
        """The CSV cut to its last whole row on disk and closed: (the rows it keeps, the last one's time)."""
        raw = self._file
        taken = raw.taken
        end, rows, time = self._kept
        for row in self._unsure:  # rows whose every byte the operating system took before the failure
            if row[0] <= taken:
                end, rows, time = row
        self._unsure.clear()
        if not raw.closed:
            try:
                raw.cut(end)
            except OSError:
                pass  # cannot cut (the file system refuses): the partial row stays, as after a kill
            finally:
                raw.abandon()
        return rows, time
