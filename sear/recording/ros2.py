"""`sear run --record FILE.mcap --record-format ros2`: the run in ROS 2's message encoding (CDR, profile
`ros2`), written with `mcap-ros2-support`, so `ros2 bag info` / `ros2 bag play` (rosbag2's MCAP storage)
and ROS tools read it.

Topics (docs/recording.md): `/tf` and `/tf_static` (tf2_msgs/msg/TFMessage: each robot in `world`, each
sensor's mount in its robot's frame); per sensor `/<robot>/<sensor>`: sensor_msgs/msg/LaserScan (a planar
LIDAR; float32 ranges, +inf for no return as REP 117 asks), PointCloud2 (a LIDAR of several layers: x, y,
z float32, the sensor frame), Image (a depth camera, 32FC1 metres, NaN no return), NavSatFix (GPS), Imu
(accelerometer: linear_acceleration; gyroscope: angular_velocity, rad/s; the other parts' covariance[0]
-1, "not given", as sensor_msgs/Imu documents), Range (infrared, ultrasonic: metres, +inf nothing in
range), std_msgs/msg/String carrying sear.SensorReading JSON (compass, odometer, gripper); `/rosout`
(rcl_interfaces/msg/Log): user prints and error reports; `/sear/log` and `/sear/inputs`
(std_msgs/msg/String): CSV rows and inputs as in the Foxglove format. The project is embedded as in the
default format. The world's geometry (the Foxglove format's /scene) is not written. Resuming and the
replay window read the default format only.
"""

from __future__ import annotations

import contextlib
import json
import math
from typing import Any

import numpy as np
from mcap.writer import CompressionType
from mcap_ros2.writer import Writer as Ros2Writer

from sear.errors import ProjectError
from sear.recording.wire import wire_to_json
from sear.recording.writer import (
    FLUSH_EVERY,
    NS,
    Recorder,
    embed_project,
    rotation_quaternion,
    sensor_units,
    sensor_values,
)
from sear.runtime.logs import csv_robots_row, csv_row
from sear.runtime.simulation import Simulation, TickResult
from sear.sensors.base import Sensor

_SEP = "=" * 80
_TIME = "int32 sec\nuint32 nanosec\n"
_HEADER = "builtin_interfaces/Time stamp\nstring frame_id\n"
_VECTOR3 = "float64 x\nfloat64 y\nfloat64 z\n"
_QUATERNION = "float64 x 0\nfloat64 y 0\nfloat64 z 0\nfloat64 w 1\n"


def _msgdef(main: str, *deps: tuple[str, str]) -> str:
    """A message definition with its dependencies, concatenated as rosbag2 stores them."""
    return main + "".join(f"{_SEP}\nMSG: {name}\n{text}" for name, text in deps)


