"""Differential drive: two driven wheels, one a side, and passive casters."""

from __future__ import annotations

from sear.drives.base import DriveModel, WheelPlace


class DifferentialDrive(DriveModel):
    NAME = "differential"
    LABEL = "Differential (rear wheels driven, front wheels casters)"
    HELP = ("Differential drive, a two-motor robot: a mesh robot's two rear-slot wheels are driven, one a "
            "side, and its two front-slot wheels are passive casters or ball wheels, which carry load but "
            "pass to the ground only rolling resistance, in any direction, and no side grip; it turns about "
            "the middle of the driven axle, on the spot with opposite side forces. The brake acts on the "
            "driven wheels. Casters behind the axle: put the front-slot wheels behind it. A URDF robot's "
            "marked wheels are all driven, by side (its casters are joints of their own).")

    def drives(self, wheel: WheelPlace) -> bool:
        return not wheel.front_slot

    def is_caster(self, wheel: WheelPlace) -> bool:
        return wheel.front_slot
