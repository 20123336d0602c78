"""A robot from a URDF on pybullet: pybullet's own URDF loader, wheels and steering as joint motors.

The same interface as sear.physics.vehicle.Vehicle (accelerate, brake, steer, update, state, pose,
reset, wheel_transforms, body_id, cog, body_mesh, wheel_meshes), so the world, the runtime, the keyboard
and the `sim` calls drive either without knowing which.

How the project's drive maps onto the joints (wheels: the joints marked on the Robot Body tab, or
sear.robotdesc's proposal):
- the engine force F (N, Vehicle Dynamics' "Acceleration force" at full throttle) is shared by the
  driven wheels as a torque limit: a driven wheel's motor turns it towards its top speed with at most
  F_wheel · r N·m (r its radius), so it pushes the ground with at most F_wheel. Top speed: the joint's
  <limit velocity> when the URDF gives one, else MAX_WHEEL_SPEED / r;
- car: the wheels behind the steering joints' wheels are driven (rear-wheel drive, as the raycast
  vehicle); with no steering joints every wheel is driven. The steering joints hold the Ackermann angle
  of their wheel (position control, with the joint's effort limit, else STEERING_TORQUE);
- skid and differential: each side is driven, the steering input splitting the force between the sides
  as the raycast vehicle's skid drive does (full steering alone spins in place);
- brake: every wheel's motor holds it still with at most brake force / wheel count · r N·m; a wheel
  neither driven nor braked is held back by the rolling resistance (c_rr × its share of the weight).
Masses, inertias, friction and collision shapes are the URDF's (read with URDF_USE_INERTIA_FROM_FILE):
the Vehicle Dynamics tab's mass, suspension and tyre fields do not apply. Links of one robot do not
collide with each other (pybullet's default); every link is in the robots' collision group
(sear.collision): it collides with other robots, no wheel rolls on it, and its own sensors' rays pass
through it (the ray caster drops hits on a robot's own bodies).
"""

from __future__ import annotations

import math
import os
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pybullet as p

from sear.collision import ROBOT_BODY_MASK, ROBOT_COLLISION_GROUP
from sear.errors import ProjectError
from sear.physics.inputs import DriveInputs
from sear.project import Body, Dynamics, joint_names
from sear.robotdesc import RobotDescription, UrdfWheels, choose_wheels, resolved_urdf, wheel_ids
from sear.state import VehicleState

if TYPE_CHECKING:
    import trimesh

GRAVITY = 9.81
MAX_WHEEL_SPEED = 20.0
"""m/s: a wheel's top rim speed when its joint gives no velocity limit."""
STEERING_TORQUE = 100.0
"""N·m: a steering joint's torque limit when its joint gives no effort limit."""


