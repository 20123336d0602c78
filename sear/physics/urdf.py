"""A robot from a URDF on pybullet: pybullet's own URDF loader, wheels and steering as joint motors.

The same interface as sear.physics.vehicle.Vehicle (accelerate, brake, steer, update, state, pose,
reset, wheel_transforms, body_id, cog, body_mesh, wheel_meshes), so the world, the runtime, the keyboard
and the `sim` calls drive either without knowing which.

How the project's drive maps onto the joints (wheels: the joints marked on the Robot Body tab, or
sear.models.robotdesc.wheels' proposal):
- the engine force F (N, Vehicle Dynamics' "Acceleration force" at full throttle) is shared by the
  driven wheels as a torque limit: a driven wheel's motor turns it towards its top speed with at most
  F_wheel · r N·m (r its radius), so it pushes the ground with at most F_wheel. Top speed: the joint's
  <limit velocity> when the URDF gives one, else MAX_WHEEL_SPEED / r;
- with wheel motors (`Dynamics.motor_*`, sear.motors) the inputs set each driven wheel's duty instead (its
  force over its share of F), and its joint motor turns it towards the duty's no-load speed with at most
  the DC motor's torque at the speed the joint turns (set before every step): the torque falls linearly
  with speed. A joint without a velocity limit gets the motor's no-load speed as its top speed;
- the drive model (`Dynamics.drive_type`, sear.drives) is given the wheels as places: left or right,
  steerable when below a steering joint, in no slot (a URDF's casters are joints of their own). It says
  which wheels are driven and what force each gets (car: the wheels not below steering joints, rear-wheel
  drive as the raycast vehicle; with no steering joints every wheel is driven and it turns by its sides;
  skid and differential: each side's wheels, the steering input splitting the force between the sides,
  full steering alone spinning in place). The steering joints hold the angle the model gives for their
  place (car: Ackermann; position control, with the joint's effort limit, else STEERING_TORQUE); when the
  model steers no wheel they hold 0;
- brake: every wheel's motor (a caster's excepted) holds it still with at most brake force / the number
  of such wheels · r N·m; a wheel neither driven nor braked is held back by the rolling resistance
  (c_rr × its share of the weight).
- slip: a pushing wheel's motor turns its rim at most SLIP_RATIO faster than the ground under it, plus
  MIN_SLIP (set before every step, `update`): pushed beyond its grip, a wheel slides along instead of
  spinning up to its top speed, which would take away its side grip (a skid steer veered 45° driving
  straight). It is how a robot's speed-controlled motors behave, and it keeps the turning resistance of
  a skid steer (sear.models.robotdesc.drive) what turns it.
- casters: a link on a fixed joint named like a caster (CASTER_WORDS) is a ball transfer: its contacts
  have no friction, and before each step it is held back by rolling resistance c_rr·N against its motion
  along the ground (N its contacts' normal force on the last step), as a ball that rolls is; a ball with
  friction would slide, dragging μ·N. A swivel caster with offset (sear.models.robotdesc.wheels.
  swivel_casters: a free vertical swivel joint, below it a free wheel joint trailing the swivel axis) keeps
  its joints free and its wheel's friction, whose side grip swings the wheel into its path as a real
  caster's does; before each step its wheel's joint motor holds it back with at most c_rr·N·r (N its
  contacts' normal force on the last step, r its radius): it rolls against rolling resistance only.
- wheels: a wheel link's <cylinder> is a true cylinder (URDF_USE_IMPLICIT_CYLINDER: pybullet's default
  faceted hull hops), crowned (`crowned`) so that it is carried at the middle of its tread; and the robot has
  none of pybullet's default damping (0.04/s), which no URDF gives.
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
from sear.drives.base import WheelPlace
from sear.errors import ProjectError
from sear.gravity import GRAVITY
from sear.models.loaded import RobotModels
from sear.models.robotdesc.model import RobotDescription
from sear.models.robotdesc.wheels import UrdfWheels, swivel_casters, wheel_ids, wheel_info
from sear.motors import GearMotor, motor_of
from sear.physics.inputs import DriveInputs
from sear.project import Dynamics
from sear.state import VehicleState

CASTER_WORDS = ("caster", "castor")
"""A link on a fixed joint whose joint or link name holds one of these is a ball transfer (a caster ball
that rolls): UrdfVehicle gives it rolling resistance only."""
CASTER_CREEP = 0.01
"""m/s: below this speed a ball transfer's rolling resistance shrinks in proportion to the speed."""

