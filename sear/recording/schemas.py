"""The JSON schemas of a recording's messages: Foxglove's well-known schemas (foxglove.LaserScan,
foxglove.PointCloud, foxglove.RawImage, foxglove.LocationFix, foxglove.FrameTransforms,
foxglove.SceneUpdate, foxglove.Log, as https://docs.foxglove.dev/docs/visualization/message-schemas
documents them in their JSON encoding: times as {sec, nsec}, bytes as base64 strings) and SEAR's own
(sear.SensorReading, sear.LogRow, sear.Input), all stored in the MCAP file with encoding "jsonschema".

Foxglove's optional lineage fields (message_id, lineage) are left out: a recording never sets them.
"""

from __future__ import annotations

from typing import Any

JsonSchema = dict[str, Any]


def _obj(title: str | None, properties: dict[str, Any], required: list[str] | None = None,
         description: str = "") -> JsonSchema:
    schema: JsonSchema = {"type": "object", "properties": properties,
                          "required": list(properties) if required is None else required}
    if title:
        schema["title"] = title
    if description:
        schema["description"] = description
    return schema


NUMBER: JsonSchema = {"type": "number"}
STRING: JsonSchema = {"type": "string"}
BYTES: JsonSchema = {"type": "string", "contentEncoding": "base64"}
TIME: JsonSchema = {"type": "object", "title": "time", "properties": {
    "sec": {"type": "integer", "minimum": 0}, "nsec": {"type": "integer", "minimum": 0, "maximum": 999999999}}}
DURATION: JsonSchema = {"type": "object", "title": "duration", "properties": {
    "sec": {"type": "integer"}, "nsec": {"type": "integer", "minimum": 0, "maximum": 999999999}}}
VECTOR3 = _obj("foxglove.Vector3", {"x": NUMBER, "y": NUMBER, "z": NUMBER})
QUATERNION = _obj("foxglove.Quaternion", {"x": NUMBER, "y": NUMBER, "z": NUMBER, "w": NUMBER})
POSE = _obj("foxglove.Pose", {"position": VECTOR3, "orientation": QUATERNION})
COLOR = _obj("foxglove.Color", {"r": NUMBER, "g": NUMBER, "b": NUMBER, "a": NUMBER})
KEY_VALUE = _obj("foxglove.KeyValuePair", {"key": STRING, "value": STRING})


def _enum(title: str, names: list[str]) -> JsonSchema:
    return {"title": title, "oneOf": [{"title": name, "const": value} for value, name in enumerate(names)]}


def _array(items: JsonSchema, **extra: Any) -> JsonSchema:
    return {"type": "array", "items": items, **extra}


LASER_SCAN = _obj("foxglove.LaserScan", {
    "timestamp": TIME, "frame_id": STRING, "pose": POSE, "start_angle": NUMBER, "end_angle": NUMBER,
    "ranges": _array(NUMBER), "intensities": _array(NUMBER)},
    description="A single scan from a planar laser range-finder")

PACKED_ELEMENT_FIELD = _obj("foxglove.PackedElementField", {
    "name": STRING, "offset": {"type": "integer", "minimum": 0},
    "type": _enum("foxglove.NumericType", ["UNKNOWN", "UINT8", "INT8", "UINT16", "INT16", "UINT32", "INT32",
                                           "FLOAT32", "FLOAT64"])})
POINT_CLOUD = _obj("foxglove.PointCloud", {
    "timestamp": TIME, "frame_id": STRING, "pose": POSE, "point_stride": {"type": "integer", "minimum": 0},
    "fields": _array(PACKED_ELEMENT_FIELD), "data": BYTES},
    description="A collection of N-dimensional points, which may contain additional fields with information like "
                "normals, intensity, etc.")

RAW_IMAGE = _obj("foxglove.RawImage", {
    "timestamp": TIME, "frame_id": STRING, "width": {"type": "integer", "minimum": 0},
    "height": {"type": "integer", "minimum": 0}, "encoding": STRING, "step": {"type": "integer", "minimum": 0},
    "data": BYTES}, description="A raw image")

LOCATION_FIX = _obj("foxglove.LocationFix", {
    "timestamp": TIME, "frame_id": STRING, "latitude": NUMBER, "longitude": NUMBER, "altitude": NUMBER,
    "position_covariance": _array(NUMBER, minItems=9, maxItems=9),
    "position_covariance_type": _enum("foxglove.PositionCovarianceType",
                                      ["UNKNOWN", "APPROXIMATED", "DIAGONAL_KNOWN", "KNOWN"])},
    description="A navigation satellite fix for any Global Navigation Satellite System")

