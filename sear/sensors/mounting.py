"""Sensors mounted on a link of a URDF robot (`<link>` in the sensors file): their poses in the body frame.

A sensor's pose is given in its link's frame; the simulation and the sensor models work in the body
frame (the URDF's root link), so the pose is carried over once, through the URDF's joints at their zero
pose. Only links fixed to the base are accepted (sear.models.robotdesc.mounting), so the carried pose stays
true however the robot moves and its readings follow that link.
"""

from __future__ import annotations

import math
from dataclasses import replace

from sear.errors import ProjectError
from sear.models.robotdesc.model import RobotDescription
from sear.models.robotdesc.mounting import mount_on_link
from sear.sensors.config import Pose, SensorConfig


def mounted(configs: list[SensorConfig], robot: RobotDescription | None) -> list[SensorConfig]:
    """`configs` with each pose given on a link turned into the body frame (the link left out); the others
    as they are. Raises ProjectError (field: the sensor's link) for a link on a mesh body, a link the
    URDF does not have, or one that moves against the base."""
    out = []
    for config in configs:
        if config.link is None:
            out.append(config)
            continue
        if robot is None:
            raise ProjectError(f"sensor '{config.name}' is mounted on link '{config.link}', but the robot body is a "
                               "mesh, which has no links; remove its <link> or use a URDF body.",
                               field=f"{config.name}.link")
        try:
            pose = config.pose
            xyz, rpy = mount_on_link(robot, config.link, (pose.x, pose.y, pose.z),
                                     (math.radians(pose.roll), math.radians(pose.pitch), math.radians(pose.yaw)))
        except ProjectError as exc:
            raise ProjectError(f"sensor '{config.name}': {exc.message}", field=f"{config.name}.link") from None
        roll, pitch, yaw = (math.degrees(a) for a in rpy)
        out.append(replace(config, pose=Pose(*xyz, roll, pitch, yaw), link=None))
    return out
