"""The car: Ackermann steering of the steerable wheels, the others driven."""

from __future__ import annotations

import math

from sear.drives.base import DriveModel, WheelPlace


class CarDrive(DriveModel):
    NAME = "car"
    LABEL = "Car (Ackermann steering, rear-wheel drive)"
    HELP = ("Ackermann front steering, rear-wheel drive: the steerable wheels (a mesh robot's front slots, a "
            "URDF robot's wheels below its steering joints) steer, each pointing at one turning centre on the "
            "rear axle line, and the other wheels are driven, sharing the engine force evenly; "
            "drive(left, right) gives each driven wheel its side's force. A URDF robot without steering "
            "joints drives every wheel and turns by its sides, as skid steer does.")

    def steers(self, wheel: WheelPlace) -> bool:
        return wheel.steerable

    def drives(self, wheel: WheelPlace) -> bool:
        return not wheel.steerable or not any(w.steerable for w in self.wheels)

    def steer_angle(self, steering: float, wheelbase: float, lateral: float) -> float:
        """Ackermann: the wheel points at the turning centre on the rear axle line, wheelbase / tan(steering)
        m left of the centre line; with no wheelbase (every wheel steers) all wheels take the angle itself."""
        if abs(steering) < 1e-9:
            return 0.0
        if wheelbase <= 0:
            return steering
        radius = wheelbase / math.tan(steering)
        return math.atan(wheelbase / (radius - lateral))
