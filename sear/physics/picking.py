"""What the mouse points at in the world, and pulling a movable body with the mouse as a force.

`pick` casts one ray (from the simulation window's mouse, through its camera) into the pybullet world and
names what it hits: the terrain, a robot, a robot's gripper or an obstacle user code added. `Pull` is the
simulation window's apply-force tool, like Gazebo's and Webots': a damped spring from the point grabbed on
the body to where the mouse is, applied as an external force on every physics step while the button is
held, so a pulled body keeps its mass, friction and collisions (it cannot be dragged through a wall, and a
heavy one lags behind the mouse). Only the window uses them; a headless run never pulls anything.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pybullet as p

from sear.gravity import GRAVITY

if TYPE_CHECKING:
    from sear.physics.world import World

PULL_FREQUENCY = 1.5
"""Hz: the natural frequency of the pulled body on the spring (stiffness = mass × (2π f)²), critically
damped, so a body follows the mouse within about half a second without overshooting."""
PULL_MAX_G = 3.0
"""The largest pull, in multiples of the body's weight, so a far-off mouse does not fling a body away."""


@dataclass(frozen=True)
class Picked:
    """What a pick hit: `kind` 'terrain', 'robot', 'gripper' or an obstacle's kind ('box', 'tree', 'wall',
    'table', ...); `index` the robot's or the obstacle's index (World.vehicles, World.obstacles; 0 for the
    terrain); `body_id` and `link` the pybullet body and link hit; `point` the hit in the world frame (m)."""

    kind: str
    index: int
    body_id: int
    link: int
    point: np.ndarray

    @property
    def is_obstacle(self) -> bool:
        return self.kind not in ("terrain", "robot", "gripper")


def owner(world: World, body_id: int) -> tuple[str, int] | None:
    """(kind, index) of the object pybullet body `body_id` belongs to, None for a body of no object."""
    if body_id in world.terrain_ids:
        return "terrain", 0
    for index, vehicle in enumerate(world.vehicles):
        if vehicle.body_id == body_id:
            return "robot", index
    for index, gripper in world.grippers.items():
        if gripper.body_id == body_id:
            return "gripper", index
    for index, obstacle in enumerate(world.obstacles):
        if body_id in obstacle.body_ids:
            return obstacle.kind, index
    return None


def pick(world: World, start: np.ndarray, end: np.ndarray) -> Picked | None:
    """The first object on the segment `start` -> `end` (m, world frame), None when it hits nothing."""
    hit = p.rayTest([float(c) for c in start], [float(c) for c in end], physicsClientId=world.client)[0]
    body_id, link = int(hit[0]), int(hit[1])
    if world.pager is not None:  # a paged terrain: the grid, loaded as tiles or not, if it is nearer
        begin, end_ = np.asarray(start, dtype=float), np.asarray(end, dtype=float)
        fraction = np.array([hit[2] if body_id >= 0 else 1.0])
        if world.pager.grid.cast(begin[None, :], (end_ - begin)[None, :], fraction, np.zeros((1, 3)))[0]:
            return Picked("terrain", 0, world.terrain_ids[0], -1, begin + fraction[0] * (end_ - begin))
    if body_id < 0:
        return None
    found = owner(world, body_id)
    if found is None:
        return None
    return Picked(found[0], found[1], body_id, link, np.array(hit[3], dtype=float))


def body_mass(world: World, body_id: int) -> float:
    """The mass (kg) of pybullet body `body_id`, all its links together; 0 for a fixed body."""
    client = world.client
    return float(sum(p.getDynamicsInfo(body_id, link, physicsClientId=client)[0]
                     for link in range(-1, p.getNumJoints(body_id, physicsClientId=client))))


def body_pose(world: World, body_id: int) -> tuple[np.ndarray, np.ndarray]:
    """Position (m) and orientation (quaternion x, y, z, w) of `body_id`'s base, world frame."""
    position, orientation = p.getBasePositionAndOrientation(body_id, physicsClientId=world.client)
    return np.array(position), np.array(orientation)


class Pull:
    """A damped spring from a point of a movable body to a target point, applied as a force every step.

    The grabbed point is kept in the body's own frame, so it turns with the body; `target` (m, world frame)
    is where the mouse is. `apply()` is called before each physics step (pybullet forgets external forces
    after a step)."""

    def __init__(self, world: World, body_id: int, point: np.ndarray) -> None:
        self.world = world
        self.body_id = body_id
        self.mass = body_mass(world, body_id)
        if self.mass <= 0.0:
            raise ValueError(f"body {body_id} is fixed: it cannot be pulled")
        position, orientation = body_pose(world, body_id)
        inverse_position, inverse_orientation = p.invertTransform(position.tolist(), orientation.tolist())
        local, _ = p.multiplyTransforms(inverse_position, inverse_orientation, [float(c) for c in point],
                                        [0, 0, 0, 1])
        self.local = np.array(local)
        """The grabbed point in the body's frame (m)."""
        self.target = np.array(point, dtype=float)
        """Where the grabbed point is pulled to (m, world frame)."""
        omega = 2.0 * math.pi * PULL_FREQUENCY
        self.stiffness = self.mass * omega * omega
        self.damping = 2.0 * self.mass * omega

    def grabbed_point(self) -> np.ndarray:
        """The grabbed point where the body is now (m, world frame)."""
        position, orientation = body_pose(self.world, self.body_id)
        world_point, _ = p.multiplyTransforms(position.tolist(), orientation.tolist(), self.local.tolist(),
                                              [0, 0, 0, 1])
        return np.array(world_point)

    def force(self) -> tuple[np.ndarray, np.ndarray]:
        """The force (N, world frame) the spring puts on the body now, and the point (m) it acts at."""
        client = self.world.client
        point = self.grabbed_point()
        position, _ = body_pose(self.world, self.body_id)
        linear, angular = p.getBaseVelocity(self.body_id, physicsClientId=client)
        velocity = np.array(linear) + np.cross(np.array(angular), point - position)
        force = self.stiffness * (self.target - point) - self.damping * velocity
        largest = PULL_MAX_G * self.mass * GRAVITY
        size = float(np.linalg.norm(force))
        if size > largest:
            force *= largest / size
        return force, point

    def apply(self) -> None:
        """Put this step's pull on the body (waking it if Bullet had put it to sleep)."""
        client = self.world.client
        force, point = self.force()
        p.changeDynamics(self.body_id, -1, activationState=p.ACTIVATION_STATE_WAKE_UP, physicsClientId=client)
        p.applyExternalForce(self.body_id, -1, force.tolist(), point.tolist(), p.WORLD_FRAME,
                             physicsClientId=client)