if TYPE_CHECKING:
    import trimesh

MAX_WHEEL_SPEED = 20.0
"""m/s: a wheel's top rim speed when its joint gives no velocity limit."""
SLIP_RATIO = 0.2
"""A pushing wheel's rim runs at most this share faster than the ground under it (a tyre's grip peaks at a
slip of 10-20 %)."""
MIN_SLIP = 0.5
"""m/s: and at most this much faster, so that it starts from rest and breaks loose to turn on the spot."""
CROWN_WIDTH = 0.002
"""m: the width of a wheel's crown (`crowned`), the band of its tread that meets flat ground."""
CROWN_RELIEF = 0.001
"""m: how much less the radius of the rest of the tread is than the crown's."""
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
        marked = {w.joint for w in wheels.wheels} | set(wheels.steering)
        swivels = [(swivel, wheel) for swivel, wheel in swivel_casters(desc)
                   if swivel not in marked and wheel not in marked]
        with tempfile.TemporaryDirectory(prefix="sear-urdf-") as folder:
            resolved = Path(folder) / desc.path.name
            resolved.write_bytes(crowned(desc.resolved, {w.link for w in wheels.wheels}
                                         | {desc.joints[wheel].child for _, wheel in swivels}))
            with _captured_output() as said:
                try:
                    self.body_id = p.loadURDF(str(resolved), basePosition=position, baseOrientation=orientation,
                                              flags=p.URDF_USE_INERTIA_FROM_FILE | p.URDF_USE_IMPLICIT_CYLINDER,
                                              physicsClientId=client)
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
        # No damping of pybullet's own (0.04 /s on every multibody by default, a drag of 0.04·m·v that took
        # 5 % of the guide's diffbot's push at 1.2 m/s): the URDF's joints and contacts are the whole model.
        p.changeDynamics(self.body_id, -1, linearDamping=0.0, angularDamping=0.0, physicsClientId=client)
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
        poses = desc.link_poses()
        self._steering = []
        for name in wheels.steering:
            joint = desc.joints[name]
            axis = (poses[joint.parent] @ joint.origin.matrix())[:3, :3] @ np.asarray(joint.axis)
            side = float(poses[joint.child][1, 3])
            limit = joint.effort if joint.effort else STEERING_TORQUE
            self._steering.append((self.joint_index[name], 1.0 if axis[2] >= 0 else -1.0, side, limit))
        self.motor: GearMotor | None = motor_of(dynamics)
        """Each driven wheel's DC gearmotor (sear.motors), or None: the drive inputs are forces."""
        self._top_speed = []
        for w in self._wheel_list:
            velocity = desc.joints[w.joint].velocity
            if self.motor is not None:  # the motor's no-load speed, or the joint's limit when lower
                top = min(velocity, self.motor.wheel_no_load_speed) if velocity else self.motor.wheel_no_load_speed
            else:
                top = velocity if velocity else MAX_WHEEL_SPEED / max(w.radius, 1e-3)
            self._top_speed.append(top)
        self._duties: list[float] = []
        """With a motor: each pushing wheel's duty magnitude, 0 to 1, in `_pushing`'s order."""
        self.body_mesh = body_mesh if body_mesh is not None else _empty_mesh()
        self.wheel_meshes = wheel_meshes or {}
        # Continuous joints that are neither wheels nor steering (casters, idler wheels) turn freely:
        # pybullet's default motor would hold them. Limited joints (arms, pan-tilt heads) keep it.
        free = [self.joint_index[j.name] for j in desc.joints.values()
                if j.type == "continuous" and j.name not in marked]
        if free:
            p.setJointMotorControlArray(self.body_id, free, p.VELOCITY_CONTROL, forces=[0.0] * len(free),
                                        physicsClientId=client)
        self.caster_links = [self.joint_index[j.name] for j in desc.joints.values()
                             if j.type == "fixed" and any(w in f"{j.name} {j.child}".lower() for w in CASTER_WORDS)]
        """The ball transfers: links on fixed joints named like a caster (CASTER_WORDS). Their contacts have
        no friction, and `update` holds each back by rolling resistance only (`_roll_casters`)."""
        for link in self.caster_links:
            p.changeDynamics(self.body_id, link, lateralFriction=0.0, rollingFriction=0.0, spinningFriction=0.0,
                             physicsClientId=client)
        self.swivel_casters = [(self.joint_index[swivel], self.joint_index[wheel],
                                wheel_info(desc, wheel, poses).radius) for swivel, wheel in swivels]
        """The swivel casters with offset, as (swivel joint, wheel joint, wheel radius m): both joints free,
        the wheel held back by rolling resistance only (`_roll_swivel_casters`)."""
        self.engine_force = 0.0
        self.brake_force = 0.0
        self.steering = 0.0
        self._turn = 0.0
        self._sides: tuple[float, float] | None = None
        self.drive_model = self.make_drive_model([
            WheelPlace(left=left, steerable=w.joint in steer_wheels, front_slot=False)
            for w, left in zip(self._wheel_list, self._left, strict=True)])
        self._braked_wheels = max(1, self.drive_model.casters.count(False))
        """How many wheels share the brake force: every wheel but the casters."""
        self.distance = 0.0
        self._inputs_changed()

    # --- inputs ----------------------------------------------------------------------------------

    def brake(self, force: float) -> None:
        """Total brake force, N (>= 0), shared by the wheels that are not casters."""
        force = max(0.0, float(force))
        if force != self.brake_force:
            self.brake_force = force
            self._inputs_changed()

    def _inputs_changed(self) -> None:
        """Set the joint motors from the inputs (only when they change: pybullet keeps motor targets): each
        wheel's motor pushes with the drive model's force for it, a wheel with none is held back by the
        brake (casters excepted) and rolling resistance, and each steering joint turns to the model's angle."""
        model = self.drive_model
        n = len(self._wheel_list)
        weight_share = self.total_mass * GRAVITY / n
        targets: list[float] = []
        limits: list[float] = []
        forces = self._wheel_forces()
        self._pushing = [(i, math.copysign(1.0, f)) for i, f in enumerate(forces) if f != 0.0]
        motor = self.motor
        if motor is not None:
            # The inputs are a duty: a wheel's force over its share of the full engine force; the motor
            # pushes with up to the stall torque at that duty, towards the no-load speed at that duty.
            full = self.dynamics.engine_force / max(1, sum(model.driven))
            self._duties = [min(1.0, abs(forces[i]) / full) if full > 0 else 1.0 for i, _ in self._pushing]
            duty_of = dict(zip((i for i, _ in self._pushing), self._duties, strict=True))
        for wheel, force, top, caster in zip(self._wheel_list, forces, self._top_speed, model.casters, strict=True):
            if force != 0.0 and motor is not None:
                duty = duty_of[len(targets)]
                targets.append(math.copysign(top * duty, force) * wheel.forward_sign)
                limits.append(duty * motor.wheel_stall_torque)
            elif force != 0.0:
                targets.append(math.copysign(top, force) * wheel.forward_sign)
                limits.append(abs(force) * wheel.radius)
            else:
                targets.append(0.0)
                brake = 0.0 if caster else self.brake_force / self._braked_wheels
                resist = brake + self.dynamics.rolling_resistance * weight_share
                limits.append(resist * wheel.radius)
        self._targets, self._limits = targets, limits
        p.setJointMotorControlArray(self.body_id, self._wheel_joints, p.VELOCITY_CONTROL, targetVelocities=targets,
                                    forces=limits, physicsClientId=self.client)
        for index, sign, side, limit in self._steering:
            p.setJointMotorControl2(self.body_id, index, p.POSITION_CONTROL,
                                    targetPosition=sign * model.steer_angle(self.steering, self.wheelbase, side),
                                    force=limit, physicsClientId=self.client)

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
        """Before a step: each pushing wheel's motor may turn its rim at most SLIP_RATIO faster than the ground
        passes under it, plus MIN_SLIP (and never past its top speed), as a tyre grips best at a small slip: a
        wheel pushed harder than its grip then slides along, instead of spinning up to its top speed, which
        takes away its side grip (a skid steer pushed to its grip veered 45° off a straight line in 5 s).
        And each caster's rolling resistance (`_roll_casters`, `_roll_swivel_casters`)."""
        if self.caster_links:
            self._roll_casters()
        if self.swivel_casters:
            self._roll_swivel_casters()
        if not self._pushing:
            return
        client = self.client
        _, orn = p.getBasePositionAndOrientation(self.body_id, physicsClientId=client)
        forward = np.asarray(p.getMatrixFromQuaternion(orn))[[0, 3, 6]]
        states = p.getLinkStates(self.body_id, [self._wheel_joints[i] for i, _ in self._pushing],
                                 computeLinkVelocity=1, physicsClientId=client)
        targets = list(self._targets)
        motor, limits = self.motor, self._limits
        if motor is not None:
            # The motor's torque falls linearly with the wheel's speed: the joint motor may push with at most
            # the torque the motor has at the speed the joint turns now.
            limits = list(limits)
            spins = p.getJointStates(self.body_id, [self._wheel_joints[i] for i, _ in self._pushing],
                                     physicsClientId=client)
            for (i, sign), duty, spin in zip(self._pushing, self._duties, spins, strict=True):
                speed = sign * spin[1] * self._wheel_list[i].forward_sign  # rad/s in the push's direction
                limits[i] = max(0.0, motor.wheel_torque(duty, speed))
        for k, ((i, sign), state) in enumerate(zip(self._pushing, states, strict=True)):
            wheel = self._wheel_list[i]
            ground = sign * float(np.dot(state[6], forward))  # m/s the ground passes, in the push's direction
            top = self._top_speed[i] * (self._duties[k] if motor is not None else 1.0)
            rim = min(top * wheel.radius, max(0.0, ground) * (1.0 + SLIP_RATIO) + MIN_SLIP)
            targets[i] = sign * rim / max(wheel.radius, 1e-3) * wheel.forward_sign
        p.setJointMotorControlArray(self.body_id, self._wheel_joints, p.VELOCITY_CONTROL, targetVelocities=targets,
                                    forces=limits, physicsClientId=client)

    def _roll_casters(self) -> None:
        """Each ball transfer (`caster_links`) is held back as a rolling ball is: by c_rr·N
        (`Dynamics.rolling_resistance`, N its contacts' normal force on the last step), against its
        velocity along the ground in whatever direction it moves, and by nothing sideways. Below
        CASTER_CREEP m/s the force shrinks in proportion, so a robot at rest is not shaken by it."""
        client, c_rr = self.client, self.dynamics.rolling_resistance
        for link in self.caster_links:
            contacts = p.getContactPoints(bodyA=self.body_id, linkIndexA=link, physicsClientId=client)
            load = sum(contact[9] for contact in contacts)
            if load <= 0.0 or c_rr <= 0.0:
                continue
            normal = np.asarray(contacts[0][7], dtype=float)
            state = p.getLinkState(self.body_id, link, computeLinkVelocity=1, physicsClientId=client)
            velocity = np.asarray(state[6], dtype=float)
            along = velocity - normal * float(velocity @ normal)
            speed = float(np.linalg.norm(along))
            if speed == 0.0:
                continue
            force = -c_rr * load * along / max(speed, CASTER_CREEP)
            p.applyExternalForce(self.body_id, link, force.tolist(), contacts[0][5], p.WORLD_FRAME,
                                 physicsClientId=client)


    def _roll_swivel_casters(self) -> None:
        """Each swivel caster's wheel (`swivel_casters`) is held back by its joint motor with at most
        c_rr·N·r N·m (N its contacts' normal force on the last step, r its radius): a force of c_rr·N
        against its rolling at the ground, as rolling resistance is; its swivel turns freely."""
        client, c_rr = self.client, self.dynamics.rolling_resistance
        joints, limits = [], []
        for _, wheel, radius in self.swivel_casters:
            load = sum(contact[9] for contact in p.getContactPoints(bodyA=self.body_id, linkIndexA=wheel,
                                                                   physicsClientId=client))
            joints.append(wheel)
            limits.append(max(0.0, c_rr * load * radius))
        p.setJointMotorControlArray(self.body_id, joints, p.VELOCITY_CONTROL, targetVelocities=[0.0] * len(joints),
                                    forces=limits, physicsClientId=client)


