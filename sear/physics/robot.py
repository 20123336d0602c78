"""The one factory that turns a project's robot into physics: `build_vehicle`.

Every robot of a world is built here, whatever its kind, so that a new kind of robot (another drive model,
a body from a URDF file) is one more branch in this function and the world, the sensors and the
simulation loop need no change: they only ask the result for what `Vehicle` offers (body_id, cog,
state(), update(dt), reset(), accelerate/brake/steer, wheel_transforms()).

Every robot's bodies are in the one robots' collision group (sear.collision.ROBOT_COLLISION_GROUP, set
where each kind builds its bodies): robots collide with each other, and the ray caster tells a robot's
own bodies from the others' by their ids.
"""

from __future__ import annotations

from sear.models.loaded import RobotModels
from sear.physics.urdf import UrdfVehicle, build_urdf_vehicle
from sear.physics.vehicle import Vehicle
from sear.project import WHEEL_IDS, Robot


def build_vehicle(client: int, robot: Robot, models: RobotModels, position: tuple[float, float, float],
                  orientation: tuple[float, float, float, float]) -> Vehicle | UrdfVehicle:
    """A robot of a world in pybullet `client`: its body and wheels from `models` (or its URDF links, when
    `models.description` is set), its dynamics from `robot`, standing at `position` (m, world frame, body
    model origin or URDF root link frame) with `orientation` (quaternion x, y, z, w)."""
    if models.description is not None:
        return build_urdf_vehicle(client, models, robot.dynamics, position, orientation)
    positions = {wid: robot.wheels[wid].position for wid in WHEEL_IDS}
    return Vehicle(client, models.body, models.wheels, positions, robot.dynamics, position, orientation)
