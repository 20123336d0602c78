"""Plain values that flow from the physics to the sensors and the front ends (no pybullet, no Qt)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np


@dataclass(frozen=True)
class VehicleState:
    """Ground truth of the robot at one instant, in SI units and the world frame (ENU).

    `position` and `orientation` are those of the body model's frame (the frame sensor mounting poses
    are given in), not of the centre of mass when a centre-of-gravity offset is set.
    """

    time: float
    """Simulated time, s."""
    position: np.ndarray
    """(3,) body frame origin in the world, m."""
    orientation: np.ndarray
    """(4,) quaternion x, y, z, w rotating body-frame vectors into the world frame."""
    linear_velocity: np.ndarray
    """(3,) velocity of the body frame origin, world frame, m/s."""
    angular_velocity: np.ndarray
    """(3,) angular velocity, world frame, rad/s."""
    wheel_angles: dict[str, float] = field(default_factory=dict)
    """Accumulated rotation of each wheel about its axle, rad, positive when rolling forward."""
    wheel_radii: dict[str, float] = field(default_factory=dict)
    """Radius of each wheel, m."""
    steering: float = 0.0
    """Current front-wheel steering angle, rad, positive left."""
    rotation: np.ndarray | None = None
    """(3, 3) rotation matrix of `orientation` (body axes as columns), when the maker had it at hand;
    `body_rotation()` works it out (once) otherwise."""


def body_rotation(state: VehicleState) -> np.ndarray:
    """The (3, 3) rotation matrix body -> world of `state` (body axes as columns), worked out once per state:
    every sensor sampled on a tick needs it."""
    rotation = state.rotation
    if rotation is None:
        x, y, z, w = (float(c) for c in state.orientation)
        rotation = np.array([
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ])
        object.__setattr__(state, "rotation", rotation)  # a cache of a derived value, not a change of state
    return rotation


def quaternion_to_euler(q: np.ndarray) -> tuple[float, float, float]:
    """Roll, pitch, yaw (rad; intrinsic z-y'-x'') of a quaternion (x, y, z, w), such as a state's
    `orientation`: what the log's truth columns, sim.pose and the window's heading show."""
    x, y, z, w = q.tolist() if isinstance(q, np.ndarray) else (float(c) for c in q)
    roll = math.atan2(2 * (w * x + y * z), 1 - 2 * (x * x + y * y))
    pitch = math.asin(max(-1.0, min(1.0, 2 * (w * y - z * x))))
    yaw = math.atan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))
    return roll, pitch, yaw


class GripperReading(NamedTuple):
    """What the gripper's own sensors report (sim.read("gripper")): the break beam and the paddles' and
    lift's positions, in SI units."""

    beam: bool
    """The beam between the paddles is broken: something (not the robot) lies between them."""
    opening: float
    """Gap between the paddles' inner faces, m."""
    height: float
    """Lift height: how far the paddles are above their lowest position, m."""
    holding: bool
    """Both paddles press on the same object (what the lift then raises)."""
