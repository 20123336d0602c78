"""Skid steer: every wheel driven, none steers; it turns by driving its sides differentially."""

from __future__ import annotations

from sear.drives.base import DriveModel


class SkidDrive(DriveModel):
    NAME = "skid"
    LABEL = "Skid steer (sides driven differentially)"
    HELP = ("Skid steer: every wheel is driven, none steers; each side's wheels share that side's force, and "
            "steering moves up to the engine force from one side to the other. It turns by sliding its "
            "tyres sideways, so it spins in place only when each wheel's drive force exceeds its grip "
            "(μ times its load).")