_H = (("std_msgs/Header", _HEADER), ("builtin_interfaces/Time", _TIME))
MSGDEFS: dict[str, str] = {
    "tf2_msgs/msg/TFMessage": _msgdef(
        "geometry_msgs/TransformStamped[] transforms\n",
        ("geometry_msgs/TransformStamped", "std_msgs/Header header\nstring child_frame_id\n"
                                           "geometry_msgs/Transform transform\n"),
        *_H, ("geometry_msgs/Transform", "geometry_msgs/Vector3 translation\ngeometry_msgs/Quaternion rotation\n"),
        ("geometry_msgs/Vector3", _VECTOR3), ("geometry_msgs/Quaternion", _QUATERNION)),
    "sensor_msgs/msg/LaserScan": _msgdef(
        "std_msgs/Header header\nfloat32 angle_min\nfloat32 angle_max\nfloat32 angle_increment\n"
        "float32 time_increment\nfloat32 scan_time\nfloat32 range_min\nfloat32 range_max\nfloat32[] ranges\n"
        "float32[] intensities\n", *_H),
    "sensor_msgs/msg/PointCloud2": _msgdef(
        "std_msgs/Header header\nuint32 height\nuint32 width\nsensor_msgs/PointField[] fields\nbool is_bigendian\n"
        "uint32 point_step\nuint32 row_step\nuint8[] data\nbool is_dense\n", *_H,
        ("sensor_msgs/PointField", "uint8 INT8=1\nuint8 UINT8=2\nuint8 INT16=3\nuint8 UINT16=4\nuint8 INT32=5\n"
                                   "uint8 UINT32=6\nuint8 FLOAT32=7\nuint8 FLOAT64=8\nstring name\nuint32 offset\n"
                                   "uint8 datatype\nuint32 count\n")),
    "sensor_msgs/msg/Image": _msgdef(
        "std_msgs/Header header\nuint32 height\nuint32 width\nstring encoding\nuint8 is_bigendian\nuint32 step\n"
        "uint8[] data\n", *_H),
    "sensor_msgs/msg/NavSatFix": _msgdef(
        "uint8 COVARIANCE_TYPE_UNKNOWN=0\nuint8 COVARIANCE_TYPE_APPROXIMATED=1\n"
        "uint8 COVARIANCE_TYPE_DIAGONAL_KNOWN=2\nuint8 COVARIANCE_TYPE_KNOWN=3\n"
        "std_msgs/Header header\nsensor_msgs/NavSatStatus status\nfloat64 latitude\nfloat64 longitude\n"
        "float64 altitude\nfloat64[9] position_covariance\nuint8 position_covariance_type\n", *_H,
        ("sensor_msgs/NavSatStatus", "int8 STATUS_NO_FIX=-1\nint8 STATUS_FIX=0\nint8 STATUS_SBAS_FIX=1\n"
                                     "int8 STATUS_GBAS_FIX=2\nint8 status\nuint16 SERVICE_GPS=1\nuint16 service\n")),
    "sensor_msgs/msg/Imu": _msgdef(
        "std_msgs/Header header\ngeometry_msgs/Quaternion orientation\nfloat64[9] orientation_covariance\n"
        "geometry_msgs/Vector3 angular_velocity\nfloat64[9] angular_velocity_covariance\n"
        "geometry_msgs/Vector3 linear_acceleration\nfloat64[9] linear_acceleration_covariance\n", *_H,
        ("geometry_msgs/Quaternion", _QUATERNION), ("geometry_msgs/Vector3", _VECTOR3)),
    "sensor_msgs/msg/Range": _msgdef(
        "uint8 ULTRASOUND=0\nuint8 INFRARED=1\nstd_msgs/Header header\nuint8 radiation_type\nfloat32 field_of_view\n"
        "float32 min_range\nfloat32 max_range\nfloat32 range\n", *_H),
    "std_msgs/msg/String": "string data\n",
    "rcl_interfaces/msg/Log": _msgdef(
        "uint8 DEBUG=10\nuint8 INFO=20\nuint8 WARN=30\nuint8 ERROR=40\nuint8 FATAL=50\n"
        "builtin_interfaces/Time stamp\nuint8 level\nstring name\nstring msg\nstring file\nstring function\n"
        "uint32 line\n", ("builtin_interfaces/Time", _TIME)),
}
"""The ROS 2 message definitions a recording uses, as in their packages (common_interfaces, rcl_interfaces),
constants kept where a field uses them."""

_UNKNOWN = [-1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]
_ZERO9 = [0.0] * 9


