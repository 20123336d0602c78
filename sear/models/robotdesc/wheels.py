"""Which joints of a robot description drive its wheels and steer them: SEAR's proposal, the project's
choice checked against the URDF, and what the vehicle needs of each wheel joint (centre, radius, which
way it rolls forward).

    propose_wheels(desc)            # UrdfWheels: left/right wheel joints, steering joints
    swivel_casters(desc)            # ((swivel joint, wheel joint), ...): the swivel casters with offset
    choose_wheels(desc, ("left_wheel",), None, None)   # the project's marks, SEAR's proposal for None
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from sear.errors import ProjectError
from sear.models.robotdesc.model import Joint, RobotDescription


@dataclass(frozen=True)
class WheelInfo:
    """A joint that drives a wheel, as the vehicle needs it."""

    joint: str
    link: str
    centre: tuple[float, float, float]
    """Wheel centre (child link origin) in the root frame at the zero pose, m."""
    radius: float
    """m, from its collision cylinder or sphere, or the collision shapes' extent."""
    forward_sign: float
    """+1 when a positive joint speed rolls the robot forward (+x), else -1."""


@dataclass(frozen=True)
class UrdfWheels:
    """Which joints are the left and right wheels and the steering joints: SEAR's proposal
    (propose_wheels) or the project's choice (choose_wheels)."""

    left: tuple[WheelInfo, ...] = ()
    right: tuple[WheelInfo, ...] = ()
    steering: tuple[str, ...] = ()
    """Joints with a vertical axis above a wheel (car steering)."""
    refused: tuple[tuple[str, str], ...] = ()
    """Joints that look like wheels but were not proposed, as (joint, why: a sentence naming the joint and its
    axis): their axle does not lie across the robot (propose_wheels only)."""

    @property
    def wheels(self) -> tuple[WheelInfo, ...]:
        return self.left + self.right


_NOT_WHEEL = ("steer", "hinge", "caster", "castor", "arm", "gripper", "finger", "pan", "tilt", "head")


ACROSS = math.cos(math.radians(25))
"""A wheel's axle lies across the robot when its axis is within 25° of the root's y axis (|y| >= this)."""


def _axis_in_root(desc: RobotDescription, joint: Joint, poses: dict[str, np.ndarray]) -> np.ndarray:
    rotation = (poses[joint.parent] @ joint.origin.matrix())[:3, :3]
    return rotation @ np.asarray(joint.axis)


def axle_problem(desc: RobotDescription, joint_name: str, poses: dict[str, np.ndarray] | None = None) -> str | None:
    """Why joint `joint_name` cannot drive a wheel of this robot, or None when it can: a wheel must roll the
    robot along its x axis (forward, REP 103), so its axle must lie across the robot (within 25° of the
    root link's y axis at the zero pose). A joint whose axle lies along x rolls the robot sideways (r2d2's
    wheels: that robot faces its y axis); one along z spins on the spot (a steering or caster swivel)."""
    poses = poses or desc.link_poses()
    joint = desc.joints[joint_name]
    axis = _axis_in_root(desc, joint, poses)
    if abs(axis[1]) >= ACROSS:
        return None
    shown = " ".join(f"{v:.2f}" for v in np.where(np.abs(axis) < 5e-3, 0.0, axis))
    main = int(np.argmax(np.abs(axis)))
    if main == 0:
        what = ("its axle lies along the robot's x axis, so it rolls the robot sideways (along y) where SEAR "
                "drives a robot forward along x (REP 103). Turn the robot in the URDF: add a root link joined to "
                f"'{desc.root}' by a fixed joint with <origin rpy=\"0 0 1.5708\"/>, so that its wheel axles "
                "lie along y")
    elif main == 2:
        what = ("its axle is vertical (a steering or caster swivel, not a wheel); mark as wheels the joints whose "
                "axle lies along the robot's y axis")
    else:
        what = "its axle is more than 25° off the robot's y axis, so it would not roll the robot straight forward"
    return f"joint '{joint.name}' of {desc.path.name} turns about axis ({shown}) in the '{desc.root}' frame: {what}."


