"""Recording a run into an MCAP file (`sear run --record FILE.mcap`): `Recorder`, the run's observer
(sear.runtime.robotrun.RunObserver), which the simulation tells of every tick, input and output.

What it writes (docs/recording.md has the topic list, schemas, units and frames):

- `/tf` (foxglove.FrameTransforms): each robot's ground-truth pose in the frame `world` (ENU, m, the
  orientation as a quaternion x, y, z, w) on every control tick, each sensor's mount (frame
  `<robot>/<sensor>`, fixed to `<robot>`) at the start, and moving obstacles' poses (`obstacle/<i>`);
- `/<robot>/<sensor>`: every sample of every sensor, in Foxglove's schema for its kind (LaserScan,
  PointCloud for a LIDAR of several layers, RawImage 32FC1 for a depth camera, LocationFix for a GPS) or
  sear.SensorReading (JSON values with their units) for the others;
- `/scene` (foxglove.SceneUpdate): the terrain and every obstacle, again whenever user code adds one;
- `/log` (sear.LogRow): every row of the CSV log, as `--log` writes it; `/console` (foxglove.Log):
  user prints and error reports; `/inputs` (sear.Input): every `sim` call and keyboard input, with the
  physics step after which it was made, from which a run is re-simulated (sear.recording.resume);
- attachments: the project file and every file it refers to (paths relative to their common folder),
  and metadata `sear` (version, seed, rates, robots, sensors, the CSV header), so the file is
  self-contained.

Chunks are closed and handed to the operating system every simulated second, so a run that is killed
leaves a file readable (sear.recording.reader) up to its last whole chunk.
"""

from __future__ import annotations

import base64
import contextlib
import json
import math
import os
from json.encoder import encode_basestring as json_string
from pathlib import Path
from typing import Any

import numpy as np
from mcap.writer import CompressionType, IndexType

from sear import __version__
from sear.errors import ProjectError
from sear.project import Project
from sear.recording.mcapwriter import FastWriter
from sear.recording.schemas import SCHEMAS
from sear.recording.wire import wire_to_json
from sear.runtime.logs import csv_header, csv_robots_row, csv_row
from sear.runtime.sim import calls
from sear.runtime.simulation import Simulation, TickResult
from sear.sensors.base import Sensor

FORMAT_VERSION = "1"
"""The recording format's version (metadata sear.format): readers refuse files of a newer one."""
FLUSH_EVERY = 1.0
"""s of simulated time: a chunk is closed and written at least this often (what a kill can lose)."""
NS = 1_000_000_000
ROBOT_COLOUR = {"r": 0.2, "g": 0.45, "b": 0.85, "a": 1.0}
"""The robots' bodies in the recorded scene."""
OBSTACLE_PERIOD_NS = 100_000_000
"""ns: moving obstacles' poses go on /tf at most this often (10 Hz), and only when they moved."""
HELD_COMMANDS = frozenset({"accelerate", "brake", "steer"})
"""`sim` calls that set one held input each and nothing else: made again with the same arguments, with no
other input on the robot in between, they change nothing, so a recording keeps them once."""

SENSOR_UNITS: dict[str, dict[str, str]] = {
    "infrared": {"distance": "m", "detected": "bool"},
    "ultrasonic": {"distance": "m"},
    "gps": {"latitude": "deg", "longitude": "deg", "altitude": "m"},
    "lidar": {"min": "m"},
    "depth_camera": {"centre": "m", "min": "m"},
    "accelerometer": {"x": "m/s^2", "y": "m/s^2", "z": "m/s^2"},
    "odometer": {"distance": "m", "ticks": "count"},
    "gripper": {"beam": "bool", "opening": "m", "height": "m", "holding": "bool"},
}
"""The unit of each log field of each sensor type (the compass and gyroscope say theirs in their
definitions: output_unit)."""


