"""What every sensor definition shares (the sensors XML file is read and written by sear.sensors.files).

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
from typing import ClassVar

from sear.fields import param
from sear.xsd import SENSORS_ROOT_TAG


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


MAX_LATENCY_S = 10.0
"""Longest latency a sensor may have, s: every reading sampled in that time waits in memory until it is
delivered (a 3-D LIDAR's scans are megabytes each); real parts deliver within a fraction of a second."""


@dataclass
class SensorConfig:
    """Fields every sensor has. Subclasses set `TYPE`, the XML element name of the sensor."""

    TYPE: ClassVar[str] = ""

    name: str = param("", kind="nonEmptyString", attribute=True, required=True)
    """Unique name, used by `sim.read(name)` and as the log column prefix."""
    model_number: str = param("")
    """Datasheet part number (e.g. 'GP2D12'); informational."""
    pose: Pose = field(default_factory=Pose)
    """Where the sensor sits on the body (on `link` when given)."""
    link: str | None = param(None, label="Link")
    """URDF robots: the link the sensor is mounted on, its pose then being in that link's frame; left
    out: the base (root) link. The link must be fixed to the base (no moving joint between them)."""
    noise: bool = param(False)
    """Simulate the part's noise (Gaussian noise, bias, drift), each sensor from its own stream of the
    run's seed (sear.sensors.suite.sensor_rng): adding or removing a sensor leaves the others' noise as it was."""
    latency_s: float = param(0.0, minimum=0.0, maximum=MAX_LATENCY_S, label="Latency", unit="s")
    """How long after its sample a reading is delivered (to `sim.read`, the window and the log), s; 0 = at
    once. The log's `<name>.stamp` column gives the time each reading was sampled."""

    def problems(self) -> list[tuple[str, str]]:
        """Checks that span several fields (the schema checks each field alone): (field, sentence) pairs."""
        return []


ROOT_TAG = SENSORS_ROOT_TAG


COMMON_FIELDS = ("name", "model_number", "pose", "link", "noise")
"""The fields of SensorConfig, which every type has (the wizard shows them apart)."""


def consistency_problems(sensor: SensorConfig) -> list[tuple[str, str]]:
    """Checks that span several fields (the schema checks each field alone): (field, sentence) pairs."""
    return sensor.problems()
