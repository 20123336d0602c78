"""A four-wheel raycast vehicle on pybullet, after Bullet's btRaycastVehicle.

Why a raycast vehicle of our own rather than wheel and suspension joints: the six Vehicle Dynamics
fields of a SEAR project (mass, engine force, brake, suspension stiffness, compression, damping) and
friction slip are defined by btRaycastVehicle, the vehicle the original SEAR used through jMonkeyEngine.
Re-implementing its update (bullet3 src/BulletDynamics/Vehicle/btRaycastVehicle.cpp) gives those fields
exactly their established meaning, where a jointed model would need a translation that changes the
behaviour users tuned for. It is also cheaper and steadier than four revolute joints rolling on a
triangle mesh: one rigid chassis, four rays a step (one batch), and forces.

Each physics step, before `stepSimulation`:
- a ray per wheel is cast from its suspension hard point straight down the chassis (length rest length
  plus wheel radius); the suspension length is the hit distance minus the radius, clamped to the travel;
- suspension force = stiffness * compression length * chassis mass, minus damping * closing speed *
  mass (the `suspension_compression` coefficient while the wheel moves up, `suspension_damping` while
  it moves down), never pulling; applied along the contact normal at the contact point. Stiffness and
  both damping coefficients are therefore per kg of chassis mass (1/s² and 1/s), as in Bullet;
- the driven wheels push with the engine force along their rolling direction; braking (and free
  rolling, with a rolling resistance of 1.5 % of the wheel load, which Bullet lacks) is a friction
  impulse cancelling the forward contact velocity up to that force * dt;
- sideways grip is Bullet's bilateral impulse (20 % of the contact's sideways momentum per step);
- a wheel's forward and sideways impulses together are limited to friction_slip * its suspension
  force * dt (the friction cone): beyond it the wheel skids and both are scaled down, as in Bullet.

The chassis collides with obstacles through the convex hull of the body model; the wheels are rays,
so like Bullet's vehicle they do not collide sideways with walls (the body usually reaches them first).
Brake differs from Bullet in one way: Bullet takes the brake value as an impulse per step, which makes
it depend on the step rate; here it is a force in newtons (impulse = force * dt).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pybullet as p
import trimesh

from sear.project import WHEEL_IDS, Dynamics
from sear.state import VehicleState

GRAVITY = 9.81
"""m/s², as set in sear.physics.world."""
SIDE_CONTACT_DAMPING = 0.2
"""Bullet's contactDamping in resolveSingleBilateral: share of sideways momentum removed per step."""
FORWARD_SLIP_FACTOR = 0.5
"""Bullet's fwdFactor: weight of the forward impulse in the friction-cone test."""
ROLL_INFLUENCE = 0.1
"""Bullet's default m_rollInfluence: side forces act this fraction of the way up from the contact."""
ROLLING_RESISTANCE = 0.015
"""Rolling resistance coefficient of a free-rolling tyre (0.01-0.02 on hard ground). Bullet has none,
so its vehicles roll for ever and creep after any bump; real ones stop."""

ROBOT_COLLISION_GROUP = 0x40
"""Collision filter group bit of the robot's bodies; the sensors' rays leave it out of their mask.
Not 1 or 2: Bullet gives dynamic bodies group 1 and static ones group 2 (StaticFilter)."""


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


@dataclass
class WheelState:
    """Per-wheel results of the last update (world frame)."""

    in_contact: bool = False
    suspension_length: float = 0.0
    contact_point: np.ndarray | None = None
    contact_normal: np.ndarray | None = None
    suspension_force: float = 0.0
    rotation: float = 0.0
    delta_rotation: float = 0.0
    steering: float = 0.0
    skid: float = 1.0


