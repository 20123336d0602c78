"""Sensor definitions: one dataclass per Sensor Wizard tab, as stored in the sensors XML file.

Fields keep the units a datasheet gives (the unit is in the field name: `_cm`, `_mv_per_g`, `_pct`,
`_dps`, ...), exactly as the user typed them; the sensor models in `sear.sensors` convert to SI.
Every sensor has a unique `name`, an optional datasheet `model_number`, and a mounting `pose` on the
robot body (body frame x forward, y left, z up; metres and degrees).

Noise is off unless `noise` is true, so exact tests are possible; resolution quantisation and range
clipping always apply, because the datasheet says the part does them. Format: docs/sensors-format.md,
schema sear/schemas/sensors.xsd.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar, Literal


@dataclass
class Pose:
    """Mounting pose of a sensor on the robot body, relative to the body model's centre.

    x, y, z in metres (body frame: x forward, y left, z up); roll, pitch, yaw in degrees, applied as
    intrinsic z-y'-x'' (yaw, then pitch, then roll). A range sensor looks along its own +x axis.
    """

    x: float = 0.0
    y: float = 0.0
    z: float = 0.0
    roll: float = 0.0
    pitch: float = 0.0
    yaw: float = 0.0


@dataclass
class SensorConfig:
    """Fields every sensor has. Subclasses set `TYPE`, the XML element name of the sensor."""

    TYPE: ClassVar[str] = ""

    name: str = ""
    """Unique name, used by `sim.read(name)` and as the log column prefix."""
    model_number: str = ""
    """Datasheet part number (e.g. 'GP2D12'); informational."""
    pose: Pose = field(default_factory=Pose)
    """Where the sensor sits on the body."""
    noise: bool = False
    """Simulate the part's noise (Gaussian noise, bias, drift) from the run's seeded generator."""


@dataclass
class InfraredConfig(SensorConfig):
    """Infrared range sensor (e.g. Sharp GP2D12 analog, GP2D15 digital): a cone of rays.

    Analog output reports the closest hit in metres; digital output reports True when something is
    within `switching_distance_cm`, and uses only the beam width and switching distance.
    """

    TYPE: ClassVar[str] = "infrared"

    output: Literal["analog", "digital"] = "analog"
    beam_width_cm: float = 6.0
    """Beam diameter at its widest point, cm (> 0)."""
    min_range_cm: float = 10.0
    """Minimum sensing distance, cm: nearer hits are not reported (analog)."""
    max_range_cm: float = 80.0
    """Maximum sensing distance, cm: the length of every ray (analog)."""
    resolution_cm: float = 1.0
    """Ray spacing around each cone and cone-to-cone diameter step, cm (> 0)."""
    switching_distance_cm: float = 24.0
    """Digital output: reports True when an object is nearer than this, cm."""
    update_rate_hz: float = 26.0
    """Samples per second (GP2D12: one every 38 ms)."""
    noise_stddev_cm: float = 0.0
    """1-sigma Gaussian distance noise when `noise` is on, cm."""


@dataclass
class UltrasonicConfig(SensorConfig):
    """Ultrasonic range sensor (e.g. MaxBotix LV-EZ1): a cone of rays that ignores oblique surfaces."""

    TYPE: ClassVar[str] = "ultrasonic"

    beam_width_cm: float = 60.0
    """Beam diameter at its widest point, cm (> 0)."""
    min_range_cm: float = 15.24
    """Minimum sensing distance, cm."""
    max_range_cm: float = 645.0
    """Maximum sensing distance, cm: the length of every ray."""
    resolution_cm: float = 2.54
    """Ray spacing and cone step, cm (> 0); also the reading's quantisation (LV-EZ1: 1 inch)."""
    update_rate_hz: float = 20.0
    """Samples per second."""
    max_incidence_deg: float = 22.5
    """Hits whose surface normal is more than this from the ray are not echoed back, degrees."""
    noise_stddev_cm: float = 0.0
    """1-sigma Gaussian distance noise when `noise` is on, cm."""


