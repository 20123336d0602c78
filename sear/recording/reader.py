"""Reading a recording (`sear run --record FILE.mcap`): `Recording`, and re-simulating from it
(`resimulate`, sear.recording.resume).

The API (stable: later versions add to it, never rename)::

    from sear.recording import Recording, resimulate

    rec = Recording.open("run.mcap")   # RecordingError (a sentence naming the file) when unreadable
    rec.complete                       # False for a run that was killed: readable up to its last chunk
    rec.robots                         # ['rover']: robot names, in the project's order
    rec.topics                         # {'/tf': TopicInfo(topic, schema, count, robot, sensor), ...}
    rec.sensors("rover")               # [SensorInfo(name, type, topic, schema, fields, units), ...]
    rec.duration                       # s of simulated time recorded (the last message's time)
    rec.tick                           # s: one physics step (1 / physics_hz); rec.control_period likewise
    rec.seed, rec.sear_version, rec.physics_hz, rec.control_hz
    rec.start_time                     # s: when recording started (0, or later for one started mid-run)
    rec.resumable                      # every input since t = 0 is in the file: resimulate() works

    rec.pose(t, "rover")               # Pose(time, position (3,) m, orientation (4,) x y z w, roll, pitch, yaw)
                                       #   at the last control tick at or before t (None before the first)
    rec.sensor_value(t, "rover", "lidar")   # SensorSample(time, values {field: number|bool|None},
                                            #   array ndarray|None, message dict) of its last sample <= t
    rec.sensor_values(t, "rover")      # {sensor name: SensorSample | None}
    rec.csv_header                     # the CSV log's header line, as `--log` writes it (CR LF)
    rec.csv_row(t)                     # the log row of the last control tick <= t (text, CR LF), or None
    rec.csv_rows(until=None)           # [(time, row text)] in order
    rec.prints(until=t)                # [Print(time, text, error)]: user output and error reports
    rec.inputs(until=t)                # [Input(time, step, robot, kind, name, args)]
    rec.state_at(t)                    # State(time, poses, sensors, csv_row, prints, inputs): all of the above
    rec.scene(until=t)                 # [(time, SceneUpdate dict)]: terrain and obstacles as added
    rec.messages(topic)                # [(time, decoded JSON dict)] of a topic
    rec.times(topic)                   # ndarray of a topic's message times, s

    rec.files                          # {relative path: bytes}: the embedded project and its files
    rec.project_file                   # the project file's relative path among them
    rec.extract(folder)                # writes them under folder; returns the project file's path

    sim = resimulate(rec, T, progress=lambda done, total: ..., log_path=None)
        # a live sear.runtime.simulation.Simulation at simulated time T (the control tick at or before
        # it), re-simulated from the embedded project, seed and recorded inputs with no user code
        # running: its state equals the recording's. Then take over: drive it with
        # sim.set_manual_input(...) or give a robot user code with attach_user_code(sim, path=None)
        # (None: the embedded code; a path: edited code) followed by sim.start_user_code(); tick it
        # with sim.tick() / sim.run(seconds); sim.close() at the end (removes the extracted project).

Times are simulated seconds since the run started. Everything is in SI units and the world frame (ENU).
"""

from __future__ import annotations

import base64
import bisect
import io
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, NamedTuple

import numpy as np
from mcap.records import Attachment, Channel, Metadata, Schema
from mcap.records import Message as McapMessage
from mcap.stream_reader import StreamReader

from sear.errors import SearError
from sear.recording.wire import json_to_wire
from sear.state import quaternion_to_euler

NS = 1_000_000_000
SUPPORTED_FORMAT = 1


class RecordingError(SearError):
    """A recording that cannot be read (not an MCAP file, not SEAR's, a newer format)."""


class TopicInfo(NamedTuple):
    topic: str
    schema: str
    """The schema's name ('foxglove.LaserScan', 'sear.SensorReading', ...)."""
    count: int  # type: ignore[assignment]  # a field named as tuple's method: the messages on the topic
    robot: str | None
    """The robot a sensor topic belongs to (None for the others)."""
    sensor: str | None


class SensorInfo(NamedTuple):
    name: str
    type: str
    """The definition's type ('lidar', 'gps', ...)."""
    topic: str
    schema: str
    fields: list[str]
    """Its log fields (the CSV's '<name>.<field>' columns)."""
    units: dict[str, str]