def wheel_info(desc: RobotDescription, joint_name: str, poses: dict[str, np.ndarray] | None = None) -> WheelInfo:
    """What the vehicle needs of joint `joint_name` used as a wheel."""
    poses = poses or desc.link_poses()
    joint = desc.joints[joint_name]
    axis = _axis_in_root(desc, joint, poses)
    centre = poses[joint.child][:3, 3]
    return WheelInfo(joint.name, joint.child, (float(centre[0]), float(centre[1]), float(centre[2])),
                     _wheel_radius(desc, joint.child, axis, poses), 1.0 if axis[1] >= 0 else -1.0)


def _wheel_radius(desc: RobotDescription, link: str, axis: np.ndarray, poses: dict[str, np.ndarray]) -> float:
    shapes = desc.links[link].collisions or desc.links[link].visuals
    for geometry in shapes:
        if geometry.kind in ("cylinder", "sphere"):
            return geometry.radius
    for geometry in shapes:
        if geometry.kind in ("box", "mesh") and (geometry.kind == "box" or geometry.mesh is not None):
            try:
                mesh = geometry.shape()
            except ProjectError:
                continue
            # Half the extent across the axle: the largest distance of a vertex from the axle.
            rotation = poses[link][:3, :3]
            local_axis = rotation.T @ axis
            vertices = np.asarray(mesh.vertices)
            across = vertices - np.outer(vertices @ local_axis, local_axis)
            return float(np.linalg.norm(across, axis=1).max())
    return 0.0


CASTER_MIN_TRAIL = 0.002
"""m: a swivel caster's wheel trails its swivel axis by at least this (less: a wheel on a free turntable)."""


def _unlimited(joint: Joint) -> bool:
    return joint.type == "continuous" or (joint.type == "revolute" and joint.lower is None and joint.upper is None)


def swivel_casters(desc: RobotDescription, poses: dict[str, np.ndarray] | None = None) -> tuple[tuple[str, str], ...]:
    """The swivel casters with offset, as (swivel joint, wheel joint) pairs: a joint that turns without
    limits about a vertical axis (within 25° at the zero pose), and below it a joint that turns without
    limits about a horizontal axle (more than 65° from vertical) whose wheel centre trails the swivel axis
    by at least CASTER_MIN_TRAIL m across its axle, the common URDF model of a real robot's caster (a
    fork on a free vertical bearing, its wheel behind the bearing). Whatever their names, the wheel is
    neither driven nor steered: its contact's side grip turns the fork, so the wheel swings into its path."""
    poses = poses or desc.link_poses()
    found: list[tuple[str, str]] = []
    for swivel in desc.joints.values():
        if not _unlimited(swivel):
            continue
        axis = _axis_in_root(desc, swivel, poses)
        if abs(axis[2]) < ACROSS:
            continue
        below = set(desc.subtree(swivel.child))
        pivot = poses[swivel.child][:3, 3]
        for joint in desc.joints.values():
            if joint.parent not in below or not _unlimited(joint):
                continue
            axle = _axis_in_root(desc, joint, poses)
            if abs(axle[2]) > math.cos(math.radians(65)):
                continue
            offset = poses[joint.child][:3, 3] - pivot
            offset -= axis * float(offset @ axis)  # across the swivel axis
            offset -= axle * float(offset @ axle) / float(axle @ axle)  # and across the wheel's axle
            if float(np.linalg.norm(offset)) >= CASTER_MIN_TRAIL:
                found.append((swivel.name, joint.name))
    return tuple(found)


