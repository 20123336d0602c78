"""A run's parameters and the project they are set in: what a sweep's dotted paths name (Targets, which
refuses a value the project's loader would refuse), and setting a run's values into its copy of the project,
its sensors and its user code's module variables (apply_parameters, set_user_variables).

sear.batch.sweep reads the sweep file and checks each value here; sear.batch.worker applies a run's values
here before it loads the run.
"""

from __future__ import annotations

import ast
import copy
import dataclasses
import datetime
import difflib
import math
import typing
from pathlib import Path
from typing import Any, Literal

from sear import xmlio
from sear.errors import SearError
from sear.fields import fields_of, number_problem, strip_optional
from sear.models.filecheck import path_too_long
from sear.project import ROOT_TAG, Project
from sear.sensors.config import ROOT_TAG as SENSORS_ROOT_TAG
from sear.sensors.config import SensorConfig, consistency_problems
from sear.sensors.files import load_sensors, sensors_to_xml

START_KEYS = ("north", "east", "yaw_deg", "altitude")
"""The keys of a `start` pose in a sweep: metres north and east of the terrain centre, degrees
counter-clockwise from east, metres above the ground."""


class SweepError(SearError):
    """A mistake in a sweep file: the file, line and key, and what to do."""


def _json_value(value: Any) -> Any:
    if isinstance(value, datetime.date | datetime.time):
        raise SweepError("dates and times cannot be parameters; use numbers or text.")
    if isinstance(value, list):
        return [_json_value(v) for v in value]
    if isinstance(value, dict):
        return {k: _json_value(v) for k, v in value.items()}
    return value


def user_variables(path: Path) -> dict[str, int]:
    """Module-level variables of a user code file that a sweep may set (simple assignments `NAME = ...`
    at the top level), by name, with their lines."""
    try:
        tree = ast.parse(path.read_bytes(), str(path))
    except (OSError, SyntaxError, ValueError):
        return {}
    names: dict[str, int] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            names.setdefault(node.targets[0].id, node.lineno)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            names.setdefault(node.target.id, node.lineno)
    return names


def set_user_variables(source: str, values: dict[str, Any]) -> str:
    """The user code `source` with the first top-level assignment of each name in `values` given that
    value instead (a Python literal), every other line where it was: a traceback's line numbers stay true."""
    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line.encode()))
    data = source.encode()
    edits: list[tuple[int, int, bytes]] = []
    done: set[str] = set()
    for node in tree.body:
        target = value = None
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            target, value = node.targets[0].id, node.value
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            target, value = node.target.id, node.value
        if target is None or value is None or target not in values or target in done:
            continue
        done.add(target)
        assert value.end_lineno is not None and value.end_col_offset is not None
        start = offsets[value.lineno - 1] + value.col_offset
        end = offsets[value.end_lineno - 1] + value.end_col_offset
        spare = "\n" * (value.end_lineno - value.lineno)
        edits.append((start, end, f"({values[target]!r}{spare})".encode()))
    missing = set(values) - done
    if missing:
        raise SweepError(f"the user code has no module variable {sorted(missing)[0]!r} to set.")
    for start, end, text in sorted(edits, reverse=True):
        data = data[:start] + text + data[end:]
    return data.decode()


def yaw_quaternion(yaw_deg: float) -> tuple[float, float, float, float]:
    """A rotation of `yaw_deg` degrees about the vertical (counter-clockwise seen from above, 0 = facing
    east, the world's x axis), as a quaternion (x, y, z, w)."""
    half = math.radians(yaw_deg) / 2.0
    return (0.0, 0.0, math.sin(half), math.cos(half))


