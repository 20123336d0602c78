"""The gripper accessory: a paddle (parallel) gripper on a lift at the robot's front, in pybullet.

The model (docs/gripper.md): a mast fixed to the front of the chassis; a carriage that slides up and
down it (a prismatic joint driven by a position motor whose force is limited to `lift_force`); two
paddles that slide across the carriage towards each other (prismatic joints whose motors squeeze
with at most `grip_force` each). All of it is one pybullet multibody held to the chassis by a fixed
constraint, so what the paddles push or carry pushes back on the robot.

The grasp is friction only: nothing sticks a box to the paddles. A closed paddle presses on the box
with its motor's force F, and Bullet's Coulomb friction holds the box while its weight is below
2·μ·F (μ = the product of the paddle's friction, PADDLE_FRICTION, and the box's: 0.6 for boxes of
`World.add_box`). A box heavier than that slides out of the paddles as the lift rises (too heavy: it
is not lifted); a box wider than the opening does not fit between them and is pushed by the paddles'
tips and the mast (too big). The lift raises the carriage, paddles and load while their weight is
below `lift_force`.

The break beam is a ray between the paddles' inner faces, BEAM_AT of the way from the carriage to the
tips at half the paddles' height; it is broken by anything between the paddles, another robot too (no
part of its own robot ever lies on it: the ray starts and ends just off the paddles' inner faces).

Frames: the body frame of sear.physics.vehicle (x forward, y left, z up, m).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pybullet as p

from sear.collision import ROBOT_BODY_MASK, ROBOT_COLLISION_GROUP
from sear.gravity import GRAVITY
from sear.project import Gripper
from sear.state import GripperReading

if TYPE_CHECKING:
    import trimesh

    from sear.physics.vehicle import Vehicle

MAST_THICKNESS = 0.02
"""m: the mast's depth (x)."""
CARRIAGE_THICKNESS = 0.02
"""m: the carriage's depth (x), in front of the mast."""
PADDLE_THICKNESS = 0.015
"""m: each paddle's width (y)."""
GAP = 0.01
"""m: between the robot's front (body or wheels) and the mast."""
GROUND_CLEARANCE = 0.02
"""m: the paddles' lower edges above level ground at lift height 0 (at their tips, with the robot at rest
and empty-handed)."""
MAST_MASS, CARRIAGE_MASS, PADDLE_MASS = 0.3, 0.3, 0.15
"""kg: the mast (fixed to the robot), the carriage and each paddle (what the lift carries: 0.6 kg)."""
PADDLE_FRICTION = 1.0
"""Friction coefficient of the paddles' pads; Bullet multiplies it by the other body's (a box's 0.6)."""
LIFT_SPEED = 0.15
"""m/s: the lift's top speed."""
LIFT_ACCELERATION = 0.5
"""m/s²: the lift speeds up and slows down at this rate (its motor follows a trapezoidal profile), so a
load's inertia adds at most 5 % to the grip a lift needs."""
PADDLE_SPEED = 0.1
"""m/s: each paddle's top speed while opening or closing."""
BEAM_AT = 0.4
"""Where the break beam crosses, as a share of the paddles' length from the carriage."""
LIFT, LEFT, RIGHT = 0, 1, 2
"""Joint (and link) indices of the gripper multibody: the carriage's lift, the left and right paddle."""


@dataclass(frozen=True)
class GripperGeometry:
    """Where the gripper's parts sit on the robot (body frame, m) and their sizes (m)."""

    mast_centre: np.ndarray
    """(3,) centre of the mast, body frame, at the gripper's base."""
    mast_size: np.ndarray
    carriage_size: np.ndarray
    paddle_size: np.ndarray
    lowest: float
    """z of the paddles' lower edges at lift height 0, body frame."""
    carriage_offset: np.ndarray
    """(3,) carriage centre at lift 0, relative to the mast centre."""
    paddle_offset: np.ndarray
    """(3,) left paddle centre when fully open, relative to the carriage centre (the right: y mirrored)."""