def propose_wheels(desc: RobotDescription) -> UrdfWheels:
    """SEAR's proposal of wheels: continuous joints (and revolute ones without limits) whose axis lies
    across the robot (within 25° of the root's y axis at the zero pose) and whose joint or link name is
    not a steering, caster or arm part; left when their centre lies at y > 0 in the root frame, right
    when at y < 0 (by the name, 'left'/'right', when y is 0), and not the wheel of a swivel caster
    (`swivel_casters`). Steering joints: joints with an axis within 25° of vertical whose subtree holds a
    proposed wheel."""
    poses = desc.link_poses()
    caster_wheels = {wheel for _, wheel in swivel_casters(desc, poses)}
    left: list[WheelInfo] = []
    right: list[WheelInfo] = []
    refused: list[tuple[str, str]] = []
    for joint in desc.joints.values():
        names = f"{joint.name} {joint.child}".lower()
        if not _unlimited(joint) or joint.name in caster_wheels or any(word in names for word in _NOT_WHEEL):
            continue
        axis = _axis_in_root(desc, joint, poses)
        if abs(axis[1]) < ACROSS:
            if abs(axis[2]) < ACROSS:  # a horizontal axle that is not across: a wheel SEAR cannot drive
                refused.append((joint.name, axle_problem(desc, joint.name, poses) or ""))
            continue
        info = wheel_info(desc, joint.name, poses)
        side = info.centre[1]
        if abs(side) < 1e-6:
            side = 1.0 if "left" in names else -1.0 if "right" in names else 0.0
        if side > 0:
            left.append(info)
        elif side < 0:
            right.append(info)
    wheel_links = {w.link for w in left + right}
    steering = []
    for joint in desc.joints.values():
        if not joint.moves or joint.type == "prismatic":
            continue
        axis = _axis_in_root(desc, joint, poses)
        if abs(axis[2]) >= ACROSS and wheel_links & set(desc.subtree(joint.child)):
            steering.append(joint.name)
    return UrdfWheels(tuple(left), tuple(right), tuple(steering), tuple(refused))


def choose_wheels(desc: RobotDescription, left: tuple[str, ...] | None, right: tuple[str, ...] | None,
                  steering: tuple[str, ...] | None) -> UrdfWheels:
    """The wheels the project marks (None: SEAR's proposal for that list). Raises ProjectError naming a
    joint that does not exist or is fixed, a wheel joint whose axle does not lie across the robot (naming
    its axis), and when no wheel is left on a side (naming the joints refused for their axles)."""
    proposal = propose_wheels(desc)
    poses = desc.link_poses()

    def pick(names: tuple[str, ...] | None, proposed: tuple, what: str, field: str) -> tuple:
        if names is None:
            return proposed
        for name in names:
            joint = desc.joints.get(name)
            if joint is None:
                raise ProjectError(f"the {what} joint '{name}' is not a joint of {desc.path.name}; its joints are: "
                                   f"{', '.join(desc.joints)}.", field=field)
            if not joint.moves or joint.type == "prismatic":
                raise ProjectError(f"the {what} joint '{name}' is a {joint.type} joint; wheels and steering turn on "
                                   "revolute or continuous joints.", field=field)
            problem = axle_problem(desc, name, poses) if what != "steering" else None
            if problem is not None:
                raise ProjectError(f"the {what} {problem}", field=field)
        return tuple(wheel_info(desc, n, poses) for n in names) if what != "steering" else names

    chosen = UrdfWheels(pick(left, proposal.left, "left wheel", "body.left_wheels"),
                        pick(right, proposal.right, "right wheel", "body.right_wheels"),
                        pick(steering, proposal.steering, "steering", "body.steering_joints"))
    for side, wheels in (("left", chosen.left), ("right", chosen.right)):
        if not wheels:
            why = ""
            if proposal.refused:
                first, *others = proposal.refused
                why = f" Not proposed: {first[1]}"
                if others:
                    why += f" The same holds for {', '.join(repr(name) for name, _ in others)}."
            raise ProjectError(f"{desc.path.name} has no {side} wheel: SEAR found no continuous joint with an axis "
                               f"across the robot on its {side}; name the {side} wheel joints on the Robot Body tab."
                               + why, field=f"body.{side}_wheels")
    return chosen


def wheel_ids(wheels: UrdfWheels) -> dict[str, str]:
    """The key of each wheel joint in the robot's state: the four WHEEL_IDS for two wheels a side
    (front = larger x), else the joint names."""
    if len(wheels.left) == 2 and len(wheels.right) == 2:
        out = {}
        for side, pair in (("left", wheels.left), ("right", wheels.right)):
            front, rear = sorted(pair, key=lambda w: -w.centre[0])
            out[front.joint], out[rear.joint] = f"{side}_front", f"{side}_rear"
        return out
    return {w.joint: w.joint for w in wheels.left + wheels.right}
