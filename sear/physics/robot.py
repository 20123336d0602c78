"""The one factory that turns a project's robot into physics: `build_vehicle`.

Every robot of a world is built here, whatever its kind, so that a new kind of robot (another drive model,
a body from a URDF file) is one more branch in this function and the world, the sensors and the
simulation loop need no change: they only ask the result for what `Vehicle` offers (body_id, cog,
state(), update(dt), reset(), accelerate/brake/steer, wheel_transforms()).

Each robot gets a collision group of its own (sear.collision.robot_group): its sensors' rays leave out
its own body and see every other robot, and robots collide with each other.
"""

from __future__ import annotations

import pybullet as p

from sear.collision import ROBOT_BODY_MASK, robot_group
from sear.models.loaded import RobotModels
from sear.physics.urdf import UrdfVehicle, build_urdf_vehicle
from sear.physics.vehicle import Vehicle
from sear.project import WHEEL_IDS, Robot


def build_vehicle(client: int, robot: Robot, models: RobotModels, index: int,
                  position: tuple[float, float, float],
                  orientation: tuple[float, float, float, float]) -> Vehicle | UrdfVehicle:
    """Robot number `index` (0-based, its order in Project.robots) of a world in pybullet `client`: its
    body and wheels from `models` (a URDF robot's links, when `models.description` is set), its dynamics from
    `robot`, standing at `position` (m, world frame, body model origin or URDF root link frame) with
    `orientation` (quaternion x, y, z, w)."""
    if models.description is not None:
        urdf = build_urdf_vehicle(client, models, robot.dynamics, position, orientation)
        for link in urdf.link_index.values():
            p.setCollisionFilterGroupMask(urdf.body_id, link, robot_group(index), ROBOT_BODY_MASK,
                                          physicsClientId=client)
        return urdf
    positions = {wid: robot.wheels[wid].position for wid in WHEEL_IDS}
    vehicle = Vehicle(client, models.body, models.wheels, positions, robot.dynamics, position, orientation)
    p.setCollisionFilterGroupMask(vehicle.body_id, -1, robot_group(index), ROBOT_BODY_MASK, physicsClientId=client)
    return vehicle
