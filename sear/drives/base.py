"""What a drive model is: the wheels it is given, the roles it gives them, and its wheel forces.

A drive model is a `DriveModel` subclass that names itself (NAME, the word in a project's
`<drive_type>`; LABEL and HELP, what the settings window's drop-down and the documentation show) and says,
for the wheels of one robot:
- which wheels steer (`steers`), which are driven (`drives`) and which are passive casters (`is_caster`),
  decided once when the robot is built;
- how the driver's inputs become each wheel's drive force (`wheel_forces`) and a steered wheel's angle
  (`steer_angle`), worked out only when the inputs change (never per physics step).

The robot (sear.physics.vehicle's mesh vehicle, sear.physics.urdf's URDF robot) describes its wheels as
`WheelPlace`s and applies what the model returns: a drive force pushes the wheel's contact patch along the
ground (within the tyre's grip), a wheel with no drive force rolls free against its brake and rolling
resistance, a caster passes only rolling resistance and has no side grip. Units: newtons, radians, metres.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar


@dataclass(frozen=True)
class WheelPlace:
    """One wheel of a robot as a drive model sees it."""

    left: bool
    """The wheel is on the robot's left side (its centre at y > 0 in the body frame)."""
    steerable: bool
    """The wheel can be steered: a mesh robot's two front-slot wheels; a URDF robot's wheels below one of
    its steering joints."""
    front_slot: bool
    """One of a mesh robot's two front wheel slots (left_front, right_front). A URDF robot's wheels have no
    slots: False for each (its casters are joints of their own, not wheels)."""


class DriveModel:
    """A drive model for the wheels of one robot (built once per robot, when the robot is built).

    Subclasses set NAME, LABEL and HELP and override `steers`, `drives` and `is_caster` (the defaults:
    no wheel steers, every wheel is driven, none is a caster), and `wheel_forces` and `steer_angle` when
    the forces are not shared as `wheel_forces` below shares them."""

    NAME: ClassVar[str] = ""
    """The word in a project's <drive_type> (an XML enumeration value: letters, digits, _ and -)."""
    LABEL: ClassVar[str] = ""
    """The settings window's drop-down entry ('Car (Ackermann steering, rear-wheel drive)')."""
    HELP: ClassVar[str] = ""
    """What the model does, in sentences (the drop-down's tooltip and the documentation)."""

    def __init__(self, wheels: Sequence[WheelPlace]) -> None:
        self.wheels = tuple(wheels)
        """The robot's wheels, in the robot's own order (every per-wheel tuple below follows it)."""
        self.steered = tuple(self.steers(w) for w in self.wheels)
        """Per wheel: it turns with the steering input (`steer_angle`)."""
        self.driven = tuple(self.drives(w) for w in self.wheels)
        """Per wheel: it may be given a drive force."""
        self.casters = tuple(self.is_caster(w) for w in self.wheels)
        """Per wheel: a passive caster (no brake, no side grip, only rolling resistance in any direction)."""
        self.wheels_steer = any(self.steered)
        """Whether steering turns wheels; when none steers, the steering input's share of the limit drives
        the two sides differentially instead (sear.physics.inputs.DriveInputs)."""
        self._side_counts = {side: max(1, sum(d for d, w in zip(self.driven, self.wheels, strict=True)
                                              if w.left == side)) for side in (True, False)}
        self._driven_count = max(1, sum(self.driven))

    # --- roles, decided once per robot --------------------------------------------------------------------

    def steers(self, wheel: WheelPlace) -> bool:
        """Whether `wheel` turns with the steering input."""
        return False

    def drives(self, wheel: WheelPlace) -> bool:
        """Whether `wheel` is driven."""
        return True

    def is_caster(self, wheel: WheelPlace) -> bool:
        """Whether `wheel` is a passive caster."""
        return False

    # --- inputs to wheels, worked out when the inputs change ----------------------------------------------

    def wheel_forces(self, *, engine_force: float, sides: tuple[float, float] | None, turn: float,
                     full_force: float) -> list[float]:
        """Each wheel's drive force, N (positive forward), in wheel order.

        engine_force: the total engine force asked for (`accelerate`); sides: the left and right side's
        forces (`drive(left, right)`), which take precedence, or None; turn: the steering input's share of
        the steering limit, -1 to 1 (positive left), when no wheel steers (else 0); full_force: the
        project's engine force at full throttle (Vehicle Dynamics' acceleration force).

        Shared here as the built-in models share it: a side's force is split evenly among that side's
        driven wheels; with no side forces the engine force is split evenly among all driven wheels when
        wheels steer, else it is split between the sides with `turn` moving up to `full_force` from one
        side to the other (full turn and no throttle: the sides push equally in opposite directions)."""
        if sides is not None:
            left, right = sides
        elif self.wheels_steer:
            share = engine_force / self._driven_count
            return [share if driven else 0.0 for driven in self.driven]
        else:
            moved = turn * full_force
            left, right = engine_force / 2.0 - moved / 2.0, engine_force / 2.0 + moved / 2.0
        counts = self._side_counts
        return [(left / counts[True] if w.left else right / counts[False]) if driven else 0.0
                for driven, w in zip(self.driven, self.wheels, strict=True)]

    def steer_angle(self, steering: float, wheelbase: float, lateral: float) -> float:
        """The angle (rad, positive left) a steered wheel, or its steering joint, `lateral` m left of the
        robot's centre line turns to for the steering input `steering` (rad); `wheelbase` (m) is the
        distance from the steered wheels to the others along the robot (0 when all or none steer)."""
        return 0.0
