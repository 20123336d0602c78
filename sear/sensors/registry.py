"""The sensor types: one list of the built-in ones, in Sensor Wizard tab order, and `register`.

A type is its model class (a `sear.sensors.base.Sensor` subclass), which names its definition
(DEFINITION), its XML element (TYPE) and its wizard tab (TITLE). Loading sensors files, the schema, the
wizard's tabs, the window's readout and the log all ask this registry, so a type registered at run time
(by a plug-in or a test) is handled everywhere:

    from sear.sensors import registry
    registry.register(ThermometerSensor)
    ...
    registry.unregister("thermometer")
"""

from __future__ import annotations

from sear import xmlio
from sear.sensors.base import Sensor
from sear.sensors.compass import CompassSensor
from sear.sensors.config import SensorConfig
from sear.sensors.depth_camera import DepthCameraSensor
from sear.sensors.gps import GpsSensor
from sear.sensors.imu import AccelerometerSensor, GyroscopeSensor
from sear.sensors.lidar import LidarSensor
from sear.sensors.odometer import OdometerSensor
from sear.sensors.range import InfraredSensor, UltrasonicSensor
from sear.sensors.rgb_camera import RgbCameraSensor
from sear.xsd import sensors_xsd

BUILT_IN: tuple[type[Sensor], ...] = (
    InfraredSensor, UltrasonicSensor, GpsSensor, LidarSensor,
    AccelerometerSensor, GyroscopeSensor, CompassSensor, OdometerSensor, DepthCameraSensor,
    RgbCameraSensor,
)
"""The types SEAR ships, in Sensor Wizard tab order."""

_types: dict[str, type[Sensor]] = {cls.TYPE: cls for cls in BUILT_IN}
_generation = 0


def register(model: type[Sensor]) -> None:
    """Add a sensor type (its tab comes after the existing ones). Its TYPE must be a new XML element
    name, its DEFINITION a SensorConfig dataclass whose TYPE is the same name."""
    if not model.TYPE or model.DEFINITION.TYPE != model.TYPE:
        raise ValueError(f"{model.__name__}: TYPE ({model.TYPE!r}) and DEFINITION.TYPE "
                         f"({model.DEFINITION.TYPE!r}) must be the same non-empty name")
    if not issubclass(model.DEFINITION, SensorConfig):
        raise ValueError(f"{model.__name__}.DEFINITION must be a SensorConfig dataclass")
    if model.TYPE in _types and _types[model.TYPE] is not model:
        raise ValueError(f"a sensor type named {model.TYPE!r} is registered already")
    global _generation
    _types[model.TYPE] = model
    _generation += 1


def unregister(type_name: str) -> None:
    """Remove a type added with `register` (the built-in ones stay)."""
    global _generation
    if type_name in _types and _types[type_name] not in BUILT_IN:
        del _types[type_name]
        _generation += 1


def generation() -> int:
    """A number that changes whenever the registry does (for caches of what is made from it)."""
    return _generation


def models() -> dict[str, type[Sensor]]:
    """XML element name -> model class, in tab order."""
    return dict(_types)


def model(type_name: str) -> type[Sensor] | None:
    return _types.get(type_name)


def definitions() -> dict[str, type[SensorConfig]]:
    """XML element name -> definition class, in tab order."""
    return {name: cls.DEFINITION for name, cls in _types.items()}


def builtin_definitions() -> dict[str, type[SensorConfig]]:
    """The built-in types' definitions (what the shipped sensors.xsd describes)."""
    return {cls.TYPE: cls.DEFINITION for cls in BUILT_IN}


def _schema() -> str:
    """The sensors file's schema with every registered type (what loading checks a file against)."""
    return sensors_xsd(definitions(), standalone=True)


xmlio.provide_schema("sensors.xsd", _schema, generation)
