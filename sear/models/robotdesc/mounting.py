"""Mounting on a robot description's links: a pose given in a link's frame carried into the root link's
frame, the one the simulation and the sensor models work in (sear.sensors.mounting mounts sensors with it).
"""

from __future__ import annotations

import math

import numpy as np

from sear.errors import ProjectError
from sear.models.robotdesc.model import RobotDescription, rpy_matrix


def mount_on_link(desc: RobotDescription, link: str, xyz: tuple[float, float, float],
                  rpy: tuple[float, float, float]) -> tuple[tuple[float, float, float], tuple[float, float, float]]:
    """A mounting pose given in `link`'s frame (xyz m; roll, pitch, yaw rad as URDF and the sensors file
    apply them: R = Rz(yaw)·Ry(pitch)·Rx(roll)) as the same pose in the root link's frame. Raises
    ProjectError (no file: the caller's) for a link the URDF does not have, or one that a moving joint
    separates from the base (the pose would change as it moves)."""
    if link not in desc.links:
        raise ProjectError(f"the robot {desc.path.name} has no link '{link}'; its links are: {', '.join(desc.links)}.")
    moving = [j.name for j in desc.chain(link) if j.moves]
    if moving:
        raise ProjectError(f"link '{link}' moves against the base (through joint '{moving[0]}'); sensors mount on "
                           "links fixed to the base: name such a link, or the base.")
    mount = np.eye(4)
    mount[:3, :3] = rpy_matrix(*rpy)
    mount[:3, 3] = xyz
    pose = desc.link_poses()[link] @ mount
    r = pose[:3, :3]
    pitch = math.asin(max(-1.0, min(1.0, -r[2, 0])))
    roll, yaw = math.atan2(r[2, 1], r[2, 2]), math.atan2(r[1, 0], r[0, 0])
    if abs(abs(pitch) - math.pi / 2) < 1e-9:  # gimbal lock: roll folded into yaw
        roll, yaw = 0.0, math.atan2(-r[0, 1], r[1, 1])
    x, y, z = (float(v) for v in pose[:3, 3])
    return (x, y, z), (roll, pitch, yaw)
