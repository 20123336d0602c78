"""A mesh vehicle placed at its static equilibrium on the ground under it: a settled start.

Why: dropped from its start pose, a robot falls onto its springs and bounces (with the thesis's dampers,
ζ ≈ 0.03, for many seconds), so a parked robot's sensors drift while it settles. Placed where the
suspension already carries its weight, it is at rest from the first tick.

How: the chassis' height and its two tilts (about the world's x and y axes through the centre of mass)
are the unknowns; the heading and the place on the map stay the user's. For a pose, the model's own
suspension (sear.physics.tyre.solve: the four wheel rays and the springs, the chassis at rest) gives each
wheel's force; with gravity, and the tyres' static friction taking up whatever gravity pulls along the
ground, the force along the ground's normal and the torques about the ground plane's axes must vanish.
Newton's method finds that pose from the chassis laid on the plane through the ground under its wheels,
its Jacobian by finite differences (each evaluation one batch of four rays and one solve, so a placement
costs a few dozen). The ground is whatever the wheel rays hit, so on a slope the chassis follows it, tilted
back a little as its weight moves onto the downhill wheels; springs too soft for their travel leave it on
its wheels' bump stops (sear.physics.tyre), which the same solve finds. Where the wheels cannot carry the
robot (its body reaches the ground before their stops do; a wheel over an edge) there is no such pose: the caller
sets it down there and brings it to rest in a pre-roll before t = 0 (`preroll`, sear.physics.world), as it
does a URDF robot, whose wheels are bodies on joints.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import pybullet as p

from sear.gravity import GRAVITY
from sear.physics import tyre
from sear.physics.vehicle import WHEEL_RAY_MASK, _rotate
from sear.suspension import static_sag

if TYPE_CHECKING:
    from sear.physics.urdf import UrdfVehicle
    from sear.physics.vehicle import Vehicle

ITERATIONS = 30
"""Newton steps at most."""
FORCE_TOLERANCE = 1e-9
"""Relative residual (force / weight, torque / (weight · 1 m)) at which a pose counts as settled."""
SETTLED = 1e-6
"""Relative residual above which Newton's best pose is no equilibrium of the springs (settle: None)."""
_STEP_Z, _STEP_ANGLE = 1e-6, 1e-6
"""Finite-difference steps of the Jacobian: m, rad."""
PREROLL_TIME = 2.0
"""s of simulated time a pre-roll runs at most (a robot set down on its wheels' contacts rests well before)."""
PREROLL_QUIET = 1e-4
"""m/s (and rad/s): a pre-roll ends once the robot's base moved (and turned) slower than this ..."""
PREROLL_HOLD = 0.1
"""... for this long, s (so that it does not stop at the turn of a bounce)."""


