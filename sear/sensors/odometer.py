"""Wheel encoder odometer: distance from counted wheel rotation, so wheel slip becomes odometry error.

Ticks are whole encoder counts of the mean rotation of the chosen wheels since the start (negative when
reversing); distance = ticks / ticks_per_rev * 2·pi·radius, with the radius the definition assumes
(or the simulated wheel's true radius when it says 0).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar, NamedTuple

import numpy as np

from sear.fields import param
from sear.project import WHEEL_IDS
from sear.sensors.base import RayHits, Sensor
from sear.sensors.config import SensorConfig
from sear.state import VehicleState


@dataclass
class OdometerConfig(SensorConfig):
    """Wheel encoder odometer: distance travelled from wheel rotation, so slip shows as error."""

    TYPE: ClassVar[str] = "odometer"

    ticks_per_rev: int = param(360, kind="positiveInt", label="Ticks per revolution")
    """Encoder ticks per wheel revolution (> 0)."""
    wheel_radius_m: float = param(0.0, kind="nonNegative")
    """Wheel radius the odometer assumes, metres; 0 = the simulated wheel's true radius."""
    wheels: tuple[str, ...] = param(("left_rear", "right_rear"), choices=WHEEL_IDS, type_name="wheelId",
                                    kind="wheelList")
    """Wheels whose rotation is averaged (ids from sear.project.WHEEL_IDS)."""
    update_rate_hz: float = param(50.0, kind="positive")

    def problems(self) -> list[tuple[str, str]]:
        unknown = [w for w in self.wheels if w not in WHEEL_IDS]
        if unknown:
            return [("wheels", f"unknown wheel(s) {', '.join(unknown)}; use {', '.join(WHEEL_IDS)}.")]
        return []


class Odometry(NamedTuple):
    distance: float
    """Metres travelled according to the encoder (signed)."""
    ticks: int
    """Encoder count since the start (signed)."""


class OdometerSensor(Sensor):
    TYPE = "odometer"
    TITLE = "Odometer"
    DEFINITION = OdometerConfig
    FIELDS = ("distance", "ticks")
    PLOTTED = ("distance",)
    config: OdometerConfig

    def hud_text(self, reading: Any) -> str:
        if not isinstance(reading, Odometry):
            return super().hud_text(reading)
        return f"{reading.distance:.3f} m ({reading.ticks} ticks)"

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