class Pose(NamedTuple):
    time: float
    position: np.ndarray
    """(3,) m, world frame (ENU)."""
    orientation: np.ndarray
    """(4,) quaternion x, y, z, w."""
    roll: float
    pitch: float
    yaw: float
    """rad, yaw 0 = east."""


class SensorSample(NamedTuple):
    time: float
    values: dict[str, Any]
    """Its log fields' values (None: no reading); empty for LIDARs and depth cameras (see `array`)."""
    array: np.ndarray | None
    """A LIDAR's ranges (m, NaN = no return; (layers, beams) for several layers) or a depth camera's
    z-depths (height, width) float32 m, as sim.read gives them; None for other types."""
    message: dict[str, Any]
    """The message as recorded."""


class Print(NamedTuple):
    time: float
    text: str
    error: bool


class Input(NamedTuple):
    time: float
    step: int
    """The physics step after which it was made (0: before the first)."""
    robot: int
    """The robot's index (-1: every robot, a reset)."""
    kind: str
    """'call' (a `sim` call of user code), 'manual' (keyboard throttle, steer, brake), 'gripper', 'reset',
    'pull' (the mouse grabs body args[0] at args[1:4] m), 'pull_to' (target m), 'release'."""
    name: str
    args: list[Any]


@dataclass
class State:
    """Everything recorded about one moment (Recording.state_at)."""

    time: float
    poses: dict[str, Pose | None]
    sensors: dict[str, dict[str, SensorSample | None]]
    csv_row: str | None
    prints: list[Print] = field(default_factory=list)
    inputs: list[Input] = field(default_factory=list)


class _Topic:
    __slots__ = ("decoded", "metadata", "payloads", "schema", "times")

    def __init__(self, schema: str, metadata: dict[str, str]) -> None:
        self.schema = schema
        self.metadata = metadata
        self.times: list[int] = []
        self.payloads: list[bytes] = []
        self.decoded: dict[int, dict[str, Any]] = {}


