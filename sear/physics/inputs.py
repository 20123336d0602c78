"""The driver's inputs that every kind of robot takes the same way (sear.physics.vehicle's raycast vehicle
and sear.physics.urdf's URDF robot): engine force, side forces and steering, each change handed to the
robot's own `_inputs_changed`, which asks the robot's drive model (sear.drives) for each wheel's force and
angle and applies them its own way."""

from __future__ import annotations

from typing import Any

from sear.drives import registry as drive_registry
from sear.drives.base import DriveModel, WheelPlace


class DriveInputs:
    """accelerate / drive / steer for a robot class that sets `dynamics` (sear.project.Dynamics),
    `drive_model` (`make_drive_model`), `engine_force`, `steering`, `_turn` and `_sides`, and defines
    `_inputs_changed()`."""

    dynamics: Any
    drive_model: DriveModel
    engine_force: float
    steering: float
    _turn: float
    _sides: tuple[float, float] | None

    def _inputs_changed(self) -> None:
        raise NotImplementedError

    def make_drive_model(self, wheels: list[WheelPlace]) -> DriveModel:
        """The project's drive model (`dynamics.drive_type`) for these wheels, in the robot's wheel order."""
        return drive_registry.model(self.dynamics.drive_type)(wheels)

    def accelerate(self, force: float) -> None:
        """Total engine force, N, shared by the driven wheels; negative drives backwards. Takes over
        from drive()'s side forces."""
        force = float(force)
        if force != self.engine_force or self._sides is not None:
            self.engine_force = force
            self._sides = None
            self._inputs_changed()

    def drive(self, left: float, right: float) -> None:
        """Drive force of each side, N (negative backwards), until accelerate() or (when no wheel steers)
        steer() takes over."""
        sides = (float(left), float(right))
        if sides != self._sides:
            self._sides = sides
            self._inputs_changed()

    def steer(self, angle: float) -> None:
        """Steering angle, rad, positive left, clamped to the steering limit: the steered wheels' angle (as
        the drive model turns them) when the drive model steers wheels, else the angle's share of the limit
        turns the robot by driving its sides differentially with up to the engine force (it spins in place
        with no throttle), taking over from drive()'s side forces."""
        limit = self.dynamics.max_steering
        angle = max(-limit, min(limit, float(angle)))
        sides = self._sides
        if self.drive_model.wheels_steer:
            steering, turn = angle, 0.0
        else:
            steering, turn, sides = 0.0, angle / limit if limit > 0 else 0.0, None
        if steering != self.steering or turn != self._turn or sides != self._sides:  # steered every tick
            self.steering, self._turn, self._sides = steering, turn, sides
            self._inputs_changed()

    def _wheel_forces(self) -> list[float]:
        """Each wheel's drive force (N, positive forward) for the inputs now, in the robot's wheel order."""
        return self.drive_model.wheel_forces(engine_force=self.engine_force, sides=self._sides, turn=self._turn,
                                             full_force=self.dynamics.engine_force)
