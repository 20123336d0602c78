"""The sensors XML file: reading it into definitions, checking them, writing them.

Every registered sensor type (sear.sensors.registry) is accepted: the file is checked against the schema
the registry provides, generated from the types' declarations. Errors name the file, line and field.
"""

from __future__ import annotations

from pathlib import Path

from sear import saving, xmlio
from sear.errors import ProjectError
from sear.fields import FORMAT_VERSION
from sear.sensors.config import ROOT_TAG, SensorConfig, consistency_problems
from sear.sensors.registry import definitions


def sensors_to_xml(sensors: list[SensorConfig]) -> bytes:
    root = xmlio.etree.Element(ROOT_TAG, version=str(FORMAT_VERSION))
    for sensor in sensors:
        root.append(xmlio.dataclass_to_element(sensor, sensor.TYPE, None, attributes=("name",),
                                               prefix=f"{sensor.TYPE}."))
    return xmlio.serialise(root)


def load_sensors(path: str | Path) -> list[SensorConfig]:
    """Read a sensors XML file into definitions, in file order.

    Raises ProjectError naming the file, line and field for invalid XML, unknown elements, bad values,
    inconsistent fields (e.g. min range above max range) and duplicate names (naming both entries).
    Any registered sensor type is accepted (the schema is generated from the registry).
    """
    path = Path(path)
    tree = xmlio.parse_file(path, root_tag=ROOT_TAG, schema_name="sensors.xsd", what="sensors file")
    types = definitions()
    sensors: list[SensorConfig] = []
    first_line: dict[str, int] = {}
    for el in tree.getroot():
        if not isinstance(el.tag, str):
            continue
        cls = types[el.tag]
        try:
            sensor = xmlio.element_to_dataclass(cls, el, None, attributes=("name",))
        except ProjectError as exc:
            raise ProjectError(exc.message, file=path, line=exc.line, field=exc.field) from None
        sensor.name = sensor.name.strip()
        if sensor.name in first_line:
            raise ProjectError(
                f"two sensors are named {sensor.name!r} (lines {first_line[sensor.name]} and {el.sourceline}); "
                "sensor names must be unique: rename one.",
                file=path, line=el.sourceline, field=f"{el.tag}@name",
            )
        first_line[sensor.name] = el.sourceline
        for field_name, sentence in consistency_problems(sensor):
            child = el.find(field_name)
            line = child.sourceline if child is not None else el.sourceline
            raise ProjectError(f"sensor {sensor.name!r}: {sentence}", file=path, line=line,
                               field=f"{el.tag}.{field_name}")
        sensors.append(sensor)
    return sensors


def save_sensors(path: str | Path, sensors: list[SensorConfig]) -> Path:
    """Write sensor definitions atomically (previous file kept as NAME.bak), through a link to its target,
    keeping the file's permissions and, when it exists, its comments and layout (sear.saving.write_document).

    Refuses, without touching the disk, duplicate or empty names and values the loader would reject.
    """
    path = Path(path)
    seen: set[str] = set()
    for sensor in sensors:
        if not sensor.name.strip():
            raise ProjectError(f"not saved: a {sensor.TYPE} sensor has no name.", file=path, field="name")
        if sensor.name != sensor.name.strip():
            # The loader strips names, so this one would come back different from what was saved.
            raise ProjectError(f"not saved: the sensor name {sensor.name!r} starts or ends with spaces; "
                               "remove them.", file=path, field=f"{sensor.TYPE}@name")
        if sensor.name in seen:
            raise ProjectError(f"not saved: two sensors are named {sensor.name!r}; names must be unique.",
                               file=path, field="name")
        seen.add(sensor.name)
        for field_name, sentence in consistency_problems(sensor):
            raise ProjectError(f"not saved: sensor {sensor.name!r}: {sentence}", file=path,
                               field=f"{sensor.TYPE}.{field_name}")
    try:
        data = sensors_to_xml(sensors)
    except ProjectError as exc:
        raise ProjectError(f"not saved: {exc.message}", file=path, field=exc.field) from None
    root = xmlio.etree.fromstring(data)
    saving.check_against_schema(root, "sensors.xsd", ROOT_TAG, path, "sensors file")
    # A hand-written file keeps its comments and layout: its tree is updated in place.
    return saving.write_document(path, root, template=path if path.is_file() else None,
                                reads_back=lambda merged: _reads_back(merged, sensors))


def _reads_back(root: object, sensors: list[SensorConfig]) -> bool:
    """Whether the element `root` (a merged sensors document) holds exactly `sensors`."""
    types = definitions()
    try:
        read = [xmlio.element_to_dataclass(types[el.tag], el, None, attributes=("name",))
                for el in root if isinstance(el.tag, str)]  # type: ignore[attr-defined]
    except (ValueError, TypeError, KeyError):
        return False
    return read == sensors