def _stamp(ns: int) -> dict[str, int]:
    return {"sec": ns // NS, "nanosec": ns % NS}


def _header(ns: int, frame: str) -> dict[str, Any]:
    return {"stamp": _stamp(ns), "frame_id": frame}


def _schema_of(sensor: Sensor) -> str:
    shape = getattr(sensor, "shape", None)
    kind = sensor.TYPE
    if kind == "lidar":
        return "sensor_msgs/msg/LaserScan" if shape is not None and len(shape) == 1 else "sensor_msgs/msg/PointCloud2"
    return {"depth_camera": "sensor_msgs/msg/Image", "gps": "sensor_msgs/msg/NavSatFix",
            "accelerometer": "sensor_msgs/msg/Imu", "gyroscope": "sensor_msgs/msg/Imu",
            "infrared": "sensor_msgs/msg/Range", "ultrasonic": "sensor_msgs/msg/Range"}.get(kind, "std_msgs/msg/String")


def sensor_message(sensor: Sensor, frame: str, ns: int) -> dict[str, Any] | None:
    """A ROS 2 message (as a dict) of `sensor`'s latest reading, or None when there is none to send."""
    reading, config, kind = sensor.reading, sensor.config, sensor.TYPE
    schema = _schema_of(sensor)
    header = _header(ns, frame)
    if schema == "std_msgs/msg/String":
        return {"data": json.dumps({"sensor": sensor.name, "type": kind, "values": sensor_values(sensor, reading),
                                    "units": sensor_units(sensor)})}
    if schema == "sensor_msgs/msg/Range":
        value = sensor_values(sensor, reading)
        distance = value.get("distance")
        if "detected" in value:  # a digital infrared: detected or not, within its maximum range
            distance = float(getattr(config, "max_range_cm", 0.0)) / 100.0 if value["detected"] else None
        return {"header": header, "radiation_type": 1 if kind == "infrared" else 0,
                # the beam's width at its widest (its far end) seen from the sensor
                "field_of_view": 2 * math.atan2(float(getattr(config, "beam_width_cm", 0.0)) / 200.0,
                                                float(getattr(config, "max_range_cm", 100.0)) / 100.0),
                "min_range": float(getattr(config, "min_range_cm", 0.0)) / 100.0,
                "max_range": float(getattr(config, "max_range_cm", 0.0)) / 100.0,
                "range": math.inf if distance is None else float(distance)}
    if reading is None:
        return None
    if schema == "sensor_msgs/msg/LaserScan":
        angles = sensor.scan_angles  # type: ignore[attr-defined]
        ranges = np.asarray(reading, dtype=float)
        return {"header": header, "angle_min": float(angles[0]), "angle_max": float(angles[-1]),
                "angle_increment": float(angles[1] - angles[0]) if len(angles) > 1 else 0.0,
                "time_increment": 0.0, "scan_time": float(sensor.period),
                "range_min": float(getattr(config, "min_range_m", 0.0)),
                "range_max": float(getattr(config, "max_range_m", 0.0)),
                "ranges": np.where(np.isnan(ranges), np.inf, ranges).astype(np.float32).tolist(), "intensities": []}
    if schema == "sensor_msgs/msg/PointCloud2":
        scan = np.asarray(reading, dtype=float).ravel()
        ok = ~np.isnan(scan)
        points = (sensor.directions[ok] * scan[ok, None]).astype("<f4")  # type: ignore[attr-defined]
        return {"header": header, "height": 1, "width": len(points),
                "fields": [{"name": axis, "offset": 4 * i, "datatype": 7, "count": 1} for i, axis in enumerate("xyz")],
                "is_bigendian": False, "point_step": 12, "row_step": 12 * len(points), "data": points.tobytes(),
                "is_dense": True}
    if schema == "sensor_msgs/msg/Image":
        image = np.ascontiguousarray(reading, dtype="<f4")
        return {"header": header, "height": image.shape[0], "width": image.shape[1], "encoding": "32FC1",
                "is_bigendian": 0, "step": image.shape[1] * 4, "data": image.tobytes()}
    if schema == "sensor_msgs/msg/NavSatFix":
        accuracy = float(getattr(config, "accuracy_m", 0.0) or 0.0)
        variance = accuracy * accuracy
        return {"header": header, "status": {"status": 0, "service": 1}, "latitude": float(reading.latitude),
                "longitude": float(reading.longitude), "altitude": float(reading.altitude),
                "position_covariance": [variance, 0.0, 0.0, 0.0, variance, 0.0, 0.0, 0.0, variance],
                "position_covariance_type": 2 if accuracy > 0 else 0}
    # sensor_msgs/Imu: an accelerometer (m/s^2) or a gyroscope (rad/s, whatever its output unit)
    x, y, z = (float(v) for v in (reading.x, reading.y, reading.z))
    vector = {"x": x, "y": y, "z": z}
    zero = {"x": 0.0, "y": 0.0, "z": 0.0}
    if kind == "gyroscope" and getattr(config, "output_unit", "rad/s") == "deg/s":
        vector = {k: math.radians(v) for k, v in vector.items()}
    accelerometer = kind == "accelerometer"
    return {"header": header, "orientation": {"x": 0.0, "y": 0.0, "z": 0.0, "w": 1.0},
            "orientation_covariance": _UNKNOWN,
            "angular_velocity": zero if accelerometer else vector,
            "angular_velocity_covariance": _UNKNOWN if accelerometer else _ZERO9,
            "linear_acceleration": vector if accelerometer else zero,
            "linear_acceleration_covariance": _ZERO9 if accelerometer else _UNKNOWN}


class Ros2Recorder(Recorder):
    """A Recorder writing ROS 2 messages (see the module's docstring); give it to a Simulation as its
    `observer`."""

    def __init__(self, path: Any) -> None:
        super().__init__(path)
        self._ros: Ros2Writer | None = None
        self._ros_schemas: dict[str, Any] = {}
        self._frames: dict[int, tuple[str, str, Sensor]] = {}

    def _drop_sink(self) -> None:
        self._ros = None

    def _send(self, topic: str, schema: str, ns: int, message: dict[str, Any]) -> None:
        assert self._ros is not None
        found = self._ros_schemas.get(schema)
        if found is None:
            found = self._ros_schemas[schema] = self._ros.register_msgdef(schema, MSGDEFS[schema])
        self._ros.write_message(topic, found, message, log_time=ns, publish_time=ns)
        self.messages += 1

    def started(self, simulation: Simulation) -> None:
        self._sim = simulation
        try:
            self._file = open(self.path, "wb")  # noqa: SIM115 - closed by closed()
        except OSError as exc:
            raise ProjectError(f"the recording cannot be written ({exc.strerror or exc}); choose another path.",
                               file=self.path) from None
        ros = self._ros = Ros2Writer(self._file, chunk_size=4 << 20, compression=CompressionType.ZSTD)
        embed_project(ros, simulation, encoding="ros2")
        mounts = []
        for run in simulation.robots:
            for sensor in run.sensors.sensors:
                frame = f"{run.name}/{sensor.name}"
                self._frames[id(sensor)] = (f"/{run.name}/{sensor.name}", frame, sensor)
                qx, qy, qz, qw = rotation_quaternion(sensor.mount_rotation)
                mx, my, mz = (float(v) for v in sensor.mount_position)
                mounts.append({"header": _header(0, run.name), "child_frame_id": frame, "transform": {
                    "translation": {"x": mx, "y": my, "z": mz}, "rotation": {"x": qx, "y": qy, "z": qz, "w": qw}}})
        self._send("/tf_static", "tf2_msgs/msg/TFMessage", 0, {"transforms": mounts})
        self._poses(simulation, round(simulation.world.time * NS))
        if simulation.steps > 0:
            self._write_journal(simulation)
        self._flush()

    def _flush(self) -> None:
        if self._ros is not None:
            self._ros._writer.flush()  # a chunk closed and handed to the operating system

    def _poses(self, simulation: Simulation, ns: int) -> None:
        transforms = []
        for run in simulation.robots:
            state = run.state
            x, y, z = state.position.tolist()
            qx, qy, qz, qw = state.orientation.tolist()
            transforms.append({"header": _header(ns, "world"), "child_frame_id": run.name, "transform": {
                "translation": {"x": x, "y": y, "z": z}, "rotation": {"x": qx, "y": qy, "z": qz, "w": qw}}})
        self._send("/tf", "tf2_msgs/msg/TFMessage", ns, {"transforms": transforms})

    def _ticked(self, simulation: Simulation, result: TickResult) -> None:
        if simulation.world.fell:
            self._released(simulation.world.fell)
        if self._ros is None or not (result.sampled or result.control):
            return
        time = simulation.world.time
        ns = round(time * NS)
        for sensor in result.sampled:
            found = self._frames.get(id(sensor))
            if found is None:
                continue
            topic, frame, _sensor = found
            message = sensor_message(sensor, frame, ns)
            if message is not None:
                self._send(topic, _schema_of(sensor), ns, message)
        if result.control:
            self._poses(simulation, ns)
            log = simulation.log
            if log is not None and log.failure is None:
                row = log.last_row
            elif len(simulation.robots) == 1:
                row = csv_row(simulation.state, simulation.sensors.log_values())
            else:
                row = csv_robots_row(time, [(r.state, r.sensors.log_values()) for r in simulation.robots])
            self._send("/sear/log", "std_msgs/msg/String", ns, {"data": row})
        if time + 1e-9 >= self._next_flush:
            self._flush()
            self._next_flush = (math.floor(time / FLUSH_EVERY + 1e-9) + 1) * FLUSH_EVERY

    def _input(self, robot: int, kind: str, name: str, args: list[Any],
               at: tuple[float, int] | None = None) -> None:
        simulation = self._sim
        if self._ros is None or simulation is None:
            return
        time, step = at if at is not None else (simulation.world.time, simulation.steps)
        try:
            self._send("/sear/inputs", "std_msgs/msg/String", round(time * NS), {"data": json.dumps(
                {"step": step, "robot": robot, "kind": kind, "name": name, "args": wire_to_json(args)})})
        except OSError as exc:
            self._fail(exc)

    def output(self, text: str, error: bool) -> None:
        simulation = self._sim
        if self._ros is None or simulation is None or not text:
            return
        ns = round(simulation.world.time * NS)
        try:
            self._send("/rosout", "rcl_interfaces/msg/Log", ns, {
                "stamp": _stamp(ns), "level": 40 if error else 20, "name": "sear", "msg": text, "file": "",
                "function": "", "line": 0})
        except OSError as exc:
            self._fail(exc)

    def closed(self, simulation: Simulation) -> None:
        ros, self._ros = self._ros, None
        if ros is not None:
            try:
                ros.finish()
            except OSError as exc:
                self._fail(exc)
            finally:
                with contextlib.suppress(OSError):
                    self._file.close()