def sensor_units(sensor: Sensor) -> dict[str, str]:
    """The unit of each of `sensor`'s log fields ('' when unknown, e.g. a plug-in sensor type's)."""
    known = SENSOR_UNITS.get(sensor.TYPE, {})
    if sensor.TYPE == "compass":
        known = {"heading": str(getattr(sensor.config, "output_unit", "deg"))}
    elif sensor.TYPE == "gyroscope":
        unit = str(getattr(sensor.config, "output_unit", "rad/s"))
        known = {"x": unit, "y": unit, "z": unit}
    return {field: known.get(field, "") for field in sensor.log_fields}


def stamp(time: float) -> dict[str, int]:
    """A Foxglove time of simulated `time` s (seconds since the run started)."""
    ns = round(time * NS)
    return {"sec": ns // NS, "nsec": ns % NS}


def _number(value: Any) -> float | int | bool | None:
    """A reading's field as JSON holds it: NaN and missing as null."""
    if type(value) is float:
        return value if math.isfinite(value) else None
    if value is None:
        return None
    if isinstance(value, bool | np.bool_):
        return bool(value)
    if isinstance(value, int | np.integer):
        return int(value)
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def _json_value(value: float | int | bool | None) -> str:
    """A value of sensor_values as JSON text."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    return repr(value)


def _json_number(value: Any) -> str:
    """A reading's field as JSON text in one step (_json_value(_number(value)), the common float first)."""
    if type(value) is float:
        return repr(value) if value - value == 0.0 else "null"  # NaN and infinities fail x - x == 0
    return _json_value(_number(value))


_compact = json.JSONEncoder(separators=(",", ":")).encode
"""json.dumps with compact separators, without building an encoder on every call."""


def _json_float(value: float) -> str:
    """A float as JSON text (null for NaN and infinities, which JSON cannot hold)."""
    return repr(value) if math.isfinite(value) else "null"


def sensor_values(sensor: Sensor, reading: Any) -> dict[str, float | int | bool | None]:
    """The values of `reading`'s log fields (a scalar reading is its one field's value)."""
    fields = sensor.log_fields
    if reading is None:
        return dict.fromkeys(fields)
    if len(fields) == 1 and not isinstance(reading, tuple):
        return {fields[0]: _number(reading)}
    return {field: _number(getattr(reading, field, None)) for field in fields}


def rotation_quaternion(matrix: np.ndarray) -> tuple[float, float, float, float]:
    """A rotation matrix as a unit quaternion (x, y, z, w)."""
    from scipy.spatial.transform import Rotation

    x, y, z, w = Rotation.from_matrix(np.asarray(matrix, dtype=float)).as_quat()
    return float(x), float(y), float(z), float(w)


def _pose(position: Any = (0.0, 0.0, 0.0), orientation: Any = (0.0, 0.0, 0.0, 1.0)) -> dict[str, Any]:
    x, y, z = (float(v) for v in position)
    qx, qy, qz, qw = (float(v) for v in orientation)
    return {"position": {"x": x, "y": y, "z": z}, "orientation": {"x": qx, "y": qy, "z": qz, "w": qw}}


def project_files(project: Project) -> tuple[Path, dict[str, Path]]:
    """The files a recording embeds: the project file and every file it refers to (a URDF with its whole
    folder, where its meshes are), by their path relative to their common folder (with '/'), and that
    folder."""
    files: list[Path] = []
    if project.path is not None:
        files.append(Path(project.path).resolve())
    for choice in project.file_choices().values():
        if choice.path is None:
            continue
        path = Path(choice.path).resolve()
        if path.is_file():
            files.append(path)
            if path.suffix.lower() in (".urdf", ".xacro", ".obj"):
                files += [p for p in path.parent.rglob("*") if p.is_file() and p.stat().st_size < 50_000_000
                          and not p.name.endswith((".mcap", ".csv"))] if path.suffix.lower() != ".obj" else [
                    p for p in path.parent.iterdir() if p.suffix.lower() in (".mtl", ".png", ".jpg", ".jpeg")]
    unique = list(dict.fromkeys(files))
    root = Path(os.path.commonpath([str(p.parent) for p in unique])) if unique else Path(".")
    return root, {p.relative_to(root).as_posix(): p for p in unique}


def check_record_path(path: str | Path, project: Project, *, force: bool = False, log: str | Path | None = None
                      ) -> Path:
    """`path` as a recording may be written there, or ProjectError saying why not: never over the project's
    own files, a folder or the run's CSV log, and over an existing file only with `force`."""
    path = Path(path)
    _root, files = project_files(project)
    real = os.path.realpath(path)
    if any(os.path.realpath(p) == real for p in files.values()):
        raise ProjectError("the recording would overwrite one of the project's files; choose another path "
                           "(e.g. run.mcap).", file=path)
    if log is not None and os.path.realpath(log) == real:
        raise ProjectError("the recording and the log are the same file; give them different names.", file=path)
    if path.is_dir():
        raise ProjectError("the recording path is a folder; give a file name (e.g. run.mcap).", file=path)
    if path.exists() and not force:
        raise ProjectError(f"{path.name} exists; choose another path for the recording, or add --force to "
                           "overwrite it.", file=path)
    return path


def _mesh_glb(mesh: Any) -> bytes:
    """A trimesh mesh as binary glTF (what Foxglove's ModelPrimitive draws from its `data`)."""
    return bytes(mesh.export(file_type="glb"))


def embed_project(writer: Any, simulation: Simulation, **extra: str) -> None:
    """Attach the project's files to a recording (`writer`: an mcap or mcap_ros2 Writer) and write its
    `sear` metadata: format, SEAR's version, seed, rates, robots and their sensors, the CSV header, and
    `extra` (the ROS 2 format's `encoding`)."""
    project = simulation.project
    root, files = project_files(project)
    for name, path in files.items():
        writer.add_attachment(0, 0, name, "application/octet-stream", path.read_bytes())
    project_name = Path(project.path).resolve().relative_to(root).as_posix() if project.path else ""
    robots = simulation.robots
    blocks = [("", robots[0].sensors.log_columns())] if len(robots) == 1 else [
        (r.prefix, r.sensors.log_columns()) for r in robots]
    writer.add_metadata("sear", {
        "format": FORMAT_VERSION, "version": __version__, "seed": str(simulation.seed), "project": project_name,
        "physics_hz": repr(float(simulation.physics_hz)),
        "control_hz": repr(float(project.simulation.control_hz)),
        "control_every": str(simulation.control_every),
        "robots": json.dumps([r.name for r in robots]),
        "sensors": json.dumps({r.name: [{"name": s.name, "type": s.TYPE, "fields": list(s.log_fields),
                                         "units": sensor_units(s)} for s in r.sensors.sensors] for r in robots}),
        "csv_header": csv_header(blocks),
        # every input since t = 0 is in the file (a recording from the start, or one whose run kept a journal)
        "from_start": "1" if simulation.steps == 0 or simulation.journal is not None else "0",
        "started_at": repr(float(simulation.world.time)),
        **extra,
    })


class _SensorChannel:
    """One sensor's topic and how its samples are written."""

    def __init__(self, recorder: Recorder, robot: str, sensor: Sensor) -> None:
        self.sensor = sensor
        self.frame = f"{robot}/{sensor.name}"
        self.topic = f"/{robot}/{sensor.name}"
        kind = sensor.TYPE
        shape = getattr(sensor, "shape", None)
        if kind == "lidar":
            self.schema = "foxglove.LaserScan" if shape is not None and len(shape) == 1 else "foxglove.PointCloud"
        elif kind == "depth_camera":
            self.schema = "foxglove.RawImage"
        elif kind == "gps":
            self.schema = "foxglove.LocationFix"
        else:
            self.schema = "sear.SensorReading"
        self.units = sensor_units(sensor)
        metadata = {"sensor": sensor.name, "type": kind, "robot": robot}
        if shape is not None:
            metadata["shape"] = json.dumps([int(n) for n in shape])
        self.channel = recorder.channel(self.topic, self.schema, metadata)
        self._pairs = [(json_string(field) + ":", field) for field in sensor.log_fields]
        self._keys = [key for key, _field in self._pairs]
        self._fields = tuple(sensor.log_fields)
        self._nulls = ",".join(key + "null" for key, _field in self._pairs)
        self._prefix = (f'{{"frame_id":{json_string(self.frame)},"sensor":{json_string(sensor.name)},'
                        f'"type":{json_string(kind)},"units":{json.dumps(self.units)},"timestamp":')
        if self.schema == "foxglove.LaserScan":
            angles = sensor.scan_angles  # type: ignore[attr-defined]
            self._prefix_scan = (f'{{"frame_id":{json_string(self.frame)},"pose":{json.dumps(_pose())},'
                                 f'"start_angle":{float(angles[0])!r},"end_angle":{float(angles[-1])!r},'
                                 '"intensities":[],"timestamp":')

    def text(self, time_stamp: str) -> str | None:
        """A sear.SensorReading message of the latest reading as JSON text (None for the other schemas),
        `time_stamp` its timestamp's JSON."""
        if self.schema == "foxglove.LaserScan":
            reading = self.sensor.reading
            if reading is None:
                return None
            ranges = np.nan_to_num(np.asarray(reading, dtype=float), nan=0.0).tolist()
            return f'{self._prefix_scan}{time_stamp},"ranges":{json.dumps(ranges)}}}'
        if self.schema != "sear.SensorReading":
            return None
        reading = self.sensor.reading
        if reading is None:
            body = self._nulls
        elif len(self._pairs) == 1 and not isinstance(reading, tuple):
            body = self._pairs[0][0] + _json_number(reading)
        elif getattr(reading, "_fields", None) == self._fields:  # a NamedTuple of exactly the log fields
            body = ",".join([key + _json_number(value) for key, value in zip(self._keys, reading, strict=True)])
        else:
            body = ",".join([key + _json_number(getattr(reading, name, None)) for key, name in self._pairs])
        return f'{self._prefix}{time_stamp},"values":{{{body}}}}}'

    def message(self, time: float) -> dict[str, Any]:
        sensor, reading = self.sensor, self.sensor.reading
        head = {"timestamp": stamp(time), "frame_id": self.frame}
        if self.schema == "foxglove.LaserScan":
            angles = sensor.scan_angles  # type: ignore[attr-defined]
            ranges = np.nan_to_num(np.asarray(reading, dtype=float), nan=0.0)
            return {**head, "pose": _pose(), "start_angle": float(angles[0]), "end_angle": float(angles[-1]),
                    "ranges": ranges.tolist(), "intensities": []}
        if self.schema == "foxglove.PointCloud":
            scan = np.asarray(reading, dtype=float).ravel()
            points = sensor.directions * np.nan_to_num(scan, nan=0.0)[:, None]  # type: ignore[attr-defined]
            packed = np.zeros(len(scan), dtype=[("x", "<f4"), ("y", "<f4"), ("z", "<f4"), ("range", "<f8")])
            packed["x"], packed["y"], packed["z"] = points[:, 0], points[:, 1], points[:, 2]
            packed["range"] = scan
            return {**head, "pose": _pose(), "point_stride": 20,
                    "fields": [{"name": "x", "offset": 0, "type": 7}, {"name": "y", "offset": 4, "type": 7},
                               {"name": "z", "offset": 8, "type": 7}, {"name": "range", "offset": 12, "type": 8}],
                    "data": base64.b64encode(packed.tobytes()).decode("ascii")}
        if self.schema == "foxglove.RawImage":
            image = np.ascontiguousarray(reading, dtype="<f4")
            height, width = image.shape
            return {**head, "width": width, "height": height, "encoding": "32FC1", "step": width * 4,
                    "data": base64.b64encode(image.tobytes()).decode("ascii")}
        if self.schema == "foxglove.LocationFix":
            accuracy = float(getattr(sensor.config, "accuracy_m", 0.0) or 0.0)
            variance = accuracy * accuracy
            return {**head, "latitude": float(reading.latitude), "longitude": float(reading.longitude),
                    "altitude": float(reading.altitude),
                    "position_covariance": [variance, 0.0, 0.0, 0.0, variance, 0.0, 0.0, 0.0, variance],
                    "position_covariance_type": 2 if accuracy > 0 else 0}
        return {**head, "sensor": sensor.name, "type": sensor.TYPE, "values": sensor_values(sensor, reading),
                "units": self.units}


class Recorder:
    """Writes a run into an MCAP file as it goes (see the module's docstring); give it to a Simulation as
    its `observer`. `path` is created (or replaced) when the run starts."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._writer: Any = None
        """Where messages go (a FastWriter): register_schema/channel, add, flush, finish, attachments."""
        self._file: Any = None
        self._schemas: dict[str, int] = {}
        self._channels: dict[str, int] = {}
        self._sensors: dict[int, _SensorChannel] = {}
        self._sim: Simulation | None = None
        self._obstacles = 0
        self._next_flush = FLUSH_EVERY
        self._last_manual: dict[int, list[Any]] = {}
        self._held: dict[int, dict[str, list[Any]]] = {}
        self._robot_frames: list[str] = []
        self._properties = frozenset(name for name, call in calls().items() if call.kind == "property")
        self._log = self._tf = self._console = self._inputs = self._scene = 0
        self._moving: list[int] = []
        self._placed: dict[int, tuple[float, ...]] = {}
        self._next_obstacles = 0
        """ns: when the moving obstacles' poses are written next (OBSTACLE_PERIOD_NS apart)."""
        """The pose last written of each moving obstacle (position m, quaternion)."""
        self.messages = 0
        """Messages written so far."""
        self.failure: str | None = None
        """Why the recording stopped during the run (a write failed), else None."""

    # --- the file -------------------------------------------------------------------------------------

    def channel(self, topic: str, schema: str, metadata: dict[str, str] | None = None) -> int:
        """The id of `topic`'s channel (registered with its schema on first use)."""
        assert self._writer is not None
        channel = self._channels.get(topic)
        if channel is None:
            schema_id = self._schemas.get(schema)
            if schema_id is None:
                schema_id = self._schemas[schema] = self._writer.register_schema(
                    schema, "jsonschema", json.dumps(SCHEMAS[schema]).encode())
            channel = self._channels[topic] = self._writer.register_channel(
                topic, "json", schema_id, metadata or {})
        return channel

    def _write(self, channel: int, time: float, message: dict[str, Any]) -> None:
        """A message (JSON-encoded here: the messages that are not written on most ticks)."""
        assert self._writer is not None
        self._writer.add(channel, round(time * NS), _compact(message).encode())
        self.messages += 1

    def _open(self) -> Any:
        """The sink the messages go to: an MCAP file at `path` (a live server overrides it)."""
        try:
            self._file = open(self.path, "wb")  # noqa: SIM115 - closed by closed()
        except OSError as exc:
            raise ProjectError(f"the recording cannot be written ({exc.strerror or exc}); choose another path.",
                               file=self.path) from None
        # No message indexes: their (time, offset) pair per message, kept until the chunk closes, made the
        # interpreter's garbage collector walk a growing heap (a message cost ~20 µs instead of ~1 µs);
        # readers find messages through the chunk indexes and read a chunk whole.
        return FastWriter(self._file, compression=CompressionType.ZSTD, chunk_size=4 << 20,
                          index_types=IndexType.CHUNK | IndexType.ATTACHMENT | IndexType.METADATA)

    # --- RunObserver ----------------------------------------------------------------------------------

    def started(self, simulation: Simulation) -> None:
        """Open the file, embed the project, describe the robots and sensors, write the scene."""
        self._sim = simulation
        writer = self._writer = self._open()
        writer.start(profile="", library=f"sear {__version__}")
        embed_project(writer, simulation)
        robots = simulation.robots
        self._tf = self.channel("/tf", "foxglove.FrameTransforms")
        self._log = self.channel("/log", "sear.LogRow")
        self._console = self.channel("/console", "foxglove.Log")
        self._inputs = self.channel("/inputs", "sear.Input")
        self._scene = self.channel("/scene", "foxglove.SceneUpdate")
        mounts = []
        for run in robots:
            for sensor in run.sensors.sensors:
                self._sensors[id(sensor)] = _SensorChannel(self, run.name, sensor)
                mounts.append({"timestamp": stamp(0.0), "parent_frame_id": run.name,
                               "child_frame_id": f"{run.name}/{sensor.name}",
                               "translation": dict(zip("xyz", map(float, sensor.mount_position), strict=True)),
                               "rotation": dict(zip("xyzw", rotation_quaternion(sensor.mount_rotation), strict=True))})
        self._write(self._tf, 0.0, {"transforms": mounts})
        self._robot_frames = [json_string(run.name) for run in robots]
        self._scene_update(simulation, terrain=True)
        ns = round(simulation.world.time * NS)
        self._write_poses(simulation, ns, f'{{"sec":{ns // NS},"nsec":{ns % NS}}}')
        if simulation.steps > 0:
            self._write_journal(simulation)
        writer.flush()

    def _scene_update(self, simulation: Simulation, *, terrain: bool = False) -> None:
        """The terrain (once) and the obstacles not yet written, as scene entities."""
        world = simulation.world
        time = world.time
        entities = []
        empty: dict[str, list[Any]] = {kind: [] for kind in ("arrows", "cubes", "spheres", "cylinders", "lines",
                                                              "triangles", "texts")}
        white = {"r": 1.0, "g": 1.0, "b": 1.0, "a": 1.0}
        unit = {"x": 1.0, "y": 1.0, "z": 1.0}
        if terrain:
            data = base64.b64encode(_mesh_glb(world.terrain.mesh)).decode("ascii")
            entities.append({"timestamp": stamp(time), "frame_id": "world", "id": "terrain",
                             "lifetime": {"sec": 0, "nsec": 0}, "frame_locked": False, "metadata": [], **empty,
                             "models": [{"pose": _pose(), "scale": unit, "color": white, "override_color": False,
                                         "url": "", "media_type": "model/gltf-binary", "data": data}]})
        if terrain:  # each robot's body, drawn in its ground-truth frame (/tf), so it follows the robot
            for index, vehicle in enumerate(world.vehicles):
                mesh = getattr(vehicle, "body_mesh", None)
                if mesh is None or not len(mesh.faces):
                    continue
                name = simulation.robots[index].name
                entities.append({"timestamp": stamp(time), "frame_id": name, "id": f"robot/{name}",
                                 "lifetime": {"sec": 0, "nsec": 0}, "frame_locked": True,
                                 "metadata": [{"key": "kind", "value": "robot"}], **empty,
                                 "models": [{"pose": _pose(), "scale": unit, "color": ROBOT_COLOUR,
                                             "override_color": True, "url": "", "media_type": "model/gltf-binary",
                                             "data": base64.b64encode(_mesh_glb(mesh)).decode("ascii")}]})
        for index in range(self._obstacles, len(world.obstacles)):
            obstacle = world.obstacles[index]
            position, orientation = world.obstacle_pose(obstacle)
            r, g, b, a = (float(c) for c in obstacle.colour)
            frame = f"obstacle/{index}" if obstacle.dynamic else "world"
            pose = _pose() if obstacle.dynamic else _pose(position, orientation)
            if obstacle.dynamic:
                self._moving.append(index)
            entities.append({"timestamp": stamp(time), "frame_id": frame, "id": f"obstacle/{index}",
                             "lifetime": {"sec": 0, "nsec": 0}, "frame_locked": bool(obstacle.dynamic),
                             "metadata": [{"key": "kind", "value": obstacle.kind},
                                          {"key": "name", "value": obstacle.name}],
                             **empty, "models": [{
                                 "pose": pose, "scale": unit, "color": {"r": r, "g": g, "b": b, "a": a},
                                 "override_color": True, "url": "", "media_type": "model/gltf-binary",
                                 "data": base64.b64encode(_mesh_glb(obstacle.mesh)).decode("ascii")}]})
        self._obstacles = len(world.obstacles)
        if entities:
            self._write(self._scene, time, {"deletions": [], "entities": entities})

    def _write_poses(self, simulation: Simulation, ns: int, time_stamp: str) -> None:
        """Every robot's ground-truth pose (and the moving obstacles') on /tf, written as text: it is the
        message of every control tick."""
        assert self._writer is not None
        parts = []
        head = '{"timestamp":' + time_stamp + ',"parent_frame_id":"world","child_frame_id":'
        for run, frame in zip(simulation.robots, self._robot_frames, strict=True):
            state = run.state
            x, y, z = state.position.tolist()
            qx, qy, qz, qw = state.orientation.tolist()
            if math.isfinite(x + y + z + qx + qy + qz + qw):
                parts.append(f'{head}{frame},"translation":{{"x":{x!r},"y":{y!r},"z":{z!r}}},'
                             f'"rotation":{{"x":{qx!r},"y":{qy!r},"z":{qz!r},"w":{qw!r}}}}}')
        world = simulation.world
        placed = self._placed
        moving = self._moving if ns >= self._next_obstacles else ()
        if moving:
            self._next_obstacles = ns + OBSTACLE_PERIOD_NS
        for index in moving:
            position, orientation = world.obstacle_pose(world.obstacles[index])
            pose = (*position.tolist(), *orientation.tolist())
            if placed.get(index) == pose:  # at rest: its last transform holds
                continue
            placed[index] = pose
            x, y, z, qx, qy, qz, qw = pose
            parts.append(f'{head}"obstacle/{index}","translation":{{"x":{_json_float(x)},"y":{_json_float(y)},'
                         f'"z":{_json_float(z)}}},"rotation":{{"x":{_json_float(qx)},"y":{_json_float(qy)},'
                         f'"z":{_json_float(qz)},"w":{_json_float(qw)}}}}}')
        self._writer.add(self._tf, ns, ('{"transforms":[' + ",".join(parts) + "]}").encode())
        self.messages += 1

    def _drop_sink(self) -> None:
        """Write nothing more (after a failed write)."""
        self._writer = None

    def _fail(self, exc: OSError) -> None:
        """A write failed (the disk is full): the recording stops, keeping its chunks written so far (it
        reads as a killed run's does); the run goes on, and says so."""
        self._drop_sink()
        if self._file is not None:
            with contextlib.suppress(OSError):
                self._file.close()
        self.failure = (f"the recording could not be written to {self.path} ({exc.strerror or exc}); the run "
                        "goes on without it, and the file keeps what was written up to the last whole second.")
        if self._sim is not None:
            self._sim.emit(f"sear: {self.failure}\n", error=True)

    def ticked(self, simulation: Simulation, result: TickResult) -> None:
        """The tick's sensor samples, and on a control tick the poses and the log row; a chunk every
        simulated second (a failed write stops the recording: _fail)."""
        try:
            self._ticked(simulation, result)
        except OSError as exc:
            self._fail(exc)

    def _ticked(self, simulation: Simulation, result: TickResult) -> None:
        writer = self._writer
        fell = simulation.world.fell
        if fell:
            self._released(fell)
        if writer is None or not (result.sampled or result.control):
            return
        time = simulation.world.time
        ns = round(time * NS)
        time_stamp = f'{{"sec":{ns // NS},"nsec":{ns % NS}}}'
        for sensor in result.sampled:
            channel = self._sensors.get(id(sensor))
            if channel is None:
                continue
            text = channel.text(time_stamp)
            if text is not None:
                writer.add(channel.channel, ns, text.encode())
                self.messages += 1
            elif sensor.reading is not None:
                self._write(channel.channel, time, channel.message(time))
        if len(simulation.world.obstacles) != self._obstacles:
            self._scene_update(simulation)
        if result.control:
            self._write_poses(simulation, ns, time_stamp)
            log = simulation.log
            if log is not None and log.failure is None:
                row = log.last_row
            elif len(simulation.robots) == 1:
                row = csv_row(simulation.state, simulation.sensors.log_values())
            else:
                row = csv_robots_row(time, [(r.state, r.sensors.log_values()) for r in simulation.robots])
            writer.add(self._log, ns, f'{{"timestamp":{time_stamp},"row":{json_string(row)}}}'.encode())
            self.messages += 1
        if time + 1e-9 >= self._next_flush:
            writer.flush()
            self._next_flush = (math.floor(time / FLUSH_EVERY + 1e-9) + 1) * FLUSH_EVERY

    def _input(self, robot: int, kind: str, name: str, args: list[Any],
               at: tuple[float, int] | None = None) -> None:
        """An input on /inputs, made now or `at` (time s, steps done) for one from the run's journal."""
        simulation = self._sim
        if self._writer is None or simulation is None:
            return
        time, step = at if at is not None else (simulation.world.time, simulation.steps)
        ns = round(time * NS)
        try:
            self._writer.add(self._inputs, ns, (
                f'{{"timestamp":{{"sec":{ns // NS},"nsec":{ns % NS}}},"step":{step},"robot":{robot},'
                f'"kind":{json_string(kind)},"name":{json_string(name)},'
                f'"args":{_compact(wire_to_json(args))}}}').encode())
            self.messages += 1
        except OSError as exc:
            self._fail(exc)

    def _released(self, robots: list[int]) -> None:
        """Robots whose inputs were released (a fall off the terrain's edge puts a robot back at its
        start with its inputs released): their next commands are kept even if they repeat the last ones."""
        for robot in robots:
            self._held.pop(robot, None)
            self._last_manual.pop(robot, None)

    def _write_journal(self, simulation: Simulation) -> None:
        """A recording started after the run's start: the inputs made before it, from the run's journal
        (Simulation(journal=True)), so it can be re-simulated from t = 0 all the same."""
        for entry in simulation.journal or ():
            at = (entry.time, entry.step)
            if entry.kind == "call":
                self.call(entry.robot, entry.name, entry.args, at=at)
            else:
                self.input(entry.robot, entry.kind, entry.args, at=at)

    def call(self, robot: int, name: str, args: Any, *, at: tuple[float, int] | None = None) -> None:
        """A `sim` call served: kept unless it only reads (a property) or it sets a held input (the
        engine force, the brake, the steering) to what the same call last set it to with nothing else
        made on that robot in between (a controller that sends its commands every tick)."""
        if name in self._properties:
            return
        self._last_manual.pop(robot, None)
        values = list(args) if isinstance(args, list | tuple) else [args]
        held = self._held.setdefault(robot, {})
        if name in HELD_COMMANDS:
            if held.get(name) == values:
                return
            held[name] = values
        else:
            held.clear()
        self._input(robot, "call", str(name), values, at)

    def input(self, robot: int, kind: str, args: list[Any], *, at: tuple[float, int] | None = None) -> None:
        """A keyboard input: a held key's manual input repeated every tick is kept once."""
        if robot < 0:
            self._held.clear()
        else:
            self._held.pop(robot, None)
        if kind == "manual":
            args = [float(args[0]), float(args[1]), bool(args[2])]
            if self._last_manual.get(robot) == args:
                return
            self._last_manual[robot] = args
        elif kind == "reset":
            self._last_manual.clear()
        self._input(robot, kind, kind, list(args), at)

    def output(self, text: str, error: bool) -> None:
        """User output (level INFO) or an error report (ERROR) on /console."""
        simulation = self._sim
        if self._writer is None or simulation is None or not text:
            return
        time = simulation.world.time
        try:
            self._write(self._console, time, {"timestamp": stamp(time), "level": 4 if error else 2,
                                              "message": text, "name": "sear", "file": "", "line": 0})
        except OSError as exc:
            self._fail(exc)

    def closed(self, simulation: Simulation) -> None:
        """Finish the file: the last chunk, the summary and the footer."""
        writer, self._writer = self._writer, None
        if writer is not None:
            try:
                writer.finish()
            except OSError as exc:
                self._fail(exc)
            finally:
                if self._file is not None:
                    with contextlib.suppress(OSError):
                        self._file.close()