class Vehicle:
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
        lefts = [w.centre[1] for w in self.wheels.values() if w.left]
        rights = [w.centre[1] for w in self.wheels.values() if not w.left]
        self.wheelbase = max(float(np.mean(fronts) - np.mean(rears)), 1e-3)
        self.track = max(float(np.mean(lefts) - np.mean(rights)), 1e-3)

        from sear.physics.meshes import convex_collision_shape

        shape = convex_collision_shape(client, body_mesh)
        self.body_id = p.createMultiBody(
            baseMass=dynamics.mass, baseCollisionShapeIndex=shape,
            basePosition=position, baseOrientation=orientation,
            baseInertialFramePosition=tuple(self.cog), physicsClientId=client,
        )
        # No damping of our own: every force on the chassis is modelled.
        p.changeDynamics(self.body_id, -1, linearDamping=0.0, angularDamping=0.0, lateralFriction=0.5,
                         physicsClientId=client)
        p.setCollisionFilterGroupMask(self.body_id, -1, ROBOT_COLLISION_GROUP, 0xFFFF & ~ROBOT_COLLISION_GROUP,
                                      physicsClientId=client)
        info = p.getDynamicsInfo(self.body_id, -1, physicsClientId=client)
        self._inv_inertia_local = np.array([1.0 / i if i > 0 else 0.0 for i in info[2]])
        self._state = {wid: WheelState() for wid in WHEEL_IDS}
        self._states = [self._state[wid] for wid in WHEEL_IDS]
        self._geoms = [self.wheels[wid] for wid in WHEEL_IDS]
        self._radii = np.array([g.radius for g in self._geoms])
        self._hard_points = np.array([g.centre + np.array([0.0, 0.0, self.rest_length]) for g in self._geoms])
        self._ray_lengths = self.rest_length + self._radii
        self.engine_force = 0.0
        self.brake_force = 0.0
        self.steering = 0.0
        self._turn = 0.0
        self.distance = 0.0

    # --- inputs ----------------------------------------------------------------------------------

    def accelerate(self, force: float) -> None:
        """Total engine force, N, shared by the driven wheels; negative drives backwards."""
        self.engine_force = float(force)

    def brake(self, force: float) -> None:
        """Total brake force, N (>= 0), shared by all four wheels."""
        self.brake_force = max(0.0, float(force))

    def steer(self, angle: float) -> None:
        """Steering angle, rad, positive left, clamped to the steering limit.

        Car drive: the front wheels steer with Ackermann geometry. Skid drive: no wheel steers; the
        angle's share of the limit drives the two sides differentially with up to the engine force,
        so the robot spins in place when no throttle is given."""
        limit = self.dynamics.max_steering
        angle = max(-limit, min(limit, float(angle)))
        if self.dynamics.drive_type == "skid":
            self.steering = 0.0
            self._turn = angle / limit if limit > 0 else 0.0
        else:
            self.steering = angle
            self._turn = 0.0

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
        for state in self._state.values():
            state.in_contact, state.delta_rotation = False, 0.0

    def state(self, time: float = 0.0) -> VehicleState:
        """Ground truth of the body model frame (world frame, SI)."""
        com, orn = self._com_pose()
        lin, ang = p.getBaseVelocity(self.body_id, physicsClientId=self.client)
        lin, ang = np.asarray(lin), np.asarray(ang)
        offset = -_rotate(orn, self.cog)
        return VehicleState(
            time=time, position=com + offset, orientation=orn,
            linear_velocity=lin + _cross(ang, offset), angular_velocity=ang,
            wheel_angles={wid: s.rotation for wid, s in self._state.items()},
            wheel_radii={wid: w.radius for wid, w in self.wheels.items()},
            steering=self.steering,
        )

    def wheel_transforms(self) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """World position and orientation (x, y, z, w) of each wheel, with its steering and spin."""
        pos, orn = self.pose()
        out = {}
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
        return self._state

    # --- the update --------------------------------------------------------------------------------

    def _wheel_steering(self, geom: WheelGeometry) -> float:
        delta = self.steering
        if not geom.front or abs(delta) < 1e-9:
            return 0.0
        # Ackermann: both front wheels point at one turning centre on the rear axle line.
        radius = self.wheelbase / math.tan(delta)
        side = geom.centre[1]
        return math.atan(self.wheelbase / (radius - side))

    def _drive_forces(self) -> np.ndarray:
        """Engine force on each wheel (N), in WHEEL_IDS order."""
        e = self.engine_force
        if self.dynamics.drive_type == "skid":
            turn = self._turn * self.dynamics.engine_force
            left, right = e / 2.0 - turn / 2.0, e / 2.0 + turn / 2.0
            return np.array([(left if g.left else right) / 2.0 for g in self._geoms])
        return np.array([0.0 if g.front else e / 2.0 for g in self._geoms])

    def update(self, dt: float) -> None:
        """Cast the suspension rays and apply this step's suspension, drive and friction forces.

        Vectorised over the four wheels: this runs every physics step, so it must stay cheap."""
        client = self.client
        com, orn = self._com_pose()
        lin, ang = (np.asarray(v) for v in p.getBaseVelocity(self.body_id, physicsClientId=client))
        rot = np.asarray(p.getMatrixFromQuaternion(orn.tolist())).reshape(3, 3)
        up = rot[:, 2]
        mass = self.dynamics.mass
        inv_inertia = rot @ np.diag(self._inv_inertia_local) @ rot.T

        hard = com - rot @ self.cog + self._hard_points @ rot.T          # (4, 3) world
        ends = hard - up * self._ray_lengths[:, None]
        hits = p.rayTestBatch(hard, ends, collisionFilterMask=0xFFFF & ~ROBOT_COLLISION_GROUP,
                              physicsClientId=client)
        contact = np.array([h[0] >= 0 and h[2] < 1.0 for h in hits])
        fraction = np.array([h[2] for h in hits])
        point = np.array([h[3] for h in hits])
        normal = np.array([h[4] for h in hits])
        steering = np.array([self._wheel_steering(g) for g in self._geoms])

        susp = np.clip(fraction * self._ray_lengths - self._radii,
                       self.rest_length - self.max_travel, self.rest_length + self.max_travel)
        susp = np.where(contact, susp, self.rest_length)
        rel = point - com
        vel = lin + _cross(ang, rel)
        denom = normal @ up
        steep = denom < 0.1
        safe = np.where(steep, 1.0, denom)
        rel_vel = np.where(steep, 0.0, (normal * vel).sum(axis=1) / safe)
        inv_contact = np.where(steep, 10.0, 1.0 / safe)
        spring = self.dynamics.suspension_stiffness * (self.rest_length - susp) * inv_contact
        damping = np.where(rel_vel < 0, self.dynamics.suspension_compression, self.dynamics.suspension_damping)
        force = np.where(contact, np.maximum(0.0, (spring - damping * rel_vel) * mass), 0.0)

        # Rolling and sideways directions at each contact, in the ground plane.
        axle_body = np.column_stack([-np.sin(steering), np.cos(steering), np.zeros(4)])
        axle = axle_body @ rot.T
        axle -= normal * (axle * normal).sum(axis=1)[:, None]
        axle /= np.maximum(np.linalg.norm(axle, axis=1), 1e-9)[:, None]
        fwd = _cross(axle, normal)
        fwd /= np.maximum(np.linalg.norm(fwd, axis=1), 1e-9)[:, None]

        # Sideways: Bullet's bilateral constraint impulse against the static ground.
        rxn = _cross(rel, axle)
        jac_side = 1.0 / mass + np.einsum("ij,jk,ik->i", rxn, inv_inertia, rxn)
        side = -SIDE_CONTACT_DAMPING * (axle * vel).sum(axis=1) / jac_side
        # Forward: engine on driven wheels; elsewhere rolling friction up to brake + rolling resistance.
        drive = self._drive_forces()
        # Cancel the forward velocity this step will have, gravity included, with the chassis' linear
        # mass shared by the wheels on the ground (Bullet's ONLY_USE_LINEAR_MASS form). Using each
        # contact's effective mass instead under-brakes: the contacts sit far below the centre of mass,
        # so a slope makes the robot creep at several cm/s with the brakes on.
        vel_next = vel + np.array([0.0, 0.0, -GRAVITY * dt])
        share = mass / max(1, int(contact.sum()))
        stop = -(fwd * vel_next).sum(axis=1) * share
        limit = (self.brake_force / 4.0 + ROLLING_RESISTANCE * force) * dt
        forward = np.where(drive != 0.0, drive * dt, np.clip(stop, -limit, limit))
        # Friction cone: beyond friction_slip * load the wheel skids and both impulses shrink.
        max_imp = force * dt * self.dynamics.friction_slip
        total = np.hypot(forward * FORWARD_SLIP_FACTOR, side)
        skid = np.where(total > max_imp, max_imp / np.maximum(total, 1e-12), 1.0)
        forward = np.where(contact, forward * skid, 0.0)
        side = np.where(contact, side * skid, 0.0)

        f_susp = normal * force[:, None]
        f_fwd = fwd * (forward / dt)[:, None]
        f_side = axle * (side / dt)[:, None]
        rel_side = rel - up * ((rel @ up) * (1.0 - ROLL_INFLUENCE))[:, None]
        f_susp = np.where(contact[:, None], f_susp, 0.0)
        total_force = (f_susp + f_fwd + f_side).sum(axis=0)
        total_torque = (_cross(rel, f_susp + f_fwd) + _cross(rel_side, f_side)).sum(axis=0)
        total_torque = np.nan_to_num(total_torque)
        p.applyExternalForce(self.body_id, -1, np.nan_to_num(total_force).tolist(), com.tolist(), p.WORLD_FRAME,
                             physicsClientId=client)
        p.applyExternalTorque(self.body_id, -1, total_torque.tolist(), p.WORLD_FRAME, physicsClientId=client)

        # Wheel spin from the ground speed under each wheel (Bullet), locked when braking into a skid.
        ground_speed = (fwd * vel).sum(axis=1)
        locked = (self.brake_force > 0) & (skid < 1.0) & (drive == 0.0)
        for i, state in enumerate(self._states):
            state.steering = float(steering[i])
            state.in_contact = bool(contact[i])
            state.suspension_length = float(susp[i])
            state.suspension_force = float(force[i])
            state.skid = float(skid[i]) if contact[i] else 1.0
            state.contact_point = point[i] if contact[i] else None
            state.contact_normal = normal[i] if contact[i] else None
            if contact[i]:
                state.delta_rotation = 0.0 if locked[i] else float(ground_speed[i]) * dt / self._radii[i]
            else:
                state.delta_rotation *= 0.99
            state.rotation += state.delta_rotation