@dataclass
class GpsConfig(SensorConfig):
    """GPS receiver: position of its antenna as latitude, longitude, altitude."""

    TYPE: ClassVar[str] = "gps"

    string_type: Literal["decimal", "dms", "nmea"] = "decimal"
    """Output format: decimal degrees, degree/minute/second text, or NMEA 0183 GGA + RMC sentences."""
    update_rate_hz: float = 1.0
    """Fixes per second (NEO-6M: up to 5)."""
    accuracy_m: float = 2.5
    """Horizontal accuracy when `noise` is on: RMS horizontal error, metres (each of east and north
    gets 1-sigma accuracy/sqrt(2); vertical 1.5 times the accuracy)."""
    bandwidth_hz: float = 0.01
    """Bandwidth of the position error: the error is a first-order Gauss-Markov process with
    correlation time 1 / (2·pi·bandwidth), so it wanders slowly like a real receiver's, Hz."""


@dataclass
class LidarConfig(SensorConfig):
    """Scanning laser range finder (e.g. SICK LMS200, Hokuyo URG-04LX).

    A planar scan from 0 to `spread_deg` in steps of `angle_step_deg` (180 at 0.5 gives 360
    readings: 0, 0.5 ... 179.5), centred on the sensor's forward axis, counter-clockwise.
    """

    TYPE: ClassVar[str] = "lidar"

    angle_step_deg: float = 0.5
    """Angle between readings, degrees (> 0)."""
    max_range_m: float = 8.0
    """Maximum sensing distance, metres."""
    min_range_m: float = 0.0
    """Nearer hits are not reported, metres."""
    resolution_mm: float = 10.0
    """Range resolution (quantisation step), mm."""
    spread_deg: float = 180.0
    """Scan angle, degrees (0 < spread <= 360)."""
    update_rate_hz: float = 10.0
    """Scans per second."""
    layers_deg: tuple[float, ...] = (0.0,)
    """Vertical angles of the scan layers, degrees above the sensor plane; one layer = planar."""
    sick_format: bool = False
    """Also provide each scan packed as SICK LMS2xx 16-bit distance values."""
    noise_stddev_mm: float = 0.0
    """1-sigma Gaussian range noise when `noise` is on, mm."""


@dataclass
class AccelerometerConfig(SensorConfig):
    """MEMS accelerometer (e.g. ADXL335, MPU-6050): body-frame specific force, +1 g up at rest."""

    TYPE: ClassVar[str] = "accelerometer"

    axes: str = "xyz"
    """Which of the sensor's axes it measures (a subset of 'xyz'); others read 0."""
    resolution_mv_per_g: float = 300.0
    """Sensitivity of the analog output, mV/g (ADXL335: 300). With `adc_step_mv` it sets the step."""
    adc_step_mv: float = 0.0
    """Step of the ADC reading the output, mV (3.3 V / 1024 = 3.22); 0 = no quantisation."""
    accuracy_pct: float = 0.0
    """Sensitivity (scale factor) error, percent; drawn once per run when `noise` is on."""
    bandwidth_hz: float = 50.0
    """Output bandwidth, Hz; a sample is taken every 1/bandwidth seconds."""
    max_range_g: float = 3.0
    """Full-scale range, g: readings are clipped to +-this."""
    noise_stddev_mps2: float = 0.0
    """1-sigma white noise per sample, m/s²."""
    bias_stddev_mps2: float = 0.0
    """1-sigma of the constant bias drawn once per run, m/s²."""
    bias_walk_mps2: float = 0.0
    """Bias random walk, m/s² per sqrt(second)."""


@dataclass
class GyroscopeConfig(SensorConfig):
    """MEMS gyroscope (e.g. MPU-6050): body-frame angular rate."""

    TYPE: ClassVar[str] = "gyroscope"

    axes: str = "xyz"
    resolution_dps: float = 0.0
    """Smallest step of the reading, deg/s (MPU-6050 at +-250: 1/131); 0 = no quantisation."""
    accuracy_pct: float = 0.0
    """Sensitivity (scale factor) error, percent; drawn once per run when `noise` is on."""
    bandwidth_hz: float = 50.0
    """Output bandwidth, Hz; a sample is taken every 1/bandwidth seconds."""
    max_range_dps: float = 250.0
    """Full-scale range, deg/s: readings are clipped to +-this."""
    output_unit: Literal["deg/s", "rad/s"] = "rad/s"
    noise_stddev_dps: float = 0.0
    """1-sigma white noise per sample, deg/s."""
    bias_stddev_dps: float = 0.0
    """1-sigma of the constant bias drawn once per run, deg/s."""
    bias_walk_dps: float = 0.0
    """Drift: bias random walk, deg/s per sqrt(second)."""


