"""What every sensor definition shares, and the sensors XML file (reading, checking, writing).

A definition is a dataclass of the fields the user fills in on a Sensor Wizard tab, as stored in the
sensors XML file. Each sensor type declares its own definition in its module (e.g. `InfraredConfig` in
sear/sensors/range.py), next to its model; sear.sensors.registry lists the types. Fields keep the units
a datasheet gives (the unit is in the field name: `_cm`, `_mv_per_g`, `_pct`, `_dps`, ...), exactly as the
user typed them; the sensor models convert to SI. Units, bounds, labels and help are declared once with
`sear.fields.param`. Every sensor has a unique `name`, an optional datasheet `model_number`, and a
mounting `pose` on the robot body (body frame x forward, y left, z up; metres and degrees).

Noise is off unless `noise` is true, so exact tests are possible; resolution quantisation and range
clipping always apply, because the datasheet says the part does them. Format: docs/sensors-format.md,
schema sear/schemas/sensors.xsd (generated from the declarations).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from sear import xmlio
from sear.fields import FORMAT_VERSION, param
from sear.schemas.xsd import SENSORS_ROOT_TAG, sensors_xsd


@dataclass
class Pose:
    """Mounting pose of a sensor on the robot body, relative to the body model's centre.

    x, y, z in metres (body frame: x forward, y left, z up); roll, pitch, yaw in degrees, applied as
    intrinsic z-y'-x'' (yaw, then pitch, then roll). A range sensor looks along its own +x axis.
    """

    x: float = param(0.0, unit="m")
    y: float = param(0.0, unit="m")
    z: float = param(0.0, unit="m")
    roll: float = param(0.0, unit="°")
    pitch: float = param(0.0, unit="°")
    yaw: float = param(0.0, unit="°")


@dataclass
class SensorConfig:
    """Fields every sensor has. Subclasses set `TYPE`, the XML element name of the sensor."""

    TYPE: ClassVar[str] = ""

    name: str = param("", kind="nonEmptyString", attribute=True, required=True)
    """Unique name, used by `sim.read(name)` and as the log column prefix."""
    model_number: str = param("")
    """Datasheet part number (e.g. 'GP2D12'); informational."""
    pose: Pose = field(default_factory=Pose)
    """Where the sensor sits on the body."""
    noise: bool = param(False)
    """Simulate the part's noise (Gaussian noise, bias, drift) from the run's seeded generator."""

    def problems(self) -> list[tuple[str, str]]:
        """Checks that span several fields (the schema checks each field alone): (field, sentence) pairs."""
        return []


ROOT_TAG = SENSORS_ROOT_TAG


def _schema() -> str:
    """The sensors schema with every registered type."""
    from sear.sensors.registry import definitions

    return sensors_xsd(definitions(), standalone=True)


def _registry_generation() -> int:
    from sear.sensors.registry import generation

    return generation()


xmlio.provide_schema("sensors.xsd", _schema, _registry_generation)
COMMON_FIELDS = ("name", "model_number", "pose", "noise")
"""The fields of SensorConfig, which every type has (the wizard shows them apart)."""


def __getattr__(name: str) -> Any:
    """The definitions of the built-in types and SENSOR_TYPES, from the modules that declare them (kept
    importable from here for the code and scripts written before each type became one module)."""
    if name.startswith("_"):  # the import system probes dunders (e.g. __path__) while this module loads
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from sear.sensors import registry

    if name == "SENSOR_TYPES":
        return registry.definitions()
    for cls in registry.definitions().values():
        if cls.__name__ == name:
            return cls
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def consistency_problems(sensor: SensorConfig) -> list[tuple[str, str]]:
    """Checks that span several fields (the schema checks each field alone): (field, sentence) pairs."""
    return sensor.problems()


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
    from sear.errors import ProjectError
    from sear.sensors.registry import definitions

    path = Path(path)
    tree = xmlio.parse_file(path, root_tag=ROOT_TAG, schema_name="sensors.xsd", what="sensors file")
    types = definitions()
    sensors: list[SensorConfig] = []
    first_line: dict[str, int] = {}
    for el in tree.getroot():
        if not isinstance(el.tag, str):
            continue
        cls = types[el.tag]
        sensor = xmlio.element_to_dataclass(cls, el, None, attributes=("name",))
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
    """Write sensor definitions atomically (previous file kept as NAME.bak).

    Refuses, without touching the disk, duplicate or empty names and values the loader would reject.
    """
    from sear.errors import ProjectError

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
    xmlio.check_against_schema(root, "sensors.xsd", ROOT_TAG, path, "sensors file")
    return xmlio.atomic_write(path, data)
