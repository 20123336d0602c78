"""A four-wheel raycast vehicle on pybullet, after Bullet's btRaycastVehicle.

Why a raycast vehicle of our own rather than wheel and suspension joints: the six Vehicle Dynamics
fields of a SEAR project (mass, engine force, brake, suspension stiffness, compression, damping) and
friction slip are defined by btRaycastVehicle, the vehicle the original SEAR used through jMonkeyEngine.
Re-implementing its update (bullet3 src/BulletDynamics/Vehicle/btRaycastVehicle.cpp) gives those fields
exactly their established meaning, where a jointed model would need a translation that changes the
behaviour users tuned for. It is also cheaper and steadier than four revolute joints rolling on a
triangle mesh: one rigid chassis, four rays a step (one batch), and forces. The arithmetic of the update
(everything between the rays and the forces) is sear.physics.tyre's, a pure function compiled by numba.

Each physics step, before `stepSimulation`:
- a ray per wheel is cast from its suspension hard point straight down the chassis (length rest length
  plus wheel radius); the suspension length is the hit distance minus the radius, clamped to the travel;
- suspension force N = stiffness * compression length * chassis mass, minus damping * closing speed *
  mass (the `suspension_compression` coefficient while the wheel moves up, `suspension_damping` while
  it moves down), never pulling; applied along the contact normal at the contact point. Stiffness and
  both damping coefficients are therefore per kg of chassis mass (1/s² and 1/s), as in Bullet;
- the tyres: a friction-circle (Coulomb) model, solved as impulses, described below.

The tyre model. A tyre's contact patch can pass to the ground a force in the ground plane of at most
μ·N (μ = `friction_slip`, N = that wheel's suspension force): the friction circle, the envelope of the
brush model and of Pacejka's combined-slip curves at full slip (Pacejka, Tyre and Vehicle Dynamics,
ch. 3, and Milliken & Milliken, Race Car Vehicle Dynamics, ch. 2), with Coulomb friction's static
branch inside it: while the force needed to stop the patch sliding is inside the circle, the patch
does not slide. Per wheel in contact the update finds two impulses over the step, along the rolling
direction and along the axle:
- sideways: the impulse that brings the patch's sideways velocity at the end of the step to zero;
- along the wheel: a driven wheel pushes with its share of the engine force * dt; a wheel not driven
  gets the impulse that brings its rolling-direction velocity to zero, but at most (brake force / 4 +
  rolling resistance * N) * dt: a braked wheel holds like a sideways one, a free one only rolls
  against rolling resistance (`Dynamics.rolling_resistance`, which Bullet lacks: its vehicles roll for
  ever and creep after any bump; real ones stop);
- the pair is then scaled down together onto the circle of radius μ * N * dt when it lies outside:
  the tyre skids, and the forces it passes are at their Coulomb limit (the skid share is Bullet's
  skidInfo).
"The velocity at the end of the step" is that of the chassis after gravity, the suspension forces and
every wheel's friction impulse: the four wheels act on one rigid body, so their impulses are solved
together by projected Gauss-Seidel (as a rigid-body contact solver does; Catto, Iterative Dynamics
with Temporal Coherence, GDC 2005), each row with the chassis' effective mass at the contact (its mass
and inertia seen along that direction at that point), warm-started from the last step. An impulse
computed that way stops the sliding and no more, so a parked robot does not chatter; and the sum over
the wheels never exceeds μ·ΣN, so no robot accelerates or brakes harder than μ·g on flat ground.
Bullet's btRaycastVehicle instead removes 20 % of the sideways momentum per step (a damper: no static
friction, so a braked robot crept down slopes) and weighs the forward impulse by 0.5 in its friction
test (`fwdFactor`, which let a tyre pass twice μ·N forward); both are gone here.

The drive model (`Dynamics.drive_type`, sear.drives) says which wheels steer, which are driven and which
are casters, and turns the inputs into each wheel's drive force and steering angle when they change. The
four wheels are given to it as places: left or right, and the two front slots steerable (car: they steer,
Ackermann; differential: they are its casters). A driven wheel pushes with its force; a caster (a
swivelling wheel or ball wheel) carries its load and passes to the ground at most rolling resistance times
it, in any direction, as a caster that turns to follow its motion does, and has no brake: with casters,
nothing holds the robot sideways but the driven wheels, and it turns about the middle of their axle, as a
two-motor robot does.

Wheel motors (`Dynamics.motor_*`, sear.motors): without them a driven wheel's force is the drive model's
and holds until the inputs change. With them the inputs set each driven wheel's duty (its force over its
share of the engine force) and every step its force is the DC motor's torque at the wheel's rolling speed
over its radius (`_motor_forces`), so a robot tops out where its motors' torque meets the load.

The chassis collides with obstacles through the convex hull of the body model. The wheels roll on their
rays, and each also has a collision cylinder (radius and width from its model, axle along y): a massless
link fixed to the chassis, so the robot stays one rigid body whose mass and inertia are the chassis'. The
cylinders meet obstacles and other robots (a post in a wheel's path, another robot's wheel), never the
terrain (sear.collision.WHEEL_COLLISION_GROUP): the rays carry the load. Fixed to the chassis, a cylinder cannot
follow its suspension; it sits at the wheel's height at rest (`_wheel_body_centres`).

Brake differs from Bullet in one way: Bullet takes the brake value as an impulse per step, which makes
it depend on the step rate; here it is a force in newtons (impulse = force * dt).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pybullet as p

from sear.collision import (
    NOT_ROBOTS_MASK,
    ROBOT_BODY_MASK,
    ROBOT_COLLISION_GROUP,
    WHEEL_BODY_MASK,
    WHEEL_COLLISION_GROUP,
)
from sear.drives.base import WheelPlace
from sear.gravity import GRAVITY
from sear.motors import GearMotor, motor_of
from sear.physics import tyre
from sear.physics.inputs import DriveInputs
from sear.project import WHEEL_IDS, Dynamics
from sear.state import VehicleState

if TYPE_CHECKING:
    import trimesh

# For the per-step update: the same values as the expressions they stand for, computed once.
WHEEL_RAY_MASK = NOT_ROBOTS_MASK
"""The wheels' rays' collision mask: they roll on the ground and obstacles, never on a robot."""
_NO_HIT = (0.0,) * tyre.HIT
_base_pose = p.getBasePositionAndOrientation
_base_velocity = p.getBaseVelocity
_matrix_from_quaternion = p.getMatrixFromQuaternion
_ray_test_batch = p.rayTestBatch
_apply_force = p.applyExternalForce
_apply_torque = p.applyExternalTorque
_WORLD_FRAME = p.WORLD_FRAME
WHEEL_BODY_CLEARANCE = 0.05
"""How far a wheel's collision cylinder's bottom stands above the ground at rest, as a share of its radius
(see Vehicle._wheel_body_centres): clear of what the wheel rolls on, low enough to meet a low box."""
_AXLE_ALONG_Y = (math.sin(math.pi / 4), 0.0, 0.0, math.cos(math.pi / 4))
"""A quarter turn about x: a pybullet cylinder's axis (z) onto the wheel's axle (the body's y)."""


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Cross product of 3-vectors (..., 3); a fraction of np.cross's cost for small arrays."""
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    return np.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=-1)


