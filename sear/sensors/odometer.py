"""Wheel encoder odometer: distance from counted wheel rotation, so wheel slip becomes odometry error.

Ticks are whole encoder counts of the mean rotation of the chosen wheels since the start (negative when
reversing); distance = ticks / ticks_per_rev * 2·pi·radius, with the radius the definition assumes
(or the simulated wheel's true radius when it says 0).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from sear.sensors.base import RayHits, Sensor
from sear.sensors.config import OdometerConfig
from sear.state import VehicleState


class Odometry(NamedTuple):
    distance: float
    """Metres travelled according to the encoder (signed)."""
    ticks: int
    """Encoder count since the start (signed)."""


class OdometerSensor(Sensor):
    TYPE = "odometer"
    FIELDS = ("distance", "ticks")
    config: OdometerConfig

    def __init__(self, config: OdometerConfig, rng: np.random.Generator, context) -> None:
        super().__init__(config, rng, context)
        self.start: float | None = None

    def sample(self, state: VehicleState, hits: RayHits | None) -> None:
        wheels = [w for w in self.config.wheels if w in state.wheel_angles]
        if not wheels:
            self.reading = None
            return
        angle = math.fsum(state.wheel_angles[w] for w in wheels) / len(wheels)
        if self.start is None:
            self.start = angle
        turned = angle - self.start
        ticks = math.trunc(turned / (2.0 * math.pi) * self.config.ticks_per_rev)
        radius = self.config.wheel_radius_m or math.fsum(state.wheel_radii[w] for w in wheels) / len(wheels)
        self.reading = Odometry(ticks / self.config.ticks_per_rev * 2.0 * math.pi * radius, ticks)