def crowned(urdf: bytes, wheel_links: set[str]) -> bytes:
    """`urdf` (a URDF document) with each cylinder of the wheel links' <collision> shapes given a crown, as a
    tyre has: a band CROWN_WIDTH wide at the tread's middle at the full radius, the rest of the tread
    CROWN_RELIEF smaller. Why: a flat cylinder on flat ground touches it along a line, which the contact
    solver carries on points at the line's two ends, any share on either; the guide's diffbot carried one
    wheel on its inner edge and the other on its outer one (loads 18.4 and 14.8 N), so equal drive forces
    pushed 4 cm off the wheels' middle planes and turned it (9° in 2 s). On its crown a wheel is pushed
    within a millimetre of its middle plane, as a tyre's contact patch is centred on its tread. Shapes
    other than cylinders (meshes, spheres) are left as they are; so is a URDF lxml cannot parse."""
    import copy

    from lxml import etree

    try:
        root = etree.fromstring(urdf)
    except (etree.XMLSyntaxError, ValueError):
        return urdf
    changed = False
    for link in root.iterfind("link"):
        if link.get("name") not in wheel_links:
            continue
        for collision in list(link.iterfind("collision")):
            cylinder = collision.find("geometry/cylinder")
            try:
                radius, length = float(cylinder.get("radius", "")), float(cylinder.get("length", ""))
            except (AttributeError, ValueError):
                continue
            if radius <= 2 * CROWN_RELIEF or length <= 2 * CROWN_WIDTH:
                continue
            crown = copy.deepcopy(collision)
            crown.find("geometry/cylinder").set("length", repr(CROWN_WIDTH))
            cylinder.set("radius", repr(radius - CROWN_RELIEF))
            collision.addnext(crown)
            changed = True
    return etree.tostring(root, xml_declaration=True, encoding="utf-8") if changed else urdf


def build_urdf_vehicle(client: int, models: RobotModels, dynamics: Dynamics, position: tuple[float, float, float],
                       orientation: tuple[float, float, float, float]) -> UrdfVehicle:
    """The robot of a URDF body (the world's factory calls this for a body file that is a URDF): its
    description and the wheels chosen on it as loaded (sear.models.urdf_robot_models), its root link frame
    at `position` / `orientation`, and the window's meshes: the body (every link but the wheels) and each
    wheel in its own link frame."""
    assert models.description is not None and models.urdf_wheels is not None
    return UrdfVehicle(client, models.description, models.urdf_wheels, dynamics, position, orientation,
                       body_mesh=models.body, wheel_meshes=models.wheels)


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
