"""Accelerometer and gyroscope, as MEMS parts report them, in the sensor's own axes.

Accelerometer: specific force (what the proof mass feels) = acceleration minus gravity, so a part at
rest reads +9.81 m/s² on its up axis and 0 in free fall. The acceleration is the velocity difference of
the mounting point over the sample period (the thesis's method), so it needs no extra physics query.
Gyroscope: the mean angular rate over the sample period, from the change of orientation (exact for
any rotation within a period), in rad/s or deg/s.
Both: scale error (accuracy %), bias, bias random walk, white noise, and the datasheet's noise density
(angle / velocity random walk) and bias instability (flicker noise) when noise is on (ImuNoise); clipped
at the full-scale range; quantised at the part's resolution.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, NamedTuple

import numpy as np

from sear.fields import param
from sear.gravity import GRAVITY, STANDARD_GRAVITY
from sear.sensors.base import ImuNoise, RayHits, Sensor
from sear.sensors.config import SensorConfig
from sear.state import VehicleState, body_rotation

NOISE = "noise"


@dataclass
class AccelerometerConfig(SensorConfig):
    """MEMS accelerometer (e.g. ADXL335, MPU-6050): body-frame specific force, +1 g up at rest."""

    TYPE: ClassVar[str] = "accelerometer"

    axes: str = param("xyz", kind="axes", widget="axes")
    """Which of the sensor's axes it measures (a subset of 'xyz'); others read 0."""
    resolution_mv_per_g: float = param(300.0, kind="positive", label="Sensitivity")
    """Sensitivity of the analog output, mV/g (ADXL335: 300). With `adc_step_mv` it sets the step."""
    adc_step_mv: float = param(0.0, kind="nonNegative", label="ADC step")
    """Step of the ADC reading the output, mV (3.3 V / 1024 = 3.22); 0 = no quantisation."""
    accuracy_pct: float = param(0.0, kind="percent", label="Accuracy (scale error)", group=NOISE)
    """Sensitivity (scale factor) error, percent; drawn once per run when `noise` is on."""
    bandwidth_hz: float = param(50.0, kind="positive")
    """Output bandwidth, Hz; a sample is taken every 1/bandwidth seconds."""
    max_range_g: float = param(3.0, kind="positive")
    """Full-scale range, g: readings are clipped to +-this."""
    noise_stddev_mps2: float = param(0.0, kind="nonNegative", group=NOISE)
    """1-sigma white noise per sample, m/s²."""
    bias_stddev_mps2: float = param(0.0, kind="nonNegative", group=NOISE)
    """1-sigma of the constant bias drawn once per run, m/s²."""
    bias_walk_mps2: float = param(0.0, kind="nonNegative", label="Bias random walk (per √s)", group=NOISE)
    """Bias random walk, m/s² per sqrt(second)."""
    noise_density_ug_rthz: float = param(0.0, kind="nonNegative", unit="µg/√Hz", label="Noise density (VRW)",
                                         group=NOISE)
    """The datasheet's noise (power spectral) density: velocity random walk, µg/√Hz. White noise whose
    Allan deviation is this/sqrt(tau); a sample (one per 1/bandwidth s) gets 1-sigma density·sqrt(bandwidth)."""
    bias_instability_ug: float = param(0.0, kind="nonNegative", unit="µg", label="Bias instability", group=NOISE)
    """The datasheet's bias instability (in-run bias stability): the floor of the Allan deviation, µg.
    Flicker noise (sear.sensors.base.ImuNoise)."""


@dataclass
class GyroscopeConfig(SensorConfig):
    """MEMS gyroscope (e.g. MPU-6050): body-frame angular rate."""

    TYPE: ClassVar[str] = "gyroscope"

    axes: str = param("xyz", kind="axes", widget="axes")
    resolution_dps: float = param(0.0, kind="nonNegative")
    """Smallest step of the reading, deg/s (MPU-6050 at +-250: 1/131); 0 = no quantisation."""
    accuracy_pct: float = param(0.0, kind="percent", label="Accuracy (scale error)", group=NOISE)
    """Sensitivity (scale factor) error, percent; drawn once per run when `noise` is on."""
    bandwidth_hz: float = param(50.0, kind="positive")
    """Output bandwidth, Hz; a sample is taken every 1/bandwidth seconds."""
    max_range_dps: float = param(250.0, kind="positive")
    """Full-scale range, deg/s: readings are clipped to +-this."""
    output_unit: Literal["deg/s", "rad/s"] = param("rad/s", type_name="gyroUnit")
    noise_stddev_dps: float = param(0.0, kind="nonNegative", group=NOISE)
    """1-sigma white noise per sample, deg/s."""
    bias_stddev_dps: float = param(0.0, kind="nonNegative", group=NOISE)
    """1-sigma of the constant bias drawn once per run, deg/s."""
    bias_walk_dps: float = param(0.0, kind="nonNegative", label="Drift (bias walk per √s)", group=NOISE)
    """Drift: bias random walk, deg/s per sqrt(second)."""
    noise_density_dps_rthz: float = param(0.0, kind="nonNegative", unit="°/s/√Hz", label="Noise density (ARW)",
                                          decimals=4, group=NOISE)
    """The datasheet's rate noise (spectral) density: angle random walk, deg/s/√Hz (60 times it is the ARW
    in °/√h). White noise whose Allan deviation is this/sqrt(tau); a sample gets 1-sigma density·sqrt(bandwidth)."""
    bias_instability_dph: float = param(0.0, kind="nonNegative", unit="°/h", label="Bias instability", group=NOISE)
    """The datasheet's bias instability (in-run bias stability): the floor of the Allan deviation, deg/h.
    Flicker noise (sear.sensors.base.ImuNoise)."""