class UrdfVehicle(DriveInputs):
    """A URDF robot in the pybullet world `client`, driven through its wheel and steering joints."""

    def __init__(self, client: int, desc: RobotDescription, wheels: UrdfWheels, dynamics: Dynamics,
                 position: tuple[float, float, float], orientation: tuple[float, float, float, float] = (0, 0, 0, 1),
                 body_mesh: trimesh.Trimesh | None = None,
                 wheel_meshes: dict[str, trimesh.Trimesh] | None = None) -> None:
        """Load the URDF with its root link frame at `position`/`orientation` (world)."""
        self.client = client
        self.desc = desc
        self.dynamics = dynamics
        self.wheels = wheels
        with tempfile.TemporaryDirectory(prefix="sear-urdf-") as folder:
            resolved = Path(folder) / desc.path.name
            resolved.write_bytes(resolved_urdf(desc))
            with _captured_output() as said:
                try:
                    self.body_id = p.loadURDF(str(resolved), basePosition=position, baseOrientation=orientation,
                                              flags=p.URDF_USE_INERTIA_FROM_FILE, physicsClientId=client)
                except p.error:
                    self.body_id = -1
            if self.body_id < 0:
                last = said[-1].strip().splitlines()[-3:] if said and said[-1].strip() else []
                raise ProjectError(f"pybullet could not load the URDF ({' '.join(last) or 'no reason given'}).",
                                   file=desc.path)
        self.joint_index: dict[str, int] = {}
        self.link_index: dict[str, int] = {desc.root: -1}
        for i in range(p.getNumJoints(self.body_id, physicsClientId=client)):
            info = p.getJointInfo(self.body_id, i, physicsClientId=client)
            self.joint_index[info[1].decode()] = i
            self.link_index[info[12].decode()] = i
        for link in self.link_index.values():
            p.setCollisionFilterGroupMask(self.body_id, link, ROBOT_COLLISION_GROUP, ROBOT_BODY_MASK,
                                          physicsClientId=client)
        dyn = p.getDynamicsInfo(self.body_id, -1, physicsClientId=client)
        self._inertial = (tuple(dyn[3]), tuple(dyn[4]))
        """The root link's centre-of-mass frame in its URDF frame: pybullet's base pose is that frame."""
        self.cog = np.asarray(dyn[3], dtype=float)
        self.cog_aligned = bool(np.allclose(dyn[4], (0, 0, 0, 1), atol=1e-9))
        """Whether the centre-of-mass frame has the link frame's axes (sensors may cast in it)."""
        self.total_mass = dyn[0] + sum(p.getDynamicsInfo(self.body_id, i, physicsClientId=client)[0]
                                       for i in range(p.getNumJoints(self.body_id, physicsClientId=client)))
        self._wheel_list = [*wheels.left, *wheels.right]
        self._left = [True] * len(wheels.left) + [False] * len(wheels.right)
        self._ids = wheel_ids(wheels)
        self._wheel_joints = [self.joint_index[w.joint] for w in self._wheel_list]
        self.wheel_radius = float(np.mean([w.radius for w in self._wheel_list]))
        steer_wheels = {w.joint for w in self._wheel_list
                        if any(w.link in desc.subtree(desc.joints[s].child) for s in wheels.steering)}
        front_x = [w.centre[0] for w in self._wheel_list if w.joint in steer_wheels]
        rear_x = [w.centre[0] for w in self._wheel_list if w.joint not in steer_wheels]
        self.wheelbase = max(float(np.mean(front_x) - np.mean(rear_x)), 1e-3) if front_x and rear_x else 0.0
        self._steered = [w.joint in steer_wheels for w in self._wheel_list]
        poses = desc.link_poses()
        self._steering = []
        for name in wheels.steering:
            joint = desc.joints[name]
            axis = (poses[joint.parent] @ joint.origin.matrix())[:3, :3] @ np.asarray(joint.axis)
            side = float(poses[joint.child][1, 3])
            limit = joint.effort if joint.effort else STEERING_TORQUE
            self._steering.append((self.joint_index[name], 1.0 if axis[2] >= 0 else -1.0, side, limit))
        self._top_speed = []
        for w in self._wheel_list:
            velocity = desc.joints[w.joint].velocity
            self._top_speed.append(velocity if velocity else MAX_WHEEL_SPEED / max(w.radius, 1e-3))
        self.body_mesh = body_mesh if body_mesh is not None else _empty_mesh()
        self.wheel_meshes = wheel_meshes or {}
        # Continuous joints that are neither wheels nor steering (casters, idler wheels) turn freely:
        # pybullet's default motor would hold them. Limited joints (arms, pan-tilt heads) keep it.
        marked = {w.joint for w in self._wheel_list} | set(wheels.steering)
        free = [self.joint_index[j.name] for j in desc.joints.values()
                if j.type == "continuous" and j.name not in marked]
        if free:
            p.setJointMotorControlArray(self.body_id, free, p.VELOCITY_CONTROL, forces=[0.0] * len(free),
                                        physicsClientId=client)
        self.engine_force = 0.0
        self.brake_force = 0.0
        self.steering = 0.0
        self._turn = 0.0
        self._sides: tuple[float, float] | None = None
        self.distance = 0.0
        self._inputs_changed()

    # --- inputs ----------------------------------------------------------------------------------

    def brake(self, force: float) -> None:
        """Total brake force, N (>= 0), shared by all wheels."""
        force = max(0.0, float(force))
        if force != self.brake_force:
            self.brake_force = force
            self._inputs_changed()

    def steer(self, angle: float) -> None:
        """Steering angle, rad, positive left, clamped to the steering limit. Car drive with steering
        joints: their wheels' Ackermann angles. Otherwise the angle's share of the limit splits the
        engine force between the sides (skid steering)."""
        self._steer_to(angle, wheels_steer=self.dynamics.drive_type == "car" and bool(self._steering))

    def _drive_forces(self) -> list[float]:
        """Ground force (N) each wheel's motor may push with, in wheel order, positive forward."""
        e = self.engine_force
        car = self.dynamics.drive_type == "car" and bool(self._steering)
        driven = [not s for s in self._steered] if car else [True] * len(self._left)
        if self._sides is not None:
            left, right = self._sides
        elif car:
            share = e / max(1, sum(driven))
            return [share if d else 0.0 for d in driven]
        else:
            turn = self._turn * self.dynamics.engine_force
            left, right = e / 2.0 - turn / 2.0, e / 2.0 + turn / 2.0
        sides = {True: left, False: right}
        counts = {side: max(1, sum(d for d, s in zip(driven, self._left, strict=True) if s == side))
                  for side in (True, False)}
        return [sides[s] / counts[s] if d else 0.0 for d, s in zip(driven, self._left, strict=True)]

    def _inputs_changed(self) -> None:
        """Set the joint motors from the inputs (only when they change: pybullet keeps motor targets)."""
        forces = self._drive_forces()
        n = len(self._wheel_list)
        weight_share = self.total_mass * GRAVITY / n
        targets, limits = [], []
        for wheel, force, top in zip(self._wheel_list, forces, self._top_speed, strict=True):
            if force != 0.0:
                targets.append(math.copysign(top, force) * wheel.forward_sign)
                limits.append(abs(force) * wheel.radius)
            else:
                targets.append(0.0)
                resist = self.brake_force / n + self.dynamics.rolling_resistance * weight_share
                limits.append(resist * wheel.radius)
        p.setJointMotorControlArray(self.body_id, self._wheel_joints, p.VELOCITY_CONTROL, targetVelocities=targets,
                                    forces=limits, physicsClientId=self.client)
        for index, sign, side, limit in self._steering:
            p.setJointMotorControl2(self.body_id, index, p.POSITION_CONTROL,
                                    targetPosition=sign * self._ackermann(side), force=limit,
                                    physicsClientId=self.client)

    def _ackermann(self, side: float) -> float:
        """Steering angle (rad, positive left) of a wheel `side` m left of the centre line: every wheel
        points at one turning centre on the rear axle line."""
        delta = self.steering
        if abs(delta) < 1e-9 or self.wheelbase <= 0:
            return delta
        radius = self.wheelbase / math.tan(delta)
        return math.atan(self.wheelbase / (radius - side))

    # --- pose --------------------------------------------------------------------------------------

    def pose(self) -> tuple[np.ndarray, np.ndarray]:
        """Position and orientation (x, y, z, w) of the root link's frame in the world."""
        com, orn = p.getBasePositionAndOrientation(self.body_id, physicsClientId=self.client)
        inv_pos, inv_orn = p.invertTransform(*self._inertial)
        pos, orn = p.multiplyTransforms(com, orn, inv_pos, inv_orn)
        return np.asarray(pos), np.asarray(orn)

    def reset(self, position: tuple[float, float, float], orientation: tuple[float, float, float, float]) -> None:
        """Put the root link frame at `position`/`orientation`, joints at zero, at rest, inputs released."""
        com, orn = p.multiplyTransforms(position, orientation, *self._inertial)
        p.resetBasePositionAndOrientation(self.body_id, com, orn, physicsClientId=self.client)
        p.resetBaseVelocity(self.body_id, [0, 0, 0], [0, 0, 0], physicsClientId=self.client)
        for index in self.joint_index.values():
            p.resetJointState(self.body_id, index, 0.0, 0.0, physicsClientId=self.client)
        self.engine_force = self.brake_force = self.steering = self._turn = 0.0
        self._sides = None
        self._inputs_changed()

    def state(self, time: float = 0.0) -> VehicleState:
        """Ground truth of the root link's frame (world frame, SI)."""
        com, _ = p.getBasePositionAndOrientation(self.body_id, physicsClientId=self.client)
        v, w = p.getBaseVelocity(self.body_id, physicsClientId=self.client)
        pos, orn = self.pose()
        offset = pos - np.asarray(com)
        velocity = np.asarray(v) + np.cross(np.asarray(w), offset)
        joints = p.getJointStates(self.body_id, self._wheel_joints, physicsClientId=self.client)
        angles = {self._ids[wh.joint]: state[0] * wh.forward_sign
                  for wh, state in zip(self._wheel_list, joints, strict=True)}
        return VehicleState(time=time, position=pos, orientation=orn, linear_velocity=velocity,
                            angular_velocity=np.asarray(w), wheel_angles=angles,
                            wheel_radii={self._ids[wh.joint]: wh.radius for wh in self._wheel_list},
                            steering=self.steering)

    def link_pose(self, link: str) -> tuple[np.ndarray, np.ndarray]:
        """World position and orientation (x, y, z, w) of a link's URDF frame."""
        index = self.link_index[link]
        if index < 0:
            return self.pose()
        state = p.getLinkState(self.body_id, index, computeForwardKinematics=True, physicsClientId=self.client)
        return np.asarray(state[4]), np.asarray(state[5])

    def wheel_transforms(self) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """World position and orientation of each wheel link's frame (keys as in `state().wheel_angles`)."""
        return {self._ids[w.joint]: self.link_pose(w.link) for w in self._wheel_list}

    def wheel_states(self) -> dict:
        """The raycast vehicle's per-wheel suspension states; a URDF robot's wheels are bodies: none."""
        return {}

    def update(self, dt: float) -> None:
        """Nothing to do before a step: pybullet's joint motors hold the targets `_inputs_changed` set."""


