"""Compass: heading of the body's forward axis, clockwise from the direction to the north point.

As in the original SEAR, north is a configurable world point (default 100 km up the y axis), so a robot
near it sees north bend as a real compass near a magnetic pole would. The reading is tilt-compensated
(the forward axis projected on the horizontal plane), 0-360 degrees or 0-2·pi radians.
"""

from __future__ import annotations

import math

from sear.sensors.base import RayHits, Sensor, quantise
from sear.sensors.config import CompassConfig
from sear.state import VehicleState


class CompassSensor(Sensor):
    TYPE = "compass"
    FIELDS = ("heading",)
    config: CompassConfig

    def sample(self, state: VehicleState, hits: RayHits | None) -> None:
        position, rot = self.sensor_frame(state)
        forward = rot[:, 0]
        north = (self.config.north_point[0] - position[0], self.config.north_point[1] - position[1])
        bearing_forward = math.degrees(math.atan2(forward[0], forward[1]))
        bearing_north = math.degrees(math.atan2(north[0], north[1]))
        heading = bearing_forward - bearing_north
        if self.config.noise and self.config.accuracy_deg > 0:
            heading += float(self.rng.normal(0.0, self.config.accuracy_deg))
        heading = float(quantise(heading % 360.0, self.config.resolution_deg)) % 360.0
        self.reading = math.radians(heading) if self.config.output_unit == "rad" else heading