Matrix = tuple[float, float, float, float, float, float, float, float, float]
"""A 3 x 3 matrix as nine floats, row by row. The IMU models sample at up to a few hundred hertz on
3-vectors, where numpy's per-call overhead costs far more than the arithmetic: they use floats."""


def _floats(m: np.ndarray) -> Matrix:
    return tuple(m.ravel().tolist())


def _mul(a: Matrix, b: Matrix) -> Matrix:
    """a @ b."""
    a0, a1, a2, a3, a4, a5, a6, a7, a8 = a
    b0, b1, b2, b3, b4, b5, b6, b7, b8 = b
    return (a0 * b0 + a1 * b3 + a2 * b6, a0 * b1 + a1 * b4 + a2 * b7, a0 * b2 + a1 * b5 + a2 * b8,
            a3 * b0 + a4 * b3 + a5 * b6, a3 * b1 + a4 * b4 + a5 * b7, a3 * b2 + a4 * b5 + a5 * b8,
            a6 * b0 + a7 * b3 + a8 * b6, a6 * b1 + a7 * b4 + a8 * b7, a6 * b2 + a7 * b5 + a8 * b8)


def _mul_t(a: Matrix, b: Matrix) -> Matrix:
    """a.T @ b."""
    a0, a1, a2, a3, a4, a5, a6, a7, a8 = a
    return _mul((a0, a3, a6, a1, a4, a7, a2, a5, a8), b)


def _apply(m: Matrix, x: float, y: float, z: float) -> tuple[float, float, float]:
    """m @ (x, y, z)."""
    return m[0] * x + m[1] * y + m[2] * z, m[3] * x + m[4] * y + m[5] * z, m[6] * x + m[7] * y + m[8] * z


def _apply_t(m: Matrix, x: float, y: float, z: float) -> tuple[float, float, float]:
    """m.T @ (x, y, z)."""
    return m[0] * x + m[3] * y + m[6] * z, m[1] * x + m[4] * y + m[7] * z, m[2] * x + m[5] * y + m[8] * z


def _finish(values: tuple[float, float, float], limit: float, step: float,
            mask: tuple[bool, bool, bool]) -> tuple[float, float, float]:
    """Clip at +-limit, quantise to the nearest multiple of step (none when 0), zero the axes the part
    does not measure."""
    out = []
    for value, measured in zip(values, mask, strict=True):
        value = min(limit, max(-limit, value))
        if step > 0:
            value = round(value / step) * step
        out.append(value if measured else 0.0)
    return out[0], out[1], out[2]


class Vector3(NamedTuple):
    """Three sensor-axis values (x forward, y left, z up when mounted unrotated)."""

    x: float
    y: float
    z: float


def _vector_text(reading: Any, unit: str) -> str | None:
    """'+0.000 +0.000 +9.810 m/s²' for a three-axis reading; None for anything else."""
    if not isinstance(reading, tuple) or len(reading) != 3:
        return None
    try:
        x, y, z = (float(v) for v in reading)
    except (TypeError, ValueError):
        return None
    return f"{x:+7.3f} {y:+7.3f} {z:+7.3f} {unit}"


