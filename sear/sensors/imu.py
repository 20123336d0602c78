"""Accelerometer and gyroscope, as MEMS parts report them, in the sensor's own axes.

Accelerometer: specific force (what the proof mass feels) = acceleration minus gravity, so a part at
rest reads +9.81 m/s² on its up axis and 0 in free fall. The acceleration is the velocity difference of
the mounting point over the sample period (the thesis's method), so it needs no extra physics query.
Gyroscope: the mean angular rate over the sample period, from the change of orientation (exact for
any rotation within a period), in rad/s or deg/s.
Both: scale error (accuracy %), bias, bias random walk and white noise when noise is on; clipped at
the full-scale range; quantised at the part's resolution.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from sear.sensors.base import STANDARD_GRAVITY, ImuNoise, RayHits, Sensor, axis_mask, quantise, quat_to_matrix
from sear.sensors.config import AccelerometerConfig, GyroscopeConfig
from sear.state import VehicleState

GRAVITY = np.array([0.0, 0.0, -9.81])
"""The simulated world's gravity (sear.physics.world uses 9.81 m/s²)."""


class Vector3(NamedTuple):
    """Three sensor-axis values (x forward, y left, z up when mounted unrotated)."""

    x: float
    y: float
    z: float


class AccelerometerSensor(Sensor):
    TYPE = "accelerometer"
    FIELDS = ("x", "y", "z")
    config: AccelerometerConfig

    def __init__(self, config: AccelerometerConfig, rng: np.random.Generator, context) -> None:
        super().__init__(config, rng, context)
        self.noise = ImuNoise(rng, config.noise, white=config.noise_stddev_mps2, bias=config.bias_stddev_mps2,
                              walk=config.bias_walk_mps2, scale_pct=config.accuracy_pct)
        self.mask = axis_mask(config.axes)
        self.prev_velocity: np.ndarray | None = None
        self.limit = config.max_range_g * STANDARD_GRAVITY
        step_g = config.adc_step_mv / config.resolution_mv_per_g if config.adc_step_mv > 0 else 0.0
        self.step = step_g * STANDARD_GRAVITY

    def sample(self, state: VehicleState, hits: RayHits | None) -> None:
        _, rot = self.sensor_frame(state)
        offset = quat_to_matrix(state.orientation) @ self.mount_position
        velocity = state.linear_velocity + np.cross(state.angular_velocity, offset)
        dt = 0.0 if self.last_sample_time is None else state.time - self.last_sample_time
        acceleration = np.zeros(3) if self.prev_velocity is None or dt <= 0 else (velocity - self.prev_velocity) / dt
        self.prev_velocity = velocity
        specific = rot.T @ (acceleration - GRAVITY)
        measured = self.noise.apply(specific, dt)
        measured = np.clip(measured, -self.limit, self.limit)
        measured = quantise(measured, self.step) * self.mask
        self.reading = Vector3(*(float(v) for v in measured))


def _rotation_vector(r: np.ndarray) -> np.ndarray:
    """Axis times angle (rad) of a rotation matrix."""
    cos = max(-1.0, min(1.0, (np.trace(r) - 1.0) / 2.0))
    angle = math.acos(cos)
    axis = np.array([r[2, 1] - r[1, 2], r[0, 2] - r[2, 0], r[1, 0] - r[0, 1]])
    sin = math.sin(angle)
    if sin < 1e-9:
        return axis / 2.0  # small angle: the skew part is the rotation vector
    return axis * (angle / (2.0 * sin))


class GyroscopeSensor(Sensor):
    TYPE = "gyroscope"
    FIELDS = ("x", "y", "z")
    config: GyroscopeConfig

    def __init__(self, config: GyroscopeConfig, rng: np.random.Generator, context) -> None:
        super().__init__(config, rng, context)
        self.noise = ImuNoise(rng, config.noise, white=config.noise_stddev_dps, bias=config.bias_stddev_dps,
                              walk=config.bias_walk_dps, scale_pct=config.accuracy_pct)
        self.mask = axis_mask(config.axes)
        self.prev_rotation: np.ndarray | None = None

    def sample(self, state: VehicleState, hits: RayHits | None) -> None:
        _, rot = self.sensor_frame(state)
        dt = 0.0 if self.last_sample_time is None else state.time - self.last_sample_time
        if self.prev_rotation is None or dt <= 0:
            rate = rot.T @ state.angular_velocity
        else:
            rate = _rotation_vector(self.prev_rotation.T @ rot) / dt
        self.prev_rotation = rot
        dps = np.degrees(rate)
        dps = self.noise.apply(dps, dt)
        limit = self.config.max_range_dps
        dps = quantise(np.clip(dps, -limit, limit), self.config.resolution_dps) * self.mask
        out = np.radians(dps) if self.config.output_unit == "rad/s" else dps
        self.reading = Vector3(*(float(v) for v in out))