class Recording:
    """A SEAR recording read into memory (see the module's docstring for the API)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        try:
            data = self.path.read_bytes()
        except OSError as exc:
            raise RecordingError(f"{self.path}: cannot read the recording ({exc.strerror or exc}).") from None
        self.complete = False
        self._topics: dict[str, _Topic] = {}
        self._files: dict[str, bytes] = {}
        self._meta: dict[str, str] = {}
        schemas: dict[int, Schema] = {}
        channels: dict[int, Channel] = {}
        by_channel: dict[int, _Topic] = {}
        reader = StreamReader(io.BytesIO(data), skip_magic=False)
        records = reader.records
        try:
            for record in records:
                if isinstance(record, McapMessage):
                    topic = by_channel.get(record.channel_id)
                    if topic is not None:
                        topic.times.append(record.log_time)
                        topic.payloads.append(bytes(record.data))
                elif isinstance(record, Schema):
                    schemas[record.id] = record
                elif isinstance(record, Channel):
                    channels[record.id] = record
                    if record.topic not in self._topics:
                        schema = schemas.get(record.schema_id)
                        self._topics[record.topic] = _Topic(schema.name if schema else "", dict(record.metadata))
                    by_channel[record.id] = self._topics[record.topic]
                elif isinstance(record, Attachment):
                    self._files[record.name] = bytes(record.data)
                elif isinstance(record, Metadata) and record.name == "sear":
                    self._meta = dict(record.metadata)
                elif type(record).__name__ == "Footer":
                    self.complete = True
        except Exception as exc:  # a killed run's file ends inside a record: what came before is kept
            if not self._meta and not self._topics:
                raise RecordingError(f"{self.path}: not a readable MCAP recording ({exc}).") from None
        if not self._meta:
            raise RecordingError(f"{self.path}: not a SEAR recording (it has no 'sear' metadata).")
        if self._meta.get("encoding") == "ros2":
            raise RecordingError(f"{self.path}: recorded with --record-format ros2, for ROS 2 tools (ros2 bag); SEAR "
                                 "replays and resumes recordings of the default format (--record without it).")
        if int(self._meta.get("format", "0")) > SUPPORTED_FORMAT:
            raise RecordingError(f"{self.path}: recorded by a newer SEAR (format {self._meta['format']}); "
                                 "update SEAR to read it.")
        for topic in self._topics.values():  # chunks are written in time order; within one, sort by time
            if any(b < a for a, b in zip(topic.times, topic.times[1:], strict=False)):
                order = sorted(range(len(topic.times)), key=topic.times.__getitem__)
                topic.times = [topic.times[i] for i in order]
                topic.payloads = [topic.payloads[i] for i in order]
        self.robots: list[str] = json.loads(self._meta.get("robots", "[]"))
        self.seed = int(self._meta.get("seed", "0"))
        self.sear_version = self._meta.get("version", "")
        self.physics_hz = float(self._meta.get("physics_hz", "0"))
        self.control_hz = float(self._meta.get("control_hz", "0"))
        self.control_every = int(self._meta.get("control_every", "1"))
        self.tick = 1.0 / self.physics_hz if self.physics_hz else 0.0
        self.control_period = self.tick * self.control_every
        self.csv_header: str = self._meta.get("csv_header", "")
        self.resumable = self._meta.get("from_start", "1") != "0"
        """Whether the file holds every input since t = 0, so resimulate() can re-simulate it: a recording
        from the run's start, or one started later in a run that kept its journal (the window's runs)."""
        self.start_time = float(self._meta.get("started_at", "0"))
        """s: when the recording started (0 unless Record Run was ticked during the run)."""
        self.project_file: str = self._meta.get("project", "")
        self._sensor_info: dict[str, list[SensorInfo]] = {}
        declared = json.loads(self._meta.get("sensors", "{}"))
        for robot in self.robots:
            infos = []
            for item in declared.get(robot, []):
                name = f"/{robot}/{item['name']}"
                infos.append(SensorInfo(item["name"], item["type"], name, self._topics[name].schema
                                        if name in self._topics else "", list(item["fields"]), dict(item["units"])))
            self._sensor_info[robot] = infos

    @classmethod
    def open(cls, path: str | Path) -> Recording:
        """Read the recording at `path` (RecordingError when it cannot be read)."""
        return cls(path)

    # --- what it holds ----------------------------------------------------------------------------

    @property
    def topics(self) -> dict[str, TopicInfo]:
        return {name: TopicInfo(name, t.schema, len(t.times), t.metadata.get("robot"), t.metadata.get("sensor"))
                for name, t in self._topics.items()}

    def sensors(self, robot: str | None = None) -> list[SensorInfo]:
        """The sensors of `robot` (None: the first robot), in the order of its sensors file."""
        return list(self._sensor_info.get(robot or self.robots[0], []))

    @property
    def duration(self) -> float:
        """s: the time of the last message recorded."""
        last = max((t.times[-1] for t in self._topics.values() if t.times), default=0)
        return last / NS

    @property
    def files(self) -> dict[str, bytes]:
        return dict(self._files)

    @property
    def metadata(self) -> dict[str, str]:
        """The `sear` metadata record as written."""
        return dict(self._meta)

    def extract(self, folder: str | Path) -> Path:
        """Write the embedded files under `folder` (their relative paths kept); the project file's path."""
        folder = Path(folder)
        for name, data in self._files.items():
            relative = PurePosixPath(name)
            if relative.is_absolute() or ".." in relative.parts:
                raise RecordingError(f"{self.path}: the embedded file name {name!r} leaves its folder.")
            target = folder.joinpath(*relative.parts)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        return folder.joinpath(*PurePosixPath(self.project_file).parts)

    # --- messages --------------------------------------------------------------------------------

    def _decoded(self, topic: _Topic, index: int) -> dict[str, Any]:
        message = topic.decoded.get(index)
        if message is None:
            message = topic.decoded[index] = json.loads(topic.payloads[index])
        return message

    def _last_index(self, topic: str, time: float) -> int | None:
        found = self._topics.get(topic)
        if found is None:
            return None
        index = bisect.bisect_right(found.times, round(time * NS)) - 1
        return index if index >= 0 else None

    def times(self, topic: str) -> np.ndarray:
        found = self._topics.get(topic)
        return np.asarray(found.times if found else [], dtype=np.int64) / NS

    def messages(self, topic: str, *, until: float | None = None) -> list[tuple[float, dict[str, Any]]]:
        found = self._topics.get(topic)
        if found is None:
            return []
        end = len(found.times) if until is None else bisect.bisect_right(found.times, round(until * NS))
        return [(found.times[i] / NS, self._decoded(found, i)) for i in range(end)]

    def iter_messages(self, topic: str) -> Iterator[tuple[float, dict[str, Any]]]:
        found = self._topics.get(topic)
        if found is None:
            return
        for i in range(len(found.times)):
            yield found.times[i] / NS, self._decoded(found, i)

    # --- the state at a time ------------------------------------------------------------------------

    def pose(self, time: float, robot: str | None = None) -> Pose | None:
        """`robot`'s (None: the first's) ground-truth pose at the last control tick at or before `time`."""
        robot = robot or self.robots[0]
        found = self._topics.get("/tf")
        index = self._last_index("/tf", time)
        while found is not None and index is not None and index >= 0:
            for transform in self._decoded(found, index)["transforms"]:
                if transform["child_frame_id"] == robot and transform["parent_frame_id"] == "world":
                    t, r = transform["translation"], transform["rotation"]
                    stamp = transform["timestamp"]
                    orientation = np.array([r["x"], r["y"], r["z"], r["w"]])
                    roll, pitch, yaw = quaternion_to_euler(orientation)
                    return Pose(stamp["sec"] + stamp["nsec"] / NS, np.array([t["x"], t["y"], t["z"]]), orientation,
                                roll, pitch, yaw)
            index -= 1
        return None

    def _sample(self, info: SensorInfo, time: float, message: dict[str, Any]) -> SensorSample:
        array = None
        values: dict[str, Any] = {}
        if info.schema == "foxglove.LaserScan":
            array = np.asarray(message["ranges"], dtype=float)
            array[array == 0.0] = np.nan
        elif info.schema == "foxglove.PointCloud":
            packed = np.frombuffer(base64.b64decode(message["data"]),
                                   dtype=[("x", "<f4"), ("y", "<f4"), ("z", "<f4"), ("range", "<f8")])
            array = packed["range"].copy()
            shape = self._topics[info.topic].metadata.get("shape")
            if shape:
                array = array.reshape(json.loads(shape))
        elif info.schema == "foxglove.RawImage":
            array = np.frombuffer(base64.b64decode(message["data"]), dtype="<f4").reshape(
                message["height"], message["width"]).copy()
        elif info.schema == "foxglove.LocationFix":
            values = {"latitude": message["latitude"], "longitude": message["longitude"],
                      "altitude": message["altitude"]}
        else:
            values = dict(message.get("values", {}))
        return SensorSample(time, values, array, message)

    def sensor_value(self, time: float, robot: str | None, sensor: str) -> SensorSample | None:
        """The last sample of `robot`'s sensor `sensor` at or before `time` (None before its first)."""
        robot = robot or self.robots[0]
        info = next((i for i in self._sensor_info.get(robot, []) if i.name == sensor), None)
        if info is None:
            raise RecordingError(f"{self.path}: robot {robot!r} has no sensor {sensor!r}.")
        index = self._last_index(info.topic, time)
        if index is None:
            return None
        found = self._topics[info.topic]
        return self._sample(info, found.times[index] / NS, self._decoded(found, index))

    def sensor_values(self, time: float, robot: str | None = None) -> dict[str, SensorSample | None]:
        robot = robot or self.robots[0]
        return {info.name: self.sensor_value(time, robot, info.name) for info in self._sensor_info.get(robot, [])}

    def csv_rows(self, until: float | None = None) -> list[tuple[float, str]]:
        return [(t, m["row"]) for t, m in self.messages("/log", until=until)]

    def csv_row(self, time: float) -> str | None:
        index = self._last_index("/log", time)
        return None if index is None else self._decoded(self._topics["/log"], index)["row"]

    def prints(self, until: float | None = None) -> list[Print]:
        return [Print(t, m["message"], m["level"] >= 4) for t, m in self.messages("/console", until=until)]

    def inputs(self, until: float | None = None) -> list[Input]:
        return [Input(t, m["step"], m["robot"], m["kind"], m["name"], json_to_wire(m["args"]))
                for t, m in self.messages("/inputs", until=until)]

    def scene(self, until: float | None = None) -> list[tuple[float, dict[str, Any]]]:
        return self.messages("/scene", until=until)

    def state_at(self, time: float) -> State:
        return State(time, {robot: self.pose(time, robot) for robot in self.robots},
                     {robot: self.sensor_values(time, robot) for robot in self.robots}, self.csv_row(time),
                     self.prints(until=time), self.inputs(until=time))