class AccelerometerSensor(Sensor):
    TYPE = "accelerometer"
    TITLE = "Accelerometer"
    DEFINITION = AccelerometerConfig
    FIELDS = ("x", "y", "z")
    config: AccelerometerConfig

    def hud_text(self, reading: Any) -> str:
        return _vector_text(reading, "m/s²") or super().hud_text(reading)

    def __init__(self, config: AccelerometerConfig, rng: np.random.Generator, context) -> None:
        super().__init__(config, rng, context)
        self.noise = ImuNoise(rng, config.noise, white=config.noise_stddev_mps2, bias=config.bias_stddev_mps2,
                              walk=config.bias_walk_mps2, scale_pct=config.accuracy_pct,
                              density=config.noise_density_ug_rthz * 1e-6 * STANDARD_GRAVITY,
                              instability=config.bias_instability_ug * 1e-6 * STANDARD_GRAVITY,
                              rate_hz=config.bandwidth_hz)
        self.mask = ("x" in config.axes, "y" in config.axes, "z" in config.axes)
        self.prev_velocity: tuple[float, float, float] | None = None
        self.limit = config.max_range_g * STANDARD_GRAVITY
        step_g = config.adc_step_mv / config.resolution_mv_per_g if config.adc_step_mv > 0 else 0.0
        self.step = step_g * STANDARD_GRAVITY
        self._mount = _floats(self.mount_rotation)
        self._mount_position = tuple(self.mount_position.tolist())

    def sample(self, state: VehicleState, hits: RayHits | None) -> None:
        body = _floats(body_rotation(state))
        ox, oy, oz = _apply(body, *self._mount_position)  # mounting point from the body origin, world frame
        wx, wy, wz = state.angular_velocity.tolist()
        vx, vy, vz = state.linear_velocity.tolist()
        velocity = (vx + wy * oz - wz * oy, vy + wz * ox - wx * oz, vz + wx * oy - wy * ox)
        dt = 0.0 if self.last_sample_time is None else state.time - self.last_sample_time
        prev = self.prev_velocity
        if prev is None or dt <= 0:
            ax = ay = az = 0.0
        else:
            ax, ay, az = (velocity[0] - prev[0]) / dt, (velocity[1] - prev[1]) / dt, (velocity[2] - prev[2]) / dt
        self.prev_velocity = velocity
        specific = _apply_t(self._mount, *_apply_t(body, ax, ay, az + GRAVITY))
        measured = self.noise.apply(specific, dt)
        self.reading = Vector3(*_finish(measured, self.limit, self.step, self.mask))


def _rotation_vector(r: Matrix) -> tuple[float, float, float]:
    """Axis times angle (rad) of a rotation matrix."""
    cos = max(-1.0, min(1.0, (r[0] + r[4] + r[8] - 1.0) / 2.0))
    angle = math.acos(cos)
    ax, ay, az = r[7] - r[5], r[2] - r[6], r[3] - r[1]
    sin = math.sin(angle)
    scale = 0.5 if sin < 1e-9 else angle / (2.0 * sin)  # small angle: the skew part is the rotation vector
    return ax * scale, ay * scale, az * scale


class GyroscopeSensor(Sensor):
    TYPE = "gyroscope"
    TITLE = "Gyroscope"
    DEFINITION = GyroscopeConfig
    FIELDS = ("x", "y", "z")
    config: GyroscopeConfig

    def hud_text(self, reading: Any) -> str:
        return _vector_text(reading, self.config.output_unit) or super().hud_text(reading)

    def __init__(self, config: GyroscopeConfig, rng: np.random.Generator, context) -> None:
        super().__init__(config, rng, context)
        self.noise = ImuNoise(rng, config.noise, white=config.noise_stddev_dps, bias=config.bias_stddev_dps,
                              walk=config.bias_walk_dps, scale_pct=config.accuracy_pct,
                              density=config.noise_density_dps_rthz, instability=config.bias_instability_dph / 3600.0,
                              rate_hz=config.bandwidth_hz)
        self.mask = ("x" in config.axes, "y" in config.axes, "z" in config.axes)
        self.prev_rotation: Matrix | None = None
        self._mount = _floats(self.mount_rotation)

    def sample(self, state: VehicleState, hits: RayHits | None) -> None:
        rot = _mul(_floats(body_rotation(state)), self._mount)  # sensor axes in the world frame
        dt = 0.0 if self.last_sample_time is None else state.time - self.last_sample_time
        if self.prev_rotation is None or dt <= 0:
            rate = _apply_t(rot, *state.angular_velocity.tolist())
        else:
            rx, ry, rz = _rotation_vector(_mul_t(self.prev_rotation, rot))
            rate = rx / dt, ry / dt, rz / dt
        self.prev_rotation = rot
        dps = self.noise.apply((math.degrees(rate[0]), math.degrees(rate[1]), math.degrees(rate[2])), dt)
        cfg = self.config
        x, y, z = _finish(dps, cfg.max_range_dps, cfg.resolution_dps, self.mask)
        if cfg.output_unit == "rad/s":
            x, y, z = math.radians(x), math.radians(y), math.radians(z)
        self.reading = Vector3(x, y, z)