class Targets:
    """What the paths of a sweep name in one project: its fields, its sensors' fields, its user code's
    module variables and `start`. `check` refuses what the project's loader would refuse."""

    def __init__(self, project: Project) -> None:
        self.project = project
        self.sensors: list[SensorConfig] = []
        self.sensors_error: str | None = None
        if project.code.sensors is not None:
            try:
                self.sensors = load_sensors(project.code.sensors)
            except SearError as exc:
                self.sensors_error = str(exc)
        self.variables = user_variables(project.code.user_code) if project.code.user_code is not None else {}

    def check(self, key: str, value: Any, base: Path) -> Any:
        value = _json_value(value)
        head, _, rest = key.partition(".")
        if key == "start":
            return self._start(value)
        if head == "sensors":
            return self._sensor(rest, value)
        if head == "code" and rest and "." not in rest and rest not in {f.name for f in fields_of(type(
                self.project.code))}:
            return self._variable(rest, value)
        project = copy.deepcopy(self.project)
        converted = assign(project, key, value, base)
        try:
            root = xmlio.dataclass_to_element(project, ROOT_TAG, project.path.parent if project.path else None)
        except SearError as exc:  # a number no project file can hold (nearer 0 than 1e-100, ...)
            raise SweepError(exc.message) from None
        root.set("version", "1")
        _schema_check(root, "project.xsd", ROOT_TAG)
        return converted

    def _start(self, value: Any) -> Any:
        if not isinstance(value, dict) or not value or set(value) - set(START_KEYS):
            raise SweepError(f"a start pose is a table of {', '.join(START_KEYS)} (metres north and east of the "
                             "terrain centre, degrees counter-clockwise from east, metres above the ground), "
                             "e.g. {north = 2.0, east = -1.0, yaw_deg = 90}.")
        for name, number in value.items():
            if isinstance(number, bool) or not isinstance(number, int | float) or number_problem(float(number)):
                raise SweepError(f"start pose {name} must be a number, not {number!r}.")
        return {k: float(v) for k, v in value.items()}

    def _sensor(self, rest: str, value: Any) -> Any:
        if self.sensors_error is not None:
            raise SweepError(f"the project's sensors file cannot be read: {self.sensors_error}")
        name, _, path = rest.partition(".")
        by_name = {s.name: s for s in self.sensors}
        if name not in by_name:
            hint = difflib.get_close_matches(name, by_name, n=1)
            known = ", ".join(by_name) or "none"
            raise SweepError(f"the project has no sensor {name!r}" + (f"; did you mean {hint[0]!r}?" if hint else
                             f" (its sensors: {known})."))
        if not path:
            raise SweepError("name a field of the sensor, e.g. sensors.NAME.noise.")
        sensors = copy.deepcopy(self.sensors)
        sensor = next(s for s in sensors if s.name == name)
        if path == "name":
            raise SweepError("a sensor's name cannot vary (user code reads it by name).")
        converted = assign(sensor, path, value, None, what=f"sensor {name!r} ({sensor.TYPE})")
        try:
            root = xmlio.etree.fromstring(sensors_to_xml(sensors))
        except SearError as exc:  # a number no sensors file can hold
            raise SweepError(f"sensor {name!r}: {exc.message}") from None
        _schema_check(root, "sensors.xsd", SENSORS_ROOT_TAG)
        for _field, sentence in consistency_problems(sensor):
            raise SweepError(f"sensor {name!r}: {sentence}")
        return converted

    def _variable(self, name: str, value: Any) -> Any:
        if name not in self.variables:
            hint = difflib.get_close_matches(name, self.variables, n=1)
            fields = ", ".join(f.name for f in fields_of(type(self.project.code)))
            raise SweepError(f"the user code has no module variable {name!r}" + (
                f"; did you mean {hint[0]!r}?" if hint else
                f" (code.NAME sets a variable assigned at the top of the user code, NAME = ..., or a Code "
                f"Setup field: {fields}).") )
        return value


def _schema_check(root: Any, schema_name: str, root_tag: str) -> None:
    xsd = xmlio.schema(schema_name)
    doc = xmlio.etree.fromstring(xmlio.serialise(root))
    if not xsd.validate(doc):
        _field, sentence = xmlio.explain_schema_error(xsd.error_log[0], root_tag, schema_name)
        raise SweepError(sentence)