def gripper_geometry(settings: Gripper, vehicle: Vehicle) -> GripperGeometry:
    """The gripper's parts placed at the front of `vehicle`: the mast GAP in front of whichever reaches
    further forward, the body model or a wheel; the paddles' lower edges GROUND_CLEARANCE above the
    ground under the robot at rest (the wheels' lowest points raised by the suspension's static
    compression, g / (4 · stiffness), at most the travel)."""
    body_front = float(vehicle.body_mesh.bounds[1][0])
    wheel_front = max(float(w.centre[0]) + w.radius for w in vehicle.wheels.values())
    front = max(body_front, wheel_front)
    wheels = list(vehicle.wheels.values())
    stiffness = vehicle.dynamics.suspension_stiffness
    sag = min(GRAVITY / (len(wheels) * stiffness), vehicle.max_travel)
    ground = min(float(w.centre[2]) - w.radius for w in wheels) + sag
    # The gripper's weight ahead of the front axle loads the front springs and unloads the rear ones
    # (moments about each axle); the paddles' edges then sink by the line through both axles' extra
    # compression, extended to the paddles' tips. Each spring gives stiffness · mass newtons per metre.
    x_front = float(np.mean([w.centre[0] for w in wheels if w.front]))
    x_rear = float(np.mean([w.centre[0] for w in wheels if not w.front]))
    base = max(x_front - x_rear, 1e-3)
    mast_x = front + GAP + MAST_THICKNESS / 2
    carriage_x = mast_x + (MAST_THICKNESS + CARRIAGE_THICKNESS) / 2
    paddles_x = carriage_x + (CARRIAGE_THICKNESS + settings.paddle_length) / 2
    mass = MAST_MASS + CARRIAGE_MASS + 2 * PADDLE_MASS
    x_gripper = (MAST_MASS * mast_x + CARRIAGE_MASS * carriage_x + 2 * PADDLE_MASS * paddles_x) / mass
    weight = mass * GRAVITY
    per_metre = 2 * stiffness * vehicle.dynamics.mass  # each axle's two springs
    front_sink = weight * (x_gripper - x_rear) / base / per_metre
    rear_sink = -weight * (x_gripper - x_front) / base / per_metre
    tip = front + GAP + MAST_THICKNESS + CARRIAGE_THICKNESS + settings.paddle_length
    sink = rear_sink + (front_sink - rear_sink) * (tip - x_rear) / base
    lowest = ground + GROUND_CLEARANCE + max(0.0, min(sink, vehicle.max_travel))
    width = settings.max_opening + 2 * PADDLE_THICKNESS
    mast_height = settings.lift_travel + settings.paddle_height
    mast_centre = np.array([front + GAP + MAST_THICKNESS / 2, 0.0, lowest + mast_height / 2])
    carriage_offset = np.array([(MAST_THICKNESS + CARRIAGE_THICKNESS) / 2, 0.0,
                                (settings.paddle_height - mast_height) / 2])
    paddle_offset = np.array([CARRIAGE_THICKNESS / 2 + settings.paddle_length / 2,
                              (settings.max_opening + PADDLE_THICKNESS) / 2, 0.0])
    return GripperGeometry(
        mast_centre=mast_centre,
        mast_size=np.array([MAST_THICKNESS, width, mast_height]),
        carriage_size=np.array([CARRIAGE_THICKNESS, width, settings.paddle_height]),
        paddle_size=np.array([settings.paddle_length, PADDLE_THICKNESS, settings.paddle_height]),
        lowest=lowest, carriage_offset=carriage_offset, paddle_offset=paddle_offset)


