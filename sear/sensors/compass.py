"""Compass: heading of the body's forward axis, clockwise from the direction to the north point.

As in the original SEAR, north is a configurable world point (default 100 km up the y axis), so a robot
near it sees north bend as a real compass near a magnetic pole would. The reading is tilt-compensated
(the forward axis projected on the horizontal plane), 0-360 degrees or 0-2·pi radians.
"""

from __future__ import annotations

import math

import numpy as np

from sear.sensors.base import RayHits, Sensor
from sear.sensors.config import CompassConfig
from sear.state import VehicleState, body_rotation


class CompassSensor(Sensor):
    TYPE = "compass"
    FIELDS = ("heading",)
    config: CompassConfig

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