FRAME_TRANSFORM = _obj("foxglove.FrameTransform", {
    "timestamp": TIME, "parent_frame_id": STRING, "child_frame_id": STRING, "translation": VECTOR3,
    "rotation": QUATERNION}, description="A transform between two reference frames in 3D space")
FRAME_TRANSFORMS = _obj("foxglove.FrameTransforms", {"transforms": _array(FRAME_TRANSFORM)},
                        description="An array of FrameTransform messages")

LOG = _obj("foxglove.Log", {
    "timestamp": TIME, "level": _enum("foxglove.LogLevel", ["UNKNOWN", "DEBUG", "INFO", "WARNING", "ERROR", "FATAL"]),
    "message": STRING, "name": STRING, "file": STRING, "line": {"type": "integer", "minimum": 0}},
    description="A log message")

CUBE = _obj("foxglove.CubePrimitive", {"pose": POSE, "size": VECTOR3, "color": COLOR})
TRIANGLE_LIST = _obj("foxglove.TriangleListPrimitive", {
    "pose": POSE, "points": _array(_obj("foxglove.Point3", {"x": NUMBER, "y": NUMBER, "z": NUMBER})),
    "color": COLOR, "colors": _array(COLOR), "indices": _array({"type": "integer", "minimum": 0})})
MODEL = _obj("foxglove.ModelPrimitive", {
    "pose": POSE, "scale": VECTOR3, "color": COLOR, "override_color": {"type": "boolean"}, "url": STRING,
    "media_type": STRING, "data": BYTES})
_UNUSED_PRIMITIVE: JsonSchema = {"type": "object"}
"""Arrows, spheres, cylinders, lines and texts: a recording's entities always carry them empty."""
SCENE_ENTITY = _obj("foxglove.SceneEntity", {
    "timestamp": TIME, "frame_id": STRING, "id": STRING, "lifetime": DURATION, "frame_locked": {"type": "boolean"},
    "metadata": _array(KEY_VALUE), "arrows": _array(_UNUSED_PRIMITIVE), "cubes": _array(CUBE),
    "spheres": _array(_UNUSED_PRIMITIVE), "cylinders": _array(_UNUSED_PRIMITIVE), "lines": _array(_UNUSED_PRIMITIVE),
    "triangles": _array(TRIANGLE_LIST), "texts": _array(_UNUSED_PRIMITIVE), "models": _array(MODEL)},
    description="A visual element in a 3D scene. An entity may be composed of multiple primitives which all share "
                "the same frame of reference.")
SCENE_ENTITY_DELETION = _obj("foxglove.SceneEntityDeletion", {
    "timestamp": TIME, "type": _enum("foxglove.SceneEntityDeletionType", ["MATCHING_ID", "ALL"]), "id": STRING})
SCENE_UPDATE = _obj("foxglove.SceneUpdate", {
    "deletions": _array(SCENE_ENTITY_DELETION), "entities": _array(SCENE_ENTITY)},
    description="An update to the entities displayed in a 3D scene")

_VALUE: JsonSchema = {"type": ["number", "boolean", "null"]}
SENSOR_READING = _obj("sear.SensorReading", {
    "timestamp": TIME, "frame_id": STRING, "sensor": STRING, "type": STRING,
    "values": {"type": "object", "additionalProperties": _VALUE},
    "units": {"type": "object", "additionalProperties": STRING}},
    description="One sample of a SEAR sensor without a Foxglove schema of its own (compass, accelerometer, "
                "gyroscope, odometer, range sensors, gripper): its log fields' values in their units "
                "(null: no reading)")
LOG_ROW = _obj("sear.LogRow", {"timestamp": TIME, "row": STRING},
               description="One row of the run's CSV log, exactly as `sear run --log` writes it (CR LF included)")
INPUT = _obj("sear.Input", {
    "timestamp": TIME, "step": {"type": "integer", "minimum": 0}, "robot": {"type": "integer", "minimum": -1},
    "kind": {"enum": ["call", "manual", "gripper", "reset", "pull", "pull_to", "release"]}, "name": STRING,
    "args": {"type": "array"}},
    description="An input of the run: a `sim` call of user code (name and arguments as the protocol carries them; "
                "bytes as {\"$bytes\": base64}), a keyboard input or a mouse pull on a body, made after physics step "
                "`step`")

SCHEMAS: dict[str, JsonSchema] = {schema["title"]: schema for schema in (
    LASER_SCAN, POINT_CLOUD, RAW_IMAGE, LOCATION_FIX, FRAME_TRANSFORMS, LOG, SCENE_UPDATE, SENSOR_READING, LOG_ROW,
    INPUT)}
"""Every schema a recording uses, by name (the MCAP schema record's name)."""