def build_urdf_vehicle(client: int, desc: RobotDescription, body: Body, dynamics: Dynamics,
                       position: tuple[float, float, float],
                       orientation: tuple[float, float, float, float]) -> UrdfVehicle:
    """The robot of a URDF body (the world's factory calls this for a body file that is a URDF): its wheels
    as the Robot Body tab marks them (else SEAR's proposal), its root link frame at `position` /
    `orientation`, and the window's meshes: the body (every link but the wheels) and each wheel in its
    own link frame. Raises ProjectError for a wheel field naming a joint the URDF lacks."""
    wheels = choose_wheels(desc, joint_names(body.left_wheels), joint_names(body.right_wheels),
                           joint_names(body.steering_joints))
    wheel_links = {link for w in wheels.left + wheels.right for link in desc.subtree(w.link)}
    body_mesh = desc.visual_mesh([name for name in desc.links if name not in wheel_links])
    ids = wheel_ids(wheels)
    wheel_meshes = {ids[w.joint]: desc.visual_mesh(desc.subtree(w.link), frame=w.link)
                    for w in wheels.left + wheels.right}
    return UrdfVehicle(client, desc, wheels, dynamics, position, orientation, body_mesh=body_mesh,
                       wheel_meshes=wheel_meshes)


@contextmanager
def _captured_output() -> Iterator[list[str]]:
    """Keep what pybullet's C++ code prints on descriptors 1 and 2 (its URDF importer warns there about
    links without <inertial>, which the collision report states as sentences) out of the terminal and
    the run's output; the text is in the yielded list afterwards, for a message when loading fails."""
    said: list[str] = []
    for stream in (sys.stdout, sys.stderr):
        with suppress(Exception):
            stream.flush()
    try:
        saved = (os.dup(1), os.dup(2))
    except OSError:
        yield said
        return
    with tempfile.TemporaryFile() as captured:
        os.dup2(captured.fileno(), 1)
        os.dup2(captured.fileno(), 2)
        try:
            yield said
        finally:
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            os.close(saved[0])
            os.close(saved[1])
            captured.seek(0)
            said.append(captured.read().decode(errors="replace"))


def _empty_mesh() -> trimesh.Trimesh:
    import trimesh

    return trimesh.creation.box(extents=(0.01, 0.01, 0.01))


__all__ = ["UrdfVehicle"]