@dataclass
class CompassConfig(SensorConfig):
    """Compass (e.g. HMC5883L): heading of the body's forward axis, clockwise from north."""

    TYPE: ClassVar[str] = "compass"

    axes: str = "xyz"
    accuracy_deg: float = 2.0
    """1-sigma heading error when `noise` is on, degrees."""
    bandwidth_hz: float = 15.0
    """Output rate, Hz."""
    resolution_deg: float = 0.0
    """Smallest step of the reading, degrees; 0 = no quantisation."""
    output_unit: Literal["deg", "rad"] = "deg"
    north_point: tuple[float, float] = (0.0, 100_000.0)
    """World point (x east, y north, metres) the compass treats as north (the thesis: 100 km north)."""


@dataclass
class OdometerConfig(SensorConfig):
    """Wheel encoder odometer: distance travelled from wheel rotation, so slip shows as error."""

    TYPE: ClassVar[str] = "odometer"

    ticks_per_rev: int = 360
    """Encoder ticks per wheel revolution (> 0)."""
    wheel_radius_m: float = 0.0
    """Wheel radius the odometer assumes, metres; 0 = the simulated wheel's true radius."""
    wheels: tuple[str, ...] = ("left_rear", "right_rear")
    """Wheels whose rotation is averaged (ids from sear.project.WHEEL_IDS)."""
    update_rate_hz: float = 50.0


SENSOR_TYPES: dict[str, type[SensorConfig]] = {
    cls.TYPE: cls
    for cls in (
        InfraredConfig, UltrasonicConfig, GpsConfig, LidarConfig,
        AccelerometerConfig, GyroscopeConfig, CompassConfig, OdometerConfig,
    )
}
"""XML element name -> definition class, in Sensor Wizard tab order."""


ROOT_TAG = "sear-sensors"
FORMAT_VERSION = 1


def consistency_problems(sensor: SensorConfig) -> list[tuple[str, str]]:
    """Checks that span several fields (the schema checks each field alone): (field, sentence) pairs."""
    problems: list[tuple[str, str]] = []
    if isinstance(sensor, InfraredConfig | UltrasonicConfig) and sensor.min_range_cm >= sensor.max_range_cm:
        problems.append(("min_range_cm", f"the minimum range ({sensor.min_range_cm} cm) must be less than "
                                         f"the maximum range ({sensor.max_range_cm} cm)."))
    if isinstance(sensor, LidarConfig):
        if sensor.min_range_m >= sensor.max_range_m:
            problems.append(("min_range_m", f"the minimum range ({sensor.min_range_m} m) must be less than "
                                            f"the maximum range ({sensor.max_range_m} m)."))
        if sensor.angle_step_deg > sensor.spread_deg:
            problems.append(("angle_step_deg", f"the angle between readings ({sensor.angle_step_deg}°) is larger "
                                               f"than the spread angle ({sensor.spread_deg}°)."))
        if sensor.spread_deg / sensor.angle_step_deg * len(sensor.layers_deg) > 16_383:
            problems.append(("angle_step_deg", "the scan needs more than 16,383 rays; use a larger angle "
                                               "between readings or fewer layers."))
    if isinstance(sensor, OdometerConfig):
        from sear.project import WHEEL_IDS

        unknown = [w for w in sensor.wheels if w not in WHEEL_IDS]
        if unknown:
            problems.append(("wheels", f"unknown wheel(s) {', '.join(unknown)}; use {', '.join(WHEEL_IDS)}."))
    return problems


def sensors_to_xml(sensors: list[SensorConfig]) -> bytes:
    from sear import xmlio

    root = xmlio.etree.Element(ROOT_TAG, version=str(FORMAT_VERSION))
    for sensor in sensors:
        root.append(xmlio.dataclass_to_element(sensor, sensor.TYPE, None, attributes=("name",),
                                               prefix=f"{sensor.TYPE}."))
    return xmlio.serialise(root)


def load_sensors(path: str | Path) -> list[SensorConfig]:
    """Read a sensors XML file into definitions, in file order.

    Raises ProjectError naming the file, line and field for invalid XML, unknown elements, bad values,
    inconsistent fields (e.g. min range above max range) and duplicate names (naming both entries).
    """
    from sear import xmlio
    from sear.errors import ProjectError

    path = Path(path)
    tree = xmlio.parse_file(path, root_tag=ROOT_TAG, schema_name="sensors.xsd", what="sensors file")
    sensors: list[SensorConfig] = []
    first_line: dict[str, int] = {}
    for el in tree.getroot():
        if not isinstance(el.tag, str):
            continue
        cls = SENSOR_TYPES[el.tag]
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
    from sear import xmlio
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