class GripperBody:
    """The gripper of a robot in the pybullet world `client`: built at the front of `vehicle`, moved by
    `command`, read by `reading`."""

    def __init__(self, client: int, vehicle: Vehicle, settings: Gripper) -> None:
        self.client = client
        self.vehicle = vehicle
        self.settings = settings
        self.geometry = g = gripper_geometry(settings, vehicle)
        self.travel = settings.lift_travel
        """m: the lift's range, 0 to this."""
        self.closing_travel = settings.max_opening / 2
        """m: how far each paddle moves from open to touching the other."""
        self.open_command = True
        self.height_command = 0.0
        self._lift_target = 0.0
        """m: where the lift's motor is sent this step (the profile moving towards height_command)."""
        self._lift_speed = 0.0
        """m/s: the profile's speed now."""
        self.held_body: int | None = None
        """The pybullet body the gripper holds (fixed to the carriage by `_grasp`), or None."""
        self._grasp: int | None = None

        def box(size: np.ndarray) -> int:
            return p.createCollisionShape(p.GEOM_BOX, halfExtents=(size / 2).tolist(), physicsClientId=client)

        paddle = box(g.paddle_size)
        ry = g.paddle_offset * np.array([1.0, -1.0, 1.0])
        position, orientation = self._mast_world_pose()
        self.body_id = p.createMultiBody(
            baseMass=MAST_MASS, baseCollisionShapeIndex=box(g.mast_size),
            basePosition=position.tolist(), baseOrientation=orientation.tolist(),
            linkMasses=[CARRIAGE_MASS, PADDLE_MASS, PADDLE_MASS],
            linkCollisionShapeIndices=[box(g.carriage_size), paddle, paddle],
            linkVisualShapeIndices=[-1, -1, -1],
            linkPositions=[g.carriage_offset.tolist(), g.paddle_offset.tolist(), ry.tolist()],
            linkOrientations=[(0, 0, 0, 1)] * 3,
            linkInertialFramePositions=[(0, 0, 0)] * 3,
            linkInertialFrameOrientations=[(0, 0, 0, 1)] * 3,
            linkParentIndices=[0, 1, 1],
            linkJointTypes=[p.JOINT_PRISMATIC] * 3,
            linkJointAxis=[(0, 0, 1), (0, -1, 0), (0, 1, 0)],
            physicsClientId=client)
        p.changeDynamics(self.body_id, -1, linearDamping=0.0, angularDamping=0.0, physicsClientId=client)
        for link in (-1, LIFT, LEFT, RIGHT):
            p.setCollisionFilterGroupMask(self.body_id, link, ROBOT_COLLISION_GROUP, ROBOT_BODY_MASK,
                                          physicsClientId=client)
            p.changeDynamics(self.body_id, link, lateralFriction=PADDLE_FRICTION, physicsClientId=client)
        p.changeDynamics(self.body_id, LIFT, jointLowerLimit=0.0, jointUpperLimit=self.travel,
                         physicsClientId=client)
        for paddle_joint in (LEFT, RIGHT):
            p.changeDynamics(self.body_id, paddle_joint, jointLowerLimit=0.0, jointUpperLimit=self.closing_travel,
                             physicsClientId=client)
        # The mast is held to the chassis at its place in the body frame; the chassis' pybullet frame is its
        # centre of mass, cog_offset from the body model's origin.
        total = vehicle.dynamics.mass + MAST_MASS + CARRIAGE_MASS + 2 * PADDLE_MASS
        self.constraint = p.createConstraint(
            vehicle.body_id, -1, self.body_id, -1, p.JOINT_FIXED, (0, 0, 0),
            parentFramePosition=(g.mast_centre - vehicle.cog).tolist(), childFramePosition=(0, 0, 0),
            physicsClientId=client)
        p.changeConstraint(self.constraint, maxForce=1000.0 * total * GRAVITY, physicsClientId=client)
        self._drive()

    # --- commands ----------------------------------------------------------------------------------------

    def command(self, open: bool | None = None, height: float | None = None) -> None:
        """Open (True) or close (False) the paddles, and send the lift to `height` m above its lowest
        position (clamped to 0 .. lift travel); None keeps that command as it is."""
        if open is not None:
            self.open_command = bool(open)
        if height is not None:
            self.height_command = min(max(float(height), 0.0), self.travel)
        self._drive()

    def stop_lift(self) -> None:
        """Stop the lift as soon as it can: its command becomes where its profile comes to rest."""
        speed = self._lift_speed
        stopping = math.copysign(speed * speed / (2 * LIFT_ACCELERATION), speed)
        self.height_command = min(max(self._lift_target + stopping, 0.0), self.travel)

    def update(self, dt: float) -> None:
        """Before each physics step of `dt` s: take hold of what the closed paddles press on when the grip
        can carry it, let go when they open; move the lift's motor target along a trapezoidal profile
        (LIFT_SPEED, LIFT_ACCELERATION) towards the commanded height, stopping there."""
        if self.open_command:
            if self._grasp is not None:
                self._release()
        elif self._grasp is None:
            self._try_grasp()
        error = self.height_command - self._lift_target
        speed = self._lift_speed
        if abs(error) < 1e-9 and abs(speed) < 1e-9:
            return
        stopping = speed * speed / (2 * LIFT_ACCELERATION)
        wanted = math.copysign(LIFT_SPEED, error) if abs(error) > stopping + abs(speed) * dt else 0.0
        step = LIFT_ACCELERATION * dt
        speed = min(max(wanted, speed - step), speed + step)
        target = self._lift_target + speed * dt
        if (error > 0) == (target > self.height_command) or abs(error) < 1e-9:  # there (or past it): stop
            target, speed = self.height_command, 0.0
        self._lift_target, self._lift_speed = target, speed
        p.setJointMotorControl2(self.body_id, LIFT, p.POSITION_CONTROL, targetPosition=target, targetVelocity=speed,
                                force=self.settings.lift_force, physicsClientId=self.client)

    def grip_capacity(self, body: int) -> float:
        """The heaviest load (N, at rest) the closed paddles hold on `body` by friction: two paddles, each
        pressing with grip_force, each giving μ times that (μ: the paddles' friction times the body's, as
        Bullet combines them)."""
        friction = p.getDynamicsInfo(body, -1, physicsClientId=self.client)[1]
        return 2.0 * PADDLE_FRICTION * friction * self.settings.grip_force

    def _try_grasp(self) -> None:
        """Hold what both closed paddles press on when the grip can carry its weight while the lift
        speeds up: fix it to the carriage where it is, with a constraint whose force is limited to the
        grip's friction (so a load that grows past it still slips)."""
        body = self.held()
        if body is None:
            return
        client = self.client
        mass = p.getDynamicsInfo(body, -1, physicsClientId=client)[0]
        capacity = self.grip_capacity(body)
        if mass * (GRAVITY + LIFT_ACCELERATION) > capacity:
            return  # too heavy: friction alone acts, and the load slips as the lift rises
        carriage = p.getLinkState(self.body_id, LIFT, computeForwardKinematics=True, physicsClientId=client)
        position, orientation = p.getBasePositionAndOrientation(body, physicsClientId=client)
        inverse = p.invertTransform(carriage[0], carriage[1])
        local_position, local_orientation = p.multiplyTransforms(*inverse, position, orientation)
        self._grasp = p.createConstraint(self.body_id, LIFT, body, -1, p.JOINT_FIXED, (0, 0, 0),
                                         parentFramePosition=local_position, childFramePosition=(0, 0, 0),
                                         parentFrameOrientation=local_orientation, physicsClientId=client)
        p.changeConstraint(self._grasp, maxForce=capacity, physicsClientId=client)
        self.held_body = body

    def _release(self) -> None:
        if self._grasp is not None:
            p.removeConstraint(self._grasp, physicsClientId=self.client)
        self._grasp = self.held_body = None

    def _drive(self) -> None:
        """Set the joint motors to the commands: position motors with their force and speed limits."""
        client, body = self.client, self.body_id
        p.setJointMotorControl2(body, LIFT, p.POSITION_CONTROL, targetPosition=self._lift_target,
                                targetVelocity=self._lift_speed, force=self.settings.lift_force,
                                physicsClientId=client)
        target = 0.0 if self.open_command else self.closing_travel
        for joint in (LEFT, RIGHT):
            p.setJointMotorControl2(body, joint, p.POSITION_CONTROL, targetPosition=target,
                                    force=self.settings.grip_force, maxVelocity=PADDLE_SPEED,
                                    physicsClientId=client)

    # --- pose ----------------------------------------------------------------------------------------------

    def _mast_world_pose(self) -> tuple[np.ndarray, np.ndarray]:
        position, orientation = self.vehicle.pose()
        rotation = np.asarray(p.getMatrixFromQuaternion(orientation.tolist())).reshape(3, 3)
        return position + rotation @ self.geometry.mast_centre, orientation

    def reset(self) -> None:
        """Back on the robot (after the robot was put back at its start pose), open and lowered, at rest."""
        position, orientation = self._mast_world_pose()
        client = self.client
        p.resetBasePositionAndOrientation(self.body_id, position.tolist(), orientation.tolist(),
                                          physicsClientId=client)
        p.resetBaseVelocity(self.body_id, (0, 0, 0), (0, 0, 0), physicsClientId=client)
        for joint in (LIFT, LEFT, RIGHT):
            p.resetJointState(self.body_id, joint, 0.0, 0.0, physicsClientId=client)
        self._release()
        self.open_command, self.height_command = True, 0.0
        self._lift_target = self._lift_speed = 0.0
        self._drive()

    def part_poses(self) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """World position, orientation (x, y, z, w) and size (m) of each box the gripper is made of: the
        mast, the carriage, the left and the right paddle (for drawing)."""
        client, body = self.client, self.body_id
        pos, orn = p.getBasePositionAndOrientation(body, physicsClientId=client)
        out = [(np.asarray(pos), np.asarray(orn), self.geometry.mast_size)]
        sizes = (self.geometry.carriage_size, self.geometry.paddle_size, self.geometry.paddle_size)
        for link, size in zip((LIFT, LEFT, RIGHT), sizes, strict=True):
            state = p.getLinkState(body, link, computeForwardKinematics=True, physicsClientId=client)
            out.append((np.asarray(state[4]), np.asarray(state[5]), size))
        return out

    def meshes(self) -> list[trimesh.Trimesh]:
        """A box mesh per part, in part_poses() order, centred on the part (for drawing)."""
        import trimesh

        return [trimesh.creation.box(extents=size) for *_, size in self.part_poses()]

    # --- reading -------------------------------------------------------------------------------------------

    def height(self) -> float:
        """Lift height now, m above the lowest position."""
        return float(p.getJointState(self.body_id, LIFT, physicsClientId=self.client)[0])

    def opening(self) -> float:
        """Gap between the paddles' inner faces now, m."""
        left = p.getJointState(self.body_id, LEFT, physicsClientId=self.client)[0]
        right = p.getJointState(self.body_id, RIGHT, physicsClientId=self.client)[0]
        return max(0.0, self.settings.max_opening - left - right)

    def beam(self) -> bool:
        """Whether the break beam between the paddles is broken (by anything between them)."""
        client, body = self.client, self.body_id
        g = self.geometry
        along = -g.paddle_size[0] / 2 + BEAM_AT * g.paddle_size[0]
        ends = []
        for link, side in ((LEFT, -1.0), (RIGHT, 1.0)):
            state = p.getLinkState(body, link, computeForwardKinematics=True, physicsClientId=client)
            rotation = np.asarray(p.getMatrixFromQuaternion(state[5])).reshape(3, 3)
            # The paddle's inner face: towards the other paddle (-y for the left one).
            local = np.array([along, side * (PADDLE_THICKNESS / 2 + 1e-4), 0.0])
            ends.append((np.asarray(state[4]) + rotation @ local).tolist())
        if math.dist(ends[0], ends[1]) < 1e-4:
            return False
        hit = p.rayTest(ends[0], ends[1], physicsClientId=client)[0]
        return hit[0] >= 0

    def held(self) -> int | None:
        """The body both paddles press on (what the gripper holds), or None."""
        client, body = self.client, self.body_id
        touched = []
        for link in (LEFT, RIGHT):
            contacts = p.getContactPoints(bodyA=body, linkIndexA=link, physicsClientId=client)
            touched.append({c[2] for c in contacts if c[9] > 0.0})
        # Only what can move is held: the ground or a wall both paddles touch is not.
        common = {b for b in touched[0] & touched[1]
                  if p.getDynamicsInfo(b, -1, physicsClientId=client)[0] > 0 and b != self.vehicle.body_id}
        return min(common) if common else None

    def reading(self) -> GripperReading:
        """The gripper's sensors now: break beam, opening, lift height, holding."""
        return GripperReading(beam=self.beam(), opening=self.opening(), height=self.height(),
                              holding=self.held_body is not None)