def _quat_mul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Hamilton product of quaternions (x, y, z, w)."""
    ax, ay, az, aw = a
    bx, by, bz, bw = b
    return np.array([aw * bx + ax * bw + ay * bz - az * by, aw * by - ax * bz + ay * bw + az * bx,
                     aw * bz + ax * by - ay * bx + az * bw, aw * bw - ax * bx - ay * by - az * bz])


def _tilted(orientation: np.ndarray, roll: float, pitch: float) -> np.ndarray:
    """`orientation` turned by `roll` about the world x axis, then `pitch` about the world y axis (rad)."""
    qx = np.array([math.sin(roll / 2), 0.0, 0.0, math.cos(roll / 2)])
    qy = np.array([0.0, math.sin(pitch / 2), 0.0, math.cos(pitch / 2)])
    q = _quat_mul(qy, _quat_mul(qx, orientation))
    return q / np.linalg.norm(q)


def _residual(vehicle: Vehicle, com: np.ndarray, orientation: np.ndarray, dt: float) -> np.ndarray:
    """What keeps the chassis at rest with its centre of mass at `com` and `orientation` from resting
    there: the net force along the ground's normal (N) and the net torque about the two axes of the ground
    plane through the centre of mass (N·m), of gravity, the springs (the model's own suspension forces:
    sear.physics.tyre.solve, the chassis at rest) and the tyres' static friction, which takes up whatever
    gravity pulls along the ground. That friction acts in the ground plane, so whichever wheels carry it,
    its torque about the centre of mass is that of the whole at the contacts' mean point. Moves the chassis
    there (at rest)."""
    client = vehicle.client
    p.resetBasePositionAndOrientation(vehicle.body_id, com.tolist(), orientation.tolist(), physicsClientId=client)
    matrix = p.getMatrixFromQuaternion(orientation.tolist())
    body = [*com.tolist(), 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, *matrix]
    params = [float(v) for v in vehicle._params]
    params[tyre.P_BRAKE_EACH], params[tyre.P_BRAKING], params[tyre.P_DT] = 0.0, 0.0, dt
    wheels = [float(v) for v in vehicle._wheels_in]
    rays = [0.0] * (6 * tyre.WHEELS)
    tyre.wheel_rays(body, params, [float(v) for v in vehicle._hard_points.ravel()], wheels, rays)
    starts = [rays[3 * w:3 * w + 3] for w in range(tyre.WHEELS)]
    ends = [rays[12 + 3 * w:15 + 3 * w] for w in range(tyre.WHEELS)]
    hits = p.rayTestBatch(starts, ends, collisionFilterMask=WHEEL_RAY_MASK, physicsClientId=client)
    flat: list[float] = []
    for hit in hits:
        flat += (1.0, hit[2], *hit[3], *hit[4]) if hit[0] >= 0 and hit[2] < 1.0 else (0.0,) * tyre.HIT
    out = [0.0] * (tyre.OUT_BODY + tyre.OUT_WHEEL * tyre.WHEELS)
    tyre.solve(body, params, wheels, flat, [0.0] * (2 * tyre.WHEELS), out, [0.0] * (tyre.WORK * tyre.WHEELS))
    weight = np.array([0.0, 0.0, -vehicle.dynamics.mass * GRAVITY])
    points, normals, forces = [], [], []
    for w in range(tyre.WHEELS):
        if out[tyre.OUT_BODY + w * tyre.OUT_WHEEL + tyre.O_CONTACT] != 0.0:
            h = w * tyre.HIT
            points.append(flat[h + tyre.H_POINT:h + tyre.H_POINT + 3])
            normals.append(flat[h + tyre.H_NORMAL:h + tyre.H_NORMAL + 3])
            forces.append(out[tyre.OUT_BODY + w * tyre.OUT_WHEEL + tyre.O_FORCE])
    if not points:  # in the air: the normal is up, and nothing holds the chassis
        return np.array([weight[2], 0.0, 0.0])
    normal = np.mean(normals, axis=0)
    normal /= np.linalg.norm(normal)
    springs = np.asarray(normals) * np.asarray(forces)[:, None]
    arms = np.asarray(points) - com
    total = springs.sum(axis=0) + weight
    friction = -(total - normal * float(total @ normal))
    torque = np.cross(arms, springs).sum(axis=0) + np.cross(arms.mean(axis=0), friction)
    # Two axes of the ground plane: the chassis' forward axis laid on it, and normal x that.
    forward = np.array(matrix[0::3])
    forward = forward - normal * float(forward @ normal)
    forward /= max(float(np.linalg.norm(forward)), 1e-12)
    side = np.cross(normal, forward)
    return np.array([float(total @ normal), float(torque @ forward), float(torque @ side)])


def _ground_tilt(vehicle: Vehicle, com: np.ndarray, orientation: np.ndarray) -> np.ndarray:
    """Newton's first guess (height change m, turns about the world x and y axes rad): the chassis turned
    so that its up axis is the normal of the plane through the ground under its four wheels (cast straight
    down), which on a slope puts every wheel on its spring before the first step."""
    client = vehicle.client
    matrix = np.array(p.getMatrixFromQuaternion(orientation.tolist())).reshape(3, 3)
    origin = com - matrix @ vehicle.cog
    corners = origin + vehicle._hard_points @ matrix.T
    top, bottom = corners[:, 2] + 100.0, corners[:, 2] - 100.0
    hits = p.rayTestBatch(np.column_stack([corners[:, :2], top]).tolist(),
                          np.column_stack([corners[:, :2], bottom]).tolist(),
                          collisionFilterMask=WHEEL_RAY_MASK, physicsClientId=client)
    ground = np.array([hit[3] for hit in hits if hit[0] >= 0])
    if len(ground) < 3:
        return np.zeros(3)
    fit = np.linalg.lstsq(np.column_stack([ground[:, :2], np.ones(len(ground))]), ground[:, 2], rcond=None)[0]
    normal = np.array([-fit[0], -fit[1], 1.0])
    normal /= np.linalg.norm(normal)
    up = matrix[:, 2]
    axis = np.cross(up, normal)
    sine = float(np.linalg.norm(axis))
    if sine < 1e-12:
        return np.zeros(3)
    angle = math.atan2(sine, float(up @ normal))
    return np.array([0.0, axis[0] / sine * angle, axis[1] / sine * angle])


def settle(vehicle: Vehicle, position: tuple[float, float, float], orientation: tuple[float, float, float, float],
           dt: float) -> tuple[np.ndarray, np.ndarray] | None:
    """The body model frame's pose (position m, quaternion x, y, z, w) at which `vehicle` rests on the
    ground under it: from the first guess `position`/`orientation` (the bottoms of its wheels, at the
    suspension's rest length, on the ground), the
    height and tilts that make the wheels carry the chassis with no net force or torque (a physics step
    of `dt` s, as the world's). The vehicle is left there, at rest (Vehicle.reset). None where the springs
    cannot carry the chassis there (the pose found puts the chassis' own shape into the ground or another
    body: it rests on its body; a wheel over an edge; the vehicle is then left anywhere, for the caller to
    place)."""
    orn0 = np.asarray(orientation, dtype=float)
    orn0 = orn0 / np.linalg.norm(orn0)
    # First guess: lowered by the sag on level ground, so the wheels touch and the springs push.
    sag = min(static_sag(vehicle.dynamics.suspension_stiffness), vehicle.max_travel)
    com0 = np.asarray(position, dtype=float) + _rotate(orn0, vehicle.cog) - np.array([0.0, 0.0, sag])
    weight = vehicle.dynamics.mass * GRAVITY
    scale = np.array([1.0 / weight, 1.0 / weight, 1.0 / weight])

    def pose(q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return com0 + np.array([0.0, 0.0, q[0]]), _tilted(orn0, q[1], q[2])

    def residual(q: np.ndarray) -> np.ndarray:
        return _residual(vehicle, *pose(q), dt) * scale

    q = _ground_tilt(vehicle, com0, orn0)
    r = residual(q)
    best_q, best = q.copy(), float(np.linalg.norm(r))
    steps = np.array([_STEP_Z, _STEP_ANGLE, _STEP_ANGLE])
    for _ in range(ITERATIONS):
        if best < FORCE_TOLERANCE:
            break
        jacobian = np.empty((3, 3))
        for j in range(3):
            dq = np.zeros(3)
            dq[j] = steps[j]
            jacobian[:, j] = (residual(q + dq) - r) / steps[j]
        try:
            delta = np.linalg.lstsq(jacobian, -r, rcond=None)[0]
        except np.linalg.LinAlgError:
            break
        limit = vehicle.rest_length  # no jump past the suspension's own scale at once
        delta *= min(1.0, limit / max(abs(delta[0]), 1e-12), 0.2 / max(abs(delta[1]), abs(delta[2]), 1e-12))
        for _halving in range(20):  # back-tracking: accept a step that lowers the residual
            trial = q + delta
            r_trial = residual(trial)
            if float(np.linalg.norm(r_trial)) < best:
                break
            delta /= 2.0
        else:
            break
        q, r = trial, r_trial
        best_q, best = q.copy(), float(np.linalg.norm(r))
    if best > SETTLED:
        return None
    com, orn = pose(best_q)
    origin = com - _rotate(orn, vehicle.cog)
    vehicle.reset(tuple(origin), tuple(orn))
    if _body_touches(vehicle):  # its body hangs lower than its bottomed-out wheels: it rests on its body
        return None
    return origin, orn


def _body_touches(vehicle: Vehicle) -> bool:
    """Whether the chassis' own collision shape (not the wheels') reaches into another body where it is."""
    client = vehicle.client
    for index in range(p.getNumBodies(physicsClientId=client)):
        other = p.getBodyUniqueId(index, physicsClientId=client)
        if other != vehicle.body_id and p.getClosestPoints(vehicle.body_id, other, 0.0, linkIndexA=-1,
                                                           physicsClientId=client):
            return True
    return False



def preroll(vehicle: Vehicle | UrdfVehicle, client: int, dt: float) -> tuple[np.ndarray, np.ndarray] | None:
    """A URDF robot, set down with its lowest point on the ground, brought to rest before t = 0: its wheels
    are bodies on joints that Bullet's contacts carry, which no closed form places, so the world is stepped
    (steps of `dt` s, the robot free, its inputs released) until its base has moved slower than
    PREROLL_QUIET (m/s and rad/s) for PREROLL_HOLD s, PREROLL_TIME s at most; then every velocity of the
    robot is set to zero, the contacts keeping the forces that carry it. The user never sees this
    pre-roll: the world's clock, the log and the sensors start after it. Every other body in the world is
    put back as it was (pose, velocities, joints). Returns the robot's frame's pose at rest (position m,
    quaternion x, y, z, w), or None when it did not come to rest (tipping over an edge, say: the caller
    drops it instead)."""
    saved = {}
    for body in (p.getBodyUniqueId(i, physicsClientId=client) for i in range(p.getNumBodies(physicsClientId=client))):
        if body != vehicle.body_id:
            saved[body] = (p.getBasePositionAndOrientation(body, physicsClientId=client),
                           p.getBaseVelocity(body, physicsClientId=client),
                           [p.getJointState(body, j, physicsClientId=client)[:2]
                            for j in range(p.getNumJoints(body, physicsClientId=client))])
    quiet, hold = 0, max(1, round(PREROLL_HOLD / dt))
    for _ in range(round(PREROLL_TIME / dt)):
        vehicle.update(dt)
        p.stepSimulation(physicsClientId=client)
        v, w = p.getBaseVelocity(vehicle.body_id, physicsClientId=client)
        quiet = quiet + 1 if max(float(np.linalg.norm(v)), float(np.linalg.norm(w))) < PREROLL_QUIET else 0
        if quiet >= hold:
            break
    settled = quiet >= hold
    p.resetBaseVelocity(vehicle.body_id, [0.0, 0.0, 0.0], [0.0, 0.0, 0.0], physicsClientId=client)
    for j in range(p.getNumJoints(vehicle.body_id, physicsClientId=client)):
        angle = p.getJointState(vehicle.body_id, j, physicsClientId=client)[0]
        p.resetJointState(vehicle.body_id, j, angle, 0.0, physicsClientId=client)
    for body, (pose, velocity, states) in saved.items():
        p.resetBasePositionAndOrientation(body, *pose, physicsClientId=client)
        p.resetBaseVelocity(body, *velocity, physicsClientId=client)
        for j, (angle, rate) in enumerate(states):
            p.resetJointState(body, j, angle, rate, physicsClientId=client)
    return vehicle.pose() if settled else None