def _rotate(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Rotate vector(s) v (…,3) by the unit quaternion q = (x, y, z, w)."""
    u, w = q[:3], q[3]
    t = 2.0 * _cross(u, v)
    return v + w * t + _cross(u, t)


@dataclass
class WheelGeometry:
    """Where a wheel sits and how big it is (body frame, metres)."""

    wheel_id: str
    centre: np.ndarray
    """Wheel centre at suspension rest length, body frame."""
    radius: float
    width: float
    front: bool
    left: bool


@dataclass(slots=True)
class WheelState:
    """Per-wheel results of the last update (world frame)."""

    in_contact: bool = False
    suspension_length: float = 0.0
    hit_point: tuple[float, float, float] | None = None
    """Contact point as pybullet's ray test gave it, m; None off the ground. A tuple because the update
    stores it every step and arrays are wanted only now and then (`contact_point`)."""
    hit_normal: tuple[float, float, float] | None = None
    """Ground normal at the contact as pybullet gave it (unit); None off the ground."""
    suspension_force: float = 0.0
    rotation: float = 0.0
    delta_rotation: float = 0.0
    steering: float = 0.0
    skid: float = 1.0

    @property
    def contact_point(self) -> np.ndarray | None:
        """Contact point, world frame, m (a new array each time); None off the ground."""
        return None if self.hit_point is None else np.asarray(self.hit_point)

    @property
    def contact_normal(self) -> np.ndarray | None:
        """Ground normal at the contact, world frame, unit (a new array each time); None off the ground."""
        return None if self.hit_normal is None else np.asarray(self.hit_normal)


class Vehicle(DriveInputs):
    """The robot: one rigid chassis with four raycast wheels, in the pybullet world `client`."""

    def __init__(
        self,
        client: int,
        body_mesh: trimesh.Trimesh,
        wheel_meshes: dict[str, trimesh.Trimesh],
        wheel_positions: dict[str, tuple[float, float, float] | None],
        dynamics: Dynamics,
        position: tuple[float, float, float],
        orientation: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 1.0),
    ) -> None:
        """Build the chassis at `position`/`orientation` (the body model frame, world coordinates).

        `wheel_positions[id]` is the wheel centre in the body frame, or None to take the centre of the
        wheel model's bounding box (models exported in place on the body)."""
        self.client = client
        self.dynamics = dynamics
        self.body_mesh = body_mesh
        self.wheel_meshes = {}
        self.wheels: dict[str, WheelGeometry] = {}
        for wid in WHEEL_IDS:
            mesh = wheel_meshes[wid]
            lo, hi = mesh.bounds
            centre_model = (lo + hi) / 2.0
            given = wheel_positions.get(wid)
            centre = np.asarray(given if given is not None else centre_model, dtype=float)
            # The wheel's own mesh, recentred so the window can draw it at the wheel transform.
            local = mesh.copy()
            local.apply_translation(-centre_model)
            self.wheel_meshes[wid] = local
            extents = hi - lo
            radius = float(max(extents[0], extents[2]) / 2.0)
            width = float(extents[1])
            self.wheels[wid] = WheelGeometry(wid, centre, radius, width, front="front" in wid, left="left" in wid)
        self.wheel_radius = float(np.mean([w.radius for w in self.wheels.values()]))
        self.rest_length = dynamics.suspension_rest_length or self.wheel_radius
        self.max_travel = dynamics.max_suspension_travel or self.rest_length
        self.cog = np.asarray(dynamics.cog_offset, dtype=float)
        fronts = [w.centre[0] for w in self.wheels.values() if w.front]
        rears = [w.centre[0] for w in self.wheels.values() if not w.front]
        self.wheelbase = max(float(np.mean(fronts) - np.mean(rears)), 1e-3)

        from sear.physics.meshes import convex_collision_shape

        shape = convex_collision_shape(client, body_mesh)
        self.wheel_body_centres = self._wheel_body_centres()
        """Each wheel's collision cylinder's centre, body frame, m (in WHEEL_IDS order)."""
        wheel_shapes = [p.createCollisionShape(p.GEOM_CYLINDER, radius=self.wheels[wid].radius,
                                               height=self.wheels[wid].width, physicsClientId=client)
                        for wid in WHEEL_IDS]
        count = len(WHEEL_IDS)
        self.body_id = p.createMultiBody(
            baseMass=dynamics.mass, baseCollisionShapeIndex=shape,
            basePosition=position, baseOrientation=orientation,
            baseInertialFramePosition=tuple(self.cog),
            # The wheels' bodies: massless links fixed to the chassis, their cylinders' axes along y.
            linkMasses=[0.0] * count, linkCollisionShapeIndices=wheel_shapes,
            linkVisualShapeIndices=[-1] * count,
            linkPositions=[tuple(float(v) for v in c) for c in self.wheel_body_centres],  # parent link frame
            linkOrientations=[_AXLE_ALONG_Y] * count,
            linkInertialFramePositions=[(0.0, 0.0, 0.0)] * count,
            linkInertialFrameOrientations=[(0.0, 0.0, 0.0, 1.0)] * count,
            linkParentIndices=[0] * count, linkJointTypes=[p.JOINT_FIXED] * count,
            linkJointAxis=[(0.0, 0.0, 0.0)] * count, physicsClientId=client,
        )
        # No damping of our own: every force on the chassis is modelled.
        p.changeDynamics(self.body_id, -1, linearDamping=0.0, angularDamping=0.0, lateralFriction=0.5,
                         physicsClientId=client)
        p.setCollisionFilterGroupMask(self.body_id, -1, ROBOT_COLLISION_GROUP, ROBOT_BODY_MASK, physicsClientId=client)
        for link in range(count):  # frictionless: a wheel turns on its axle, what meets its rim turns it
            p.changeDynamics(self.body_id, link, lateralFriction=0.0, physicsClientId=client)
            p.setCollisionFilterGroupMask(self.body_id, link, WHEEL_COLLISION_GROUP, WHEEL_BODY_MASK,
                                          physicsClientId=client)
        info = p.getDynamicsInfo(self.body_id, -1, physicsClientId=client)
        self._inv_inertia_local = np.array([1.0 / i if i > 0 else 0.0 for i in info[2]])
        self._state = {wid: WheelState() for wid in WHEEL_IDS}
        self._states = [self._state[wid] for wid in WHEEL_IDS]
        self._geoms = [self.wheels[wid] for wid in WHEEL_IDS]
        self._radii = np.array([g.radius for g in self._geoms])
        self._hard_points = np.array([g.centre + np.array([0.0, 0.0, self.rest_length]) for g in self._geoms])
        self._ray_lengths = self.rest_length + self._radii
        # Plain-float copies for the per-step update.
        self._inv_inertia_tuple = tuple(float(v) for v in self._inv_inertia_local)
        self._cog_tuple = tuple(float(v) for v in self.cog)
        self._wheel_radii = {wid: w.radius for wid, w in self.wheels.items()}
        self.engine_force = 0.0
        self.brake_force = 0.0
        self.steering = 0.0
        self._turn = 0.0
        self._sides: tuple[float, float] | None = None
        """Left and right side forces (N) set by drive(); None: engine force and steering drive."""
        self.drive_model = self.make_drive_model([WheelPlace(left=g.left, steerable=g.front, front_slot=g.front)
                                                  for g in self._geoms])
        self.caster_trail = dynamics.caster_trail
        """m: the swivel casters' offset (their wheel behind their swivel axis), or None: ball transfers."""
        self._swivels = [0.0 if caster and self.caster_trail else None for caster in self.drive_model.casters]
        """Per wheel: a swivel caster's wheel heading on the chassis (rad from forward, positive left), or None."""
        self._braked_wheels = float(max(1, self.drive_model.casters.count(False)))
        """How many wheels share the brake force: every wheel but the casters."""
        self.motor: GearMotor | None = motor_of(dynamics)
        """Each driven wheel's DC gearmotor (sear.motors), or None: the drive inputs are forces."""
        self._duties = [0.0] * tyre.WHEELS
        """With a motor: each wheel's duty, -1 to 1, from the inputs (0: coasting, or not driven)."""
        self._motor_mass = dynamics.mass / max(1, sum(self.drive_model.driven))
        """kg: the chassis mass per driven wheel, for the motor step's guard (`_motor_forces`)."""
        self.distance = 0.0
        self._kernels: tyre.Kernels | None = None
        """The tyre kernels of the last update (sear.physics.tyre.kernels: plain Python, then numba's)."""
        self._arrays = False
        """Whether the kernels are numba's, which take float arrays (the plain Python ones take lists)."""
        self._steerings = [0.0] * tyre.WHEELS
        """Each wheel's steering angle, rad, from the drive model (set with the inputs)."""
        self._chassis: Any = ()
        """The chassis state this step's kernels take (sear.physics.tyre's `body`), set by wheel_rays."""
        self._com: tuple[float, float, float] = (0.0, 0.0, 0.0)
        """The centre of mass this step (world, m), where the forces apply; set by wheel_rays."""
        self._batch: WheelBatch | None = None
        """The world's WheelBatch that steps this vehicle, which keeps its wheels' states (`_wheels_now`)."""
        self._row = 0
        """This vehicle's row in the batch's arrays."""
        self._synced = -1
        """The batch's step whose results the WheelStates hold."""
        self._buffers()
        self._inputs_changed()

    def _wheel_body_centres(self) -> list[np.ndarray]:
        """Where each wheel's collision cylinder sits on the chassis, body frame, m.

        The cylinder is fixed to the chassis, while the wheel it stands for rides up by the suspension's
        compression c. Fixed at the wheel's rest centre it would reach c into the ground; it is raised
        instead by the compression that carries the robot's weight at rest, shared by the four wheels
        (k·c·m = m·g/4, so c = g / (4·k), k the suspension stiffness per kg), at most the travel, and by
        WHEEL_BODY_CLEARANCE of the radius more. Its bottom then stands just clear of whatever the wheel
        rolls on, and its front and sides reach as far as the wheel's at that height. The terrain is left
        out of its collisions (sear.collision.WHEEL_BODY_MASK) in any case: the rays carry the load."""
        stiffness = self.dynamics.suspension_stiffness
        static = GRAVITY / (4.0 * stiffness) if stiffness > 0 else self.max_travel
        rise = min(static, self.max_travel)
        return [self.wheels[wid].centre + np.array([0.0, 0.0, rise + WHEEL_BODY_CLEARANCE * self.wheels[wid].radius])
                for wid in WHEEL_IDS]

    # --- inputs ----------------------------------------------------------------------------------

    def brake(self, force: float) -> None:
        """Total brake force, N (>= 0), shared by the wheels that are not casters."""
        self.brake_force = max(0.0, float(force))

    # --- pose --------------------------------------------------------------------------------------

    def _com_pose(self) -> tuple[np.ndarray, np.ndarray]:
        pos, orn = p.getBasePositionAndOrientation(self.body_id, physicsClientId=self.client)
        return np.asarray(pos), np.asarray(orn)

    def pose(self) -> tuple[np.ndarray, np.ndarray]:
        """Position and orientation (x, y, z, w) of the body model frame in the world."""
        com, orn = self._com_pose()
        return com - _rotate(orn, self.cog), orn

    def reset(self, position: tuple[float, float, float], orientation: tuple[float, float, float, float]) -> None:
        """Put the body model frame at `position`/`orientation`, at rest, with inputs released."""
        orn = np.asarray(orientation, dtype=float)
        com = np.asarray(position, dtype=float) + _rotate(orn, self.cog)
        p.resetBasePositionAndOrientation(self.body_id, com.tolist(), orn.tolist(), physicsClientId=self.client)
        p.resetBaseVelocity(self.body_id, [0, 0, 0], [0, 0, 0], physicsClientId=self.client)
        self.engine_force = self.brake_force = self.steering = self._turn = 0.0
        self._sides = None
        self._swivels = [None if heading is None else 0.0 for heading in self._swivels]  # trailing, forward
        self._inputs_changed()
        for state in self._wheels_now():
            state.in_contact, state.delta_rotation = False, 0.0
        if self._batch is not None:
            self._batch.delta[self._row] = 0.0
        self._impulses[:] = [0.0] * (2 * tyre.WHEELS)

    def state(self, time: float = 0.0) -> VehicleState:
        """Ground truth of the body model frame (world frame, SI). Float arithmetic: it runs every step."""
        (cx, cy, cz), orn = p.getBasePositionAndOrientation(self.body_id, physicsClientId=self.client)
        (vx, vy, vz), (wx, wy, wz) = p.getBaseVelocity(self.body_id, physicsClientId=self.client)
        gx, gy, gz = self._cog_tuple
        if gx or gy or gz:
            r00, r01, r02, r10, r11, r12, r20, r21, r22 = p.getMatrixFromQuaternion(orn)
            # Offset from the centre of mass to the model origin, and that point's velocity v + w x r.
            ox = -(r00 * gx + r01 * gy + r02 * gz)
            oy = -(r10 * gx + r11 * gy + r12 * gz)
            oz = -(r20 * gx + r21 * gy + r22 * gz)
            cx, cy, cz = cx + ox, cy + oy, cz + oz
            vx, vy, vz = vx + wy * oz - wz * oy, vy + wz * ox - wx * oz, vz + wx * oy - wy * ox
        return VehicleState(
            time=time, position=np.array((cx, cy, cz)), orientation=np.array(orn),
            linear_velocity=np.array((vx, vy, vz)), angular_velocity=np.array((wx, wy, wz)),
            wheel_angles=dict(zip(WHEEL_IDS, self._wheel_angles(), strict=True)),
            wheel_radii=dict(self._wheel_radii),
            steering=self.steering,
        )

    def wheel_transforms(self) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """World position and orientation (x, y, z, w) of each wheel, with its steering and spin."""
        pos, orn = self.pose()
        out = {}
        self._wheels_now()
        for wid, geom in self.wheels.items():
            state = self._state[wid]
            centre = geom.centre + np.array([0.0, 0.0, self.rest_length - state.suspension_length]) \
                if state.in_contact else geom.centre.copy()
            world = pos + _rotate(orn, centre)
            steer = p.getQuaternionFromEuler((0.0, 0.0, state.steering))
            spin = p.getQuaternionFromEuler((0.0, state.rotation, 0.0))
            local = p.multiplyTransforms((0, 0, 0), steer, (0, 0, 0), spin)[1]
            out[wid] = (world, np.asarray(p.multiplyTransforms(pos, orn, (0, 0, 0), local)[1]))
        return out

    def wheel_states(self) -> dict[str, WheelState]:
        """Contact, suspension and skid of each wheel after the last update (for debugging and tests)."""
        self._wheels_now()
        return self._state

    def _wheel_angles(self) -> list[float]:
        """Each wheel's rotation (rad, WHEEL_IDS order): read every step a robot's state is, so from a
        WheelBatch's arrays directly, without filling the WheelStates."""
        batch = self._batch
        if batch is not None and self._synced != batch.steps:
            return batch.rotation[self._row].tolist()
        return [state.rotation for state in self._states]

    def _wheels_now(self) -> list[WheelState]:
        """The wheels' states (WHEEL_IDS order) after the last step: a WheelBatch keeps them in its arrays
        and they are copied into the WheelState objects only when read."""
        batch = self._batch
        if batch is not None and self._synced != batch.steps:
            self._synced = batch.steps
            batch.sync(self)
        return self._states

    # --- the update --------------------------------------------------------------------------------

    def _inputs_changed(self) -> None:
        """Work out what the update needs per wheel from the inputs, only when they change: the drive
        model's steering angles (Ackermann: a tan and an atan each) and their sine and cosine, and its
        drive forces.

        Per wheel, in WHEEL_IDS order: radius (m), ray length (m), steering (rad), its sine and cosine,
        engine force (N), and whether it is a caster. Every setter of engine_force, steering, _turn or
        _sides must call this."""
        model = self.drive_model
        inputs: list[float] = []
        steerings: list[float] = []
        for geom, length, force, steered, caster in zip(
                self._geoms, self._ray_lengths, self._wheel_forces(), model.steered, model.casters, strict=True):
            steering = model.steer_angle(self.steering, self.wheelbase, float(geom.centre[1])) if steered else 0.0
            kind = 0.0
            if caster:
                swivel = self._swivels[len(steerings)]
                kind = tyre.BALL_CASTER if swivel is None else tyre.SWIVEL_CASTER
                steering = steering if swivel is None else swivel
            steerings.append(steering)
            inputs += (geom.radius, float(length), math.sin(steering), math.cos(steering), force, kind)
        self._steerings = steerings
        self._wheels_in[:] = inputs
        if self.motor is not None:
            # The inputs are a duty: a wheel's force over its share of the full engine force.
            full = self.dynamics.engine_force / max(1, sum(model.driven))
            self._duties = [max(-1.0, min(1.0, force / full)) if full > 0 else math.copysign(1.0, force) if force
                            else 0.0 for force in self._wheel_forces()]
        self._set_dynamics()

    def _buffers(self) -> None:
        """The tyre kernels' inputs, outputs and scratch (sear.physics.tyre lays them out): numpy float
        arrays for numba's kernels, lists of floats for the plain Python ones (which index lists faster).
        Built anew, with the values they held, when the kernels are chosen."""
        def buffer(values: Any) -> Any:
            values = [float(v) for v in values]
            return np.array(values) if self._arrays else values

        old = getattr(self, "_wheels_in", None)
        self._wheels_in = buffer([0.0] * (tyre.WHEEL_IN * tyre.WHEELS) if old is None else old)
        old = getattr(self, "_impulses", None)
        self._impulses = buffer([0.0] * (2 * tyre.WHEELS) if old is None else old)
        """Last step's friction impulses per wheel (forward, sideways), N·s: the solver's warm start."""
        self._params = buffer([0.0] * tyre.PARAMS)
        self._hard_points_flat = buffer(self._hard_points.ravel())
        self._ray_buffer = buffer([0.0] * (6 * tyre.WHEELS))
        self._out = buffer([0.0] * (tyre.OUT_BODY + tyre.OUT_WHEEL * tyre.WHEELS))
        self._work = buffer([0.0] * (tyre.WORK * tyre.WHEELS))
        self._set_dynamics()

    def _set_dynamics(self) -> None:
        """The kernel's parameters that the dynamics fix (the inputs set the brake's every step)."""
        dyn = self.dynamics
        rest, travel = self.rest_length, self.max_travel
        params = self._params
        params[tyre.P_INV_INERTIA:tyre.P_INV_INERTIA + 3] = self._inv_inertia_tuple
        params[tyre.P_MASS] = dyn.mass
        params[tyre.P_STIFFNESS] = dyn.suspension_stiffness
        params[tyre.P_COMPRESSION] = dyn.suspension_compression
        params[tyre.P_DAMPING] = dyn.suspension_damping
        params[tyre.P_ROLLING] = dyn.rolling_resistance
        params[tyre.P_FRICTION] = dyn.friction_slip
        params[tyre.P_REST], params[tyre.P_SHORTEST], params[tyre.P_LONGEST] = rest, rest - travel, rest + travel
        params[tyre.P_COG:tyre.P_COG + 3] = self._cog_tuple

    def update(self, dt: float) -> None:
        """Cast the suspension rays and apply this step's suspension, drive and friction forces.

        Six pybullet calls a step (the chassis pose, its velocity, the rotation matrix, one batch of four
        rays, the force, the torque); the arithmetic between them is sear.physics.tyre's, run as plain
        Python at first and compiled by numba once the process has run enough updates to pay for loading
        it (sear.physics.tyre.COMPILE_AFTER). A world with several vehicles casts all their rays in one
        batch instead: `wheel_rays`, one `rayTestBatch`, then each vehicle's `apply_wheel_hits`."""
        starts, ends = self.wheel_rays(dt)
        self.apply_wheel_hits(_ray_test_batch(starts, ends, collisionFilterMask=WHEEL_RAY_MASK,
                                              physicsClientId=self.client))

    def wheel_rays(self, dt: float) -> tuple[Any, Any]:
        """The first half of `update` (a step of `dt` s): the chassis' state, and the four suspension rays
        to cast, as their starts and ends (world frame, m; each a sequence of four 3-sequences), with the
        collision mask WHEEL_RAY_MASK. `apply_wheel_hits` must follow, with their hits, before the step."""
        kernels = self._choose_kernels()
        wheel_rays = kernels[1]
        chassis = self._chassis_step(dt)
        params = self._params
        rays = self._ray_buffer
        if self._arrays:
            self._chassis = np.array(chassis)
            wheel_rays(self._chassis, params, self._hard_points_flat, self._wheels_in, rays)
            return rays[:12].reshape(4, 3), rays[12:].reshape(4, 3)
        self._chassis = chassis
        wheel_rays(chassis, params, self._hard_points_flat, self._wheels_in, rays)
        return [rays[0:3], rays[3:6], rays[6:9], rays[9:12]], [rays[12:15], rays[15:18], rays[18:21], rays[21:24]]

    def _choose_kernels(self) -> tyre.Kernels:
        """The tyre kernels for this update (sear.physics.tyre.kernels), the buffers made for them when
        they change (the first update, or numba's kernels are loaded)."""
        kernels = tyre.kernels()
        if kernels != self._kernels:
            self._kernels, self._arrays = kernels, tyre.uses_arrays(kernels)
            self._buffers()
        return kernels

    def _chassis_step(self, dt: float) -> tuple[float, ...]:
        """The chassis' state for this step of `dt` s as the kernels take it (sear.physics.tyre's `body`),
        with what it sets before the kernels run: the motors' forces, the swivels' headings, the brake."""
        pos, orn = _base_pose(self.body_id, physicsClientId=self.client)
        lin, ang = _base_velocity(self.body_id, physicsClientId=self.client)
        chassis = (*pos, *lin, *ang, *_matrix_from_quaternion(orn))
        self._com = pos
        if self.motor is not None:
            self._motor_forces(chassis, dt)
        if self.caster_trail:
            self._swivel(chassis, dt)
        brake = self.brake_force
        params = self._params
        params[tyre.P_BRAKE_EACH] = brake / self._braked_wheels  # casters have no brake
        params[tyre.P_BRAKING] = 1.0 if brake > 0 else 0.0
        params[tyre.P_DT] = dt
        return chassis

    def _bind_rows(self, params: np.ndarray, wheels: np.ndarray, impulses: np.ndarray,
                   hard_points: np.ndarray) -> None:
        """Keep the kernels' parameters, wheel inputs, warm-start impulses and hard points in these rows
        of a WheelBatch's arrays (their values copied in), so the batch's kernels read and write them in
        place. The vehicle must use compiled kernels (numpy buffers), which it then keeps."""
        self._choose_kernels()
        assert self._arrays, "a WheelBatch needs the compiled tyre kernels"
        params[:], wheels[:], impulses[:], hard_points[:] = (self._params, self._wheels_in, self._impulses,
                                                             self._hard_points_flat)
        self._params, self._wheels_in, self._impulses, self._hard_points_flat = params, wheels, impulses, hard_points

    def _join(self, batch: WheelBatch, row: int) -> None:
        """From now on `batch` steps this vehicle (its row `row`) and keeps its wheels' states."""
        self._batch, self._row, self._synced = batch, row, batch.steps

    def _motor_forces(self, chassis: Sequence[float], dt: float) -> None:
        """Each motor-driven wheel's drive force for this step (N, into the kernels' inputs) from its duty
        and its speed: the motor's torque at the wheel's rolling speed (the ground speed of the wheel
        centre along the wheel, over its radius) over the radius. The wheels have no inertia of their own,
        so a wheel turns at its ground speed; one pushed past its grip slides, and the tyre passes its
        Coulomb limit, which is what a spinning wheel passes too.

        The force is stepped explicitly, so a motor far stiffer than the chassis per wheel can carry
        (T_ws/(ω_w0·r²)·dt > m/n) would overshoot its speed each step: the force is kept to what takes the
        chassis' share of mass to the duty's no-load speed within the step, never past it."""
        motor = self.motor
        assert motor is not None
        stall, no_load = motor.wheel_stall_torque, motor.wheel_no_load_speed
        vx, vy, vz, wx, wy, wz = chassis[3:9]
        r00, r01, r02, r10, r11, r12, r20, r21, r22 = chassis[9:18]
        gx, gy, gz = self._cog_tuple
        wheels_in, mass = self._wheels_in, self._motor_mass
        for index, (geom, duty) in enumerate(zip(self._geoms, self._duties, strict=True)):
            if duty == 0.0:
                continue  # coasting (the driver's coast mode) or not driven: drive force 0 from the inputs
            at = index * tyre.WHEEL_IN
            # The wheel centre's offset from the centre of mass, and its velocity v + w x r, world frame.
            bx, by, bz = geom.centre[0] - gx, geom.centre[1] - gy, geom.centre[2] - gz
            rx, ry, rz = (r00 * bx + r01 * by + r02 * bz, r10 * bx + r11 * by + r12 * bz,
                          r20 * bx + r21 * by + r22 * bz)
            px, py, pz = vx + wy * rz - wz * ry, vy + wz * rx - wx * rz, vz + wx * ry - wy * rx
            sin_s, cos_s = wheels_in[at + tyre.W_SIN], wheels_in[at + tyre.W_COS]
            fx, fy, fz = r00 * cos_s + r01 * sin_s, r10 * cos_s + r11 * sin_s, r20 * cos_s + r21 * sin_s
            radius = geom.radius
            speed = px * fx + py * fy + pz * fz  # m/s along the wheel
            force = stall * (duty - speed / (radius * no_load)) / radius
            room = (duty * no_load * radius - speed) * mass / dt  # the force that reaches that speed in dt
            if abs(force) > abs(room):
                force = room
            wheels_in[at + tyre.W_DRIVE] = force

    def _swivel(self, chassis: Sequence[float], dt: float) -> None:
        """Turn each swivel caster's wheel for a step of `dt` s, as a wheel trailing its swivel axis by the
        offset e and rolling without sliding sideways does: its world heading θ turns at
        dθ/dt = (s/e)·sin(φ − θ), s and φ the speed and direction of the swivel axis over the ground, so
        it swings into the direction of travel; on the chassis, which turns at ω_z, less ω_z. For a step
        with φ held, tan((φ − θ)/2) shrinks by exp(−s·dt/e) (the exact solution, stable at any step). A
        wheel exactly against its travel (after reversing straight back) is balanced on its turning
        point; it swings out to the left, as any disturbance would send it one way."""
        vx, vy, vz, wx, wy, wz = chassis[3:9]
        r00, r01, r02, r10, r11, r12, r20, r21, r22 = chassis[9:18]
        gx, gy, gz = self._cog_tuple
        trail = float(self.caster_trail or 0.0)
        turn = (r02 * wx + r12 * wy + r22 * wz) * dt  # the chassis' turn about its up axis this step
        wheels_in = self._wheels_in
        for index, geom in enumerate(self._geoms):
            heading = self._swivels[index]
            if heading is None:
                continue
            bx, by, bz = geom.centre[0] - gx, geom.centre[1] - gy, geom.centre[2] - gz
            rx, ry, rz = (r00 * bx + r01 * by + r02 * bz, r10 * bx + r11 * by + r12 * bz,
                          r20 * bx + r21 * by + r22 * bz)
            px, py, pz = vx + wy * rz - wz * ry, vy + wz * rx - wx * rz, vz + wx * ry - wy * rx
            forward = r00 * px + r10 * py + r20 * pz  # the swivel axis' velocity on the chassis' axes
            left = r01 * px + r11 * py + r21 * pz
            heading -= turn
            speed = math.hypot(forward, left)
            if speed > 1e-9:
                travel = math.atan2(left, forward)
                lag = math.remainder(travel - heading, 2.0 * math.pi)
                if abs(lag) > math.pi - 1e-6:
                    lag = math.pi - 1e-3
                heading = travel - 2.0 * math.atan(math.tan(lag / 2.0) * math.exp(-speed * dt / trail))
            heading = math.remainder(heading, 2.0 * math.pi)
            self._swivels[index] = heading
            self._steerings[index] = heading
            at = index * tyre.WHEEL_IN
            wheels_in[at + tyre.W_SIN], wheels_in[at + tyre.W_COS] = math.sin(heading), math.cos(heading)

    def apply_wheel_hits(self, hits: Sequence[tuple]) -> None:
        """The second half of `update`: from the four rays' hits (pybullet's rayTestBatch results, in
        the order `wheel_rays` gave the rays), the suspension, drive and friction forces, applied to the
        chassis, and each wheel's state."""
        flat: list[float] = []
        for hit in hits:
            if hit[0] >= 0 and hit[2] < 1.0:
                flat += (1.0, hit[2], *hit[3], *hit[4])
            else:
                flat += _NO_HIT
        solve = self._kernels[0]  # type: ignore[index]  # wheel_rays chose them
        out, params, chassis = self._out, self._params, self._chassis
        if self._arrays:
            finite = solve(chassis, params, self._wheels_in, np.array(flat), self._impulses, out, self._work)
            results = out.tolist()
        else:
            finite = solve(chassis, params, self._wheels_in, flat, self._impulses, out, self._work)
            results = out
        self._apply_results(results, hits, finite != 0.0)

    def _apply_results(self, results: Sequence[float], hits: Sequence[tuple], finite: bool) -> None:
        """The wheels' states from the kernel's `out` (`results`) and the rays' `hits`, and the force and
        torque on the chassis unless `finite` is False."""
        rest = self.rest_length
        for index, (state, hit, steering) in enumerate(zip(self._states, hits, self._steerings, strict=True)):
            state.steering = steering
            at = tyre.OUT_BODY + index * tyre.OUT_WHEEL
            if results[at + tyre.O_CONTACT] == 0.0:
                state.in_contact, state.suspension_length, state.suspension_force = False, rest, 0.0
                state.skid, state.hit_point, state.hit_normal = 1.0, None, None
                state.delta_rotation *= 0.99
            else:
                state.in_contact = True
                state.suspension_length = results[at + tyre.O_SUSPENSION]
                state.suspension_force = results[at + tyre.O_FORCE]
                state.skid, state.hit_point, state.hit_normal = results[at + tyre.O_SKID], hit[3], hit[4]
                state.delta_rotation = results[at + tyre.O_DELTA]
            state.rotation += state.delta_rotation
        if not finite:
            return  # a degenerate contact (zero-length normal): skip this step's forces rather than explode
        _apply_force(self.body_id, -1, results[0:3], self._com, _WORLD_FRAME, physicsClientId=self.client)
        _apply_torque(self.body_id, -1, results[3:6], _WORLD_FRAME, physicsClientId=self.client)


_CONTACT_COLUMNS = [tyre.OUT_BODY + w * tyre.OUT_WHEEL + tyre.O_CONTACT for w in range(tyre.WHEELS)]
_DELTA_COLUMNS = [tyre.OUT_BODY + w * tyre.OUT_WHEEL + tyre.O_DELTA for w in range(tyre.WHEELS)]


class WheelBatch:
    """The mesh vehicles of one world stepped together: the kernels' inputs and outputs as one row per
    vehicle of 2-D arrays, the rays of all wheels cast in one batch, and one call of the compiled
    `wheel_rays_many` and `solve_many` per step (sear.physics.tyre) instead of two per vehicle.

    Why: with 100 robots the per-vehicle Python around the kernels (a numpy array built from each
    chassis state and each vehicle's hits, two compiled calls that unbox seven arrays each, the output
    copied back) cost more than the tyres' arithmetic and the rays together. The arithmetic is the same
    kernels' in the same order, so a world's results equal those of the per-vehicle updates."""

    def __init__(self, vehicles: Sequence[Vehicle], kernels: tyre.BatchKernels) -> None:
        """Bind `vehicles`' buffers to rows of the batch's arrays (Vehicle._bind_rows). `kernels`: the
        compiled `solve_many` and `wheel_rays_many` (sear.physics.tyre.batch_kernels)."""
        count = len(vehicles)
        self.vehicles = list(vehicles)
        self.client = self.vehicles[0].client
        self._solve_many, self._wheel_rays_many = kernels
        self.bodies = np.zeros((count, tyre.BODY))
        self.params = np.zeros((count, tyre.PARAMS))
        self.wheels = np.zeros((count, tyre.WHEEL_IN * tyre.WHEELS))
        self.impulses = np.zeros((count, 2 * tyre.WHEELS))
        self.hard_points = np.zeros((count, 3 * tyre.WHEELS))
        self.rays = np.zeros((count, 6 * tyre.WHEELS))
        self.out = np.zeros((count, tyre.OUT_BODY + tyre.OUT_WHEEL * tyre.WHEELS))
        self.work = np.zeros((count, tyre.WORK * tyre.WHEELS))
        self.finite = np.zeros(count)
        self.rotation = np.array([[state.rotation for state in v._states] for v in self.vehicles], dtype=float)
        """(N, 4) rad: each wheel's rotation (WheelState.rotation)."""
        self.delta = np.array([[state.delta_rotation for state in v._states] for v in self.vehicles], dtype=float)
        """(N, 4) rad: each wheel's rotation on the last step (WheelState.delta_rotation)."""
        self.steps = 0
        """Steps done: a vehicle's WheelStates are copied from the arrays when read after a step."""
        self._hits: Sequence[tuple] = ()
        self._steerings: list[list[float]] = []
        for index, vehicle in enumerate(self.vehicles):
            vehicle._bind_rows(self.params[index], self.wheels[index], self.impulses[index], self.hard_points[index])
            vehicle._join(self, index)

    def step(self, dt: float) -> None:
        """Every vehicle's update for a step of `dt` s (what Vehicle.update does for one)."""
        vehicles = self.vehicles
        count = len(vehicles)
        chassis = itertools.chain.from_iterable([vehicle._chassis_step(dt) for vehicle in vehicles])
        self.bodies[:] = np.fromiter(chassis, dtype=float, count=count * tyre.BODY).reshape(count, tyre.BODY)
        self._wheel_rays_many(self.bodies, self.params, self.hard_points, self.wheels, self.rays)
        rays = self.rays
        hits = _ray_test_batch(rays[:, :12].reshape(-1, 3), rays[:, 12:].reshape(-1, 3),
                               collisionFilterMask=WHEEL_RAY_MASK, physicsClientId=self.client)
        rows = [(1.0, hit[2], *hit[3], *hit[4]) if hit[0] >= 0 and hit[2] < 1.0 else _NO_HIT for hit in hits]
        # fromiter over the floats: about half what np.array costs on a list of 400 tuples.
        flat = np.fromiter(itertools.chain.from_iterable(rows), dtype=float, count=count * tyre.HIT * tyre.WHEELS)
        self._solve_many(self.bodies, self.params, self.wheels, flat.reshape(count, -1), self.impulses,
                         self.out, self.work, self.finite)
        out = self.out
        # Each wheel's spin as Vehicle._apply_results turns it: this step's in contact, else the last one's
        # fading; the same float operations on arrays.
        self.delta = np.where(out[:, _CONTACT_COLUMNS] != 0.0, out[:, _DELTA_COLUMNS], self.delta * 0.99)
        self.rotation += self.delta
        self._hits = hits
        self._steerings = [vehicle._steerings for vehicle in vehicles]
        self.steps += 1
        client = self.client
        for vehicle, forces, finite in zip(vehicles, out[:, :tyre.OUT_BODY].tolist(), self.finite.tolist(),
                                           strict=True):
            if finite != 0.0:  # else a degenerate contact (zero-length normal): no forces this step
                _apply_force(vehicle.body_id, -1, forces[0:3], vehicle._com, _WORLD_FRAME, physicsClientId=client)
                _apply_torque(vehicle.body_id, -1, forces[3:6], _WORLD_FRAME, physicsClientId=client)

    def sync(self, vehicle: Vehicle) -> None:
        """`vehicle`'s WheelStates from the last step's results (what Vehicle._apply_results sets)."""
        row = vehicle._row
        results = self.out[row].tolist()
        rotations, deltas = self.rotation[row].tolist(), self.delta[row].tolist()
        steerings = self._steerings[row] if self._steerings else vehicle._steerings
        rest = vehicle.rest_length
        hits = self._hits
        for index, state in enumerate(vehicle._states):
            state.steering = steerings[index]
            at = tyre.OUT_BODY + index * tyre.OUT_WHEEL
            if results[at + tyre.O_CONTACT] == 0.0 or not hits:
                state.in_contact, state.suspension_length, state.suspension_force = False, rest, 0.0
                state.skid, state.hit_point, state.hit_normal = 1.0, None, None
            else:
                hit = hits[4 * row + index]
                state.in_contact = True
                state.suspension_length = results[at + tyre.O_SUSPENSION]
                state.suspension_force = results[at + tyre.O_FORCE]
                state.skid, state.hit_point, state.hit_normal = results[at + tyre.O_SKID], hit[3], hit[4]
            state.delta_rotation, state.rotation = deltas[index], rotations[index]