def _convert(value: Any, tp: Any, base: Path | None, name: str) -> Any:
    tp, _optional = strip_optional(tp)
    origin = typing.get_origin(tp)
    if tp is bool:
        if not isinstance(value, bool):
            raise SweepError(f"expected true or false, found {value!r}.")
        return value
    if tp in (float, int):
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise SweepError(f"expected a number, found {value!r}.")
        if tp is int and not float(value).is_integer():
            raise SweepError(f"expected a whole number, found {value!r}.")
        return tp(value)
    if origin is Literal:
        choices = typing.get_args(tp)
        if value not in choices:
            raise SweepError(f"{value!r} is not allowed; use one of: {', '.join(map(str, choices))}.")
        return value
    if tp is str:
        if not isinstance(value, str):
            raise SweepError(f"expected text in quotes, found {value!r}.")
        return value
    if tp is Path:
        if not isinstance(value, str) or not value:
            raise SweepError(f"expected a file path in quotes, found {value!r}.")
        resolved = (base / value) if base is not None else Path(value)
        too_long = path_too_long(resolved)
        if too_long:
            raise SweepError(too_long)
        if not resolved.is_file():
            raise SweepError(f"{resolved} does not exist (paths are relative to the sweep file).")
        return str(resolved.resolve())
    if origin is tuple:
        args = typing.get_args(tp)
        if not isinstance(value, list) or len(value) != len(args):
            raise SweepError(f"expected a list of {len(args)} numbers, found {value!r}.")
        return [_convert(v, a, base, name) for v, a in zip(value, args, strict=True)]
    raise SweepError(f"{name} cannot be set from a sweep file.")


def _python_value(value: Any, tp: Any) -> Any:
    tp, _ = strip_optional(tp)
    if tp is Path:
        return Path(value)
    if typing.get_origin(tp) is tuple:
        return tuple(value)
    return value


def assign(obj: Any, path: str, value: Any, base: Path | None, *, what: str = "the project") -> Any:
    """Set the field at dotted `path` of the dataclass `obj` (dicts such as `wheels` by key) to `value`;
    returns the value as a run's parameters keep it (JSON). SweepError for a path that names no field
    (with the nearest that does) or a value of the wrong type."""
    parts = path.split(".")
    target = obj
    for depth, part in enumerate(parts):
        last = depth == len(parts) - 1
        if isinstance(target, dict):
            if part not in target:
                hint = difflib.get_close_matches(part, target, n=1)
                raise SweepError(f"{what} has no {'.'.join(parts[:depth + 1])!r}" + (
                    f"; did you mean {'.'.join([*parts[:depth], hint[0]])!r}?" if hint else
                    f" (one of {', '.join(target)})."))
            if last:
                raise SweepError(f"{path} is a group of fields; name one of them.")
            target = target[part]
            continue
        if not dataclasses.is_dataclass(target):
            raise SweepError(f"{'.'.join(parts[:depth])} has no fields.")
        infos = {f.name: f for f in fields_of(type(target))}
        if part not in infos or part == "path":
            hint = difflib.get_close_matches(part, [n for n in infos if n != "path"], n=1)
            known = ", ".join(n for n in infos if n != "path")
            raise SweepError(f"{what} has no field {'.'.join(parts[:depth + 1])!r}" + (
                f"; did you mean {'.'.join([*parts[:depth], hint[0]])!r}?" if hint else f" (fields: {known})."))
        info = infos[part]
        if last:
            if dataclasses.is_dataclass(info.type) or isinstance(getattr(target, part), dict):
                raise SweepError(f"{path} is a group of fields; name one of them.")
            converted = _convert(value, info.type, base, path)
            setattr(target, part, _python_value(converted, info.type))
            return converted
        target = getattr(target, part)
    raise SweepError(f"{path} names nothing.")


def apply_parameters(project: Project, sensors: list[SensorConfig],
                     params: dict[str, Any]) -> dict[str, Any]:
    """A run's parameters applied to `project` and `sensors` (in place; values as Sweep checked them);
    returns the user code variables to set (by name)."""
    code_fields = {f.name for f in fields_of(type(project.code))}
    variables: dict[str, Any] = {}
    for key, value in params.items():
        head, _, rest = key.partition(".")
        if key == "start":
            body = project.body
            body.start_mode = "relative"
            body.start_north = value.get("north", body.start_north)
            body.start_east = value.get("east", body.start_east)
            body.start_altitude = value.get("altitude", body.start_altitude)
            if "yaw_deg" in value:
                body.rotation = yaw_quaternion(value["yaw_deg"])
        elif head == "sensors":
            name, _, path = rest.partition(".")
            sensor = next(s for s in sensors if s.name == name)
            assign(sensor, path, value, None)
        elif head == "code" and rest not in code_fields and "." not in rest:
            variables[rest] = value
        else:
            assign(project, key, value, None)
    return variables

