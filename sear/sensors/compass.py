"""Compass: heading of the body's forward axis, clockwise from the direction to the north point.

As in the original SEAR, north is a configurable world point (default 100 km up the y axis), so a robot
near it sees north bend as a real compass near a magnetic pole would. The reading is tilt-compensated
(the forward axis projected on the horizontal plane), 0-360 degrees or 0-2·pi radians.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import numpy as np

from sear.fields import param
from sear.sensors.base import RayHits, Sensor
from sear.sensors.config import SensorConfig
from sear.state import VehicleState, body_rotation


@dataclass
class CompassConfig(SensorConfig):
    """Compass (e.g. HMC5883L): heading of the body's forward axis, clockwise from north."""

    TYPE: ClassVar[str] = "compass"

    axes: str = param("xyz", kind="axes", widget="axes")
    accuracy_deg: float = param(2.0, kind="nonNegative")
    """1-sigma heading error when `noise` is on, degrees."""
    bandwidth_hz: float = param(15.0, kind="positive")
    """Output rate, Hz."""
    resolution_deg: float = param(0.0, kind="nonNegative")
    """Smallest step of the reading, degrees; 0 = no quantisation."""
    output_unit: Literal["deg", "rad"] = param("deg", type_name="angleUnit")
    north_point: tuple[float, float] = param((0.0, 100_000.0), unit="m", widget="point2")
    """World point (x east, y north, metres) the compass treats as north (the thesis: 100 km north)."""


class CompassSensor(Sensor):
    TYPE = "compass"
    TITLE = "Compass"
    DEFINITION = CompassConfig
    FIELDS = ("heading",)
    config: CompassConfig

    def hud_text(self, reading: Any) -> str:
        if not isinstance(reading, float | int):
            return super().hud_text(reading)
        return f"{reading:.1f}{'°' if self.config.output_unit == 'deg' else ' rad'}"

    def __init__(self, config: CompassConfig, rng: np.random.Generator, context) -> None:
        super().__init__(config, rng, context)
        self._mount_forward = self.mount_rotation[:, 0].tolist()
        self._mount_position = self.mount_position.tolist()

    def sample(self, state: VehicleState, hits: RayHits | None) -> None:
        # Plain floats: numpy's per-call cost on 3-vectors is far above the arithmetic's.
        r0, r1, r2, r3, r4, r5, _, _, _ = body_rotation(state).ravel().tolist()
        fx, fy, fz = self._mount_forward
        mx, my, mz = self._mount_position
        x, y, _ = state.position.tolist()
        east, north_ = x + r0 * mx + r1 * my + r2 * mz, y + r3 * mx + r4 * my + r5 * mz
        forward = (r0 * fx + r1 * fy + r2 * fz, r3 * fx + r4 * fy + r5 * fz)
        north = (self.config.north_point[0] - east, self.config.north_point[1] - north_)
        bearing_forward = math.degrees(math.atan2(forward[0], forward[1]))
        bearing_north = math.degrees(math.atan2(north[0], north[1]))
        heading = bearing_forward - bearing_north
        if self.config.noise and self.config.accuracy_deg > 0:
            heading += float(self.rng.normal(0.0, self.config.accuracy_deg))
        step = self.config.resolution_deg
        heading = heading % 360.0
        heading = (round(heading / step) * step if step > 0 else heading) % 360.0
        self.reading = math.radians(heading) if self.config.output_unit == "rad" else heading
