"""SEAR's proposal of a URDF robot's drive: which drive model suits its wheels, and an acceleration force that
moves it and turns it, worked out from the URDF's masses, wheel places and friction.

    facts = drive_facts(desc, wheels)       # mass, tyre friction, wheel geometry, as the simulation sees them
    proposal = propose_drive(facts)         # DriveProposal: drive type, force and why, in a sentence

Why a proposal at all: a robot from a URDF brings its own mass (50 kg for pybullet's Husky) and wheels, so
the project's defaults (a car; 40 N) can leave it unable to steer: a skid-steered robot turns only when its
sides push hard enough to drag its tyres sideways. The rules:

- steering joints above wheels: car (Ackermann), its driven wheels given half their grip;
- one wheel a side (the robot rests on casters besides): differential, half the driven wheels' grip;
- two or more wheels a side and no steering: skid steer, with a force that turns it on the spot.

The turning resistance of a skid steer (the friction-circle model the tyres of sear.physics.vehicle use,
Coulomb friction μ·N at each wheel): turning on the spot, the sides push with +F/2 and -F/2, split among their
wheels, a moment F·b about the middle (b: half the track). While the robot does not turn, each wheel's tyre
holds its share of that push, F/n along the wheel, and the side force that balances the moment, F·b/(n·a)
(a: the wheels' mean distance from the middle along the robot, n wheels), and the tyre holds as long as
the two together stay within its grip μ·m·g/n:  F·√(1 + (b/a)²) ≤ μ·m·g.  So the robot breaks loose and
turns once F > μ·m·g·a/√(a² + b²), the turning resistance as a force at the sides. SEAR proposes 1.25 times
that, and never more than the whole robot's grip μ·m·g (a larger force only makes the wheels slide).

The friction is the URDF's: a link's <contact><lateral_friction value="..."/> (pybullet's 0.5 when absent),
times the ground's, GROUND_FRICTION (pybullet multiplies the two bodies' frictions). The mass is what
pybullet builds: every <inertial> mass, and 1 kg for each link without one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from lxml import etree

from sear.drives import registry as drive_registry
from sear.gravity import GRAVITY
from sear.models.robotdesc.model import RobotDescription
from sear.models.robotdesc.wheels import UrdfWheels

GROUND_FRICTION = 0.5
"""The terrain's friction coefficient in the simulation (pybullet's default, which sear.physics.world keeps
for the terrain); a contact's μ is the product of the two bodies' coefficients."""
DEFAULT_LINK_FRICTION = 0.5
"""pybullet's lateral friction of a URDF link that gives no <contact><lateral_friction>."""
DEFAULT_LINK_MASS = 1.0
"""kg: the mass pybullet gives a link without <inertial>."""
TURN_MARGIN = 1.25
"""The proposed skid-steer force over the force that just breaks the robot loose (turns it on the spot)."""
GRIP_SHARE = 0.5
"""A car's or differential robot's proposed force: this share of its driven wheels' grip (brisk, no wheelspin)."""


@dataclass(frozen=True)
class DriveFacts:
    """What the drive proposal needs of a URDF robot, as the simulation will have it."""

    mass: float
    """kg: the robot's total mass as pybullet builds it."""
    friction: float
    """The wheels' tyre friction coefficient on the ground μ: their <contact> lateral_friction (the mean over
    the wheels) times GROUND_FRICTION."""
    wheel_friction: float
    """The wheels' own <contact> lateral_friction (mean), or pybullet's default 0.5."""
    left: int
    right: int
    """How many wheels each side has."""
    steering: int
    """How many steering joints."""
    half_length: float
    """m: the wheels' mean distance from their middle along the robot (a)."""
    half_track: float
    """m: the wheels' mean distance from their middle across the robot (b)."""

    @property
    def turn_force(self) -> float:
        """N: the side forces' total that breaks a skid-steered robot loose on the spot (F·b against the
        turning resistance, above): μ·m·g·a/√(a² + b²)."""
        a, b = self.half_length, self.half_track
        if b <= 0:
            return math.inf
        return self.friction * self.mass * GRAVITY * a / math.hypot(a, b)

    @property
    def grip(self) -> float:
        """N: the most the ground gives all wheels together, μ·m·g."""
        return self.friction * self.mass * GRAVITY


@dataclass(frozen=True)
class DriveProposal:
    """The drive SEAR proposes for a URDF robot: a <drive_type> word and an acceleration force (N), and why."""

    drive_type: str
    engine_force: float
    reason: str
    """One or two sentences a user reads: the rule, and the figures the force comes from."""


def link_frictions(desc: RobotDescription) -> dict[str, float]:
    """Each link's <contact><lateral_friction value> as the URDF gives it (links without one left out)."""
    try:
        root = etree.fromstring(desc.resolved)
    except (etree.XMLSyntaxError, ValueError):
        return {}
    found = {}
    for link in root.iterfind("link"):
        value = link.find("contact/lateral_friction")
        try:
            friction = float(value.get("value", "")) if value is not None else math.nan
        except ValueError:
            continue
        if math.isfinite(friction) and friction >= 0:
            found[link.get("name", "")] = friction
    return found


def robot_mass(desc: RobotDescription) -> float:
    """kg: the robot's total mass as pybullet builds it (each link's <inertial> mass, 1 kg without one)."""
    return sum(link.inertial.mass if link.inertial is not None else DEFAULT_LINK_MASS for link in desc.links.values())


def drive_facts(desc: RobotDescription, wheels: UrdfWheels) -> DriveFacts:
    """The mass, tyre friction and wheel geometry of `desc` driven on `wheels`."""
    frictions = link_frictions(desc)
    every = wheels.wheels
    wheel_friction = (sum(frictions.get(w.link, DEFAULT_LINK_FRICTION) for w in every) / len(every)
                      if every else DEFAULT_LINK_FRICTION)
    if every:
        mid_x = sum(w.centre[0] for w in every) / len(every)
        mid_y = sum(w.centre[1] for w in every) / len(every)
        half_length = sum(abs(w.centre[0] - mid_x) for w in every) / len(every)
        half_track = sum(abs(w.centre[1] - mid_y) for w in every) / len(every)
    else:
        half_length = half_track = 0.0
    return DriveFacts(mass=robot_mass(desc), friction=wheel_friction * GROUND_FRICTION, wheel_friction=wheel_friction,
                      left=len(wheels.left), right=len(wheels.right), steering=len(wheels.steering),
                      half_length=half_length, half_track=half_track)


def propose_drive(facts: DriveFacts) -> DriveProposal | None:
    """SEAR's drive type and acceleration force for a robot with these facts (module docstring: the rules),
    or None when it has no wheel on a side (nothing to propose)."""
    if not facts.left or not facts.right:
        return None
    wheels = facts.left + facts.right
    basis = f"{facts.mass:.1f} kg, tyre friction μ {facts.friction:.2f}"
    if facts.steering:
        # Rear-wheel drive: the driven wheels are those not below a steering joint; with as many steering
        # joints as steered wheels, that is the wheels less the steering joints.
        driven = max(1, wheels - facts.steering)
        force = GRIP_SHARE * facts.grip * driven / wheels
        return DriveProposal("car", _round(force),
                             f"Car: {facts.steering} steering joint(s) above wheels. Force: half the grip of the "
                             f"{driven} driven wheel(s) ({basis}).")
    if facts.left == 1 and facts.right == 1:
        force = GRIP_SHARE * facts.grip
        return DriveProposal("differential", _round(force),
                             f"Differential: one wheel a side and no steering joint. Force: half the grip of the "
                             f"robot ({basis}).")
    turn = facts.turn_force
    force = min(TURN_MARGIN * turn, facts.grip)
    return DriveProposal("skid", _round(force),
                         f"Skid steer: {facts.left} wheels left, {facts.right} right, no steering joint. Force: it "
                         f"turns on the spot above {turn:.0f} N (turning resistance of wheels "
                         f"{facts.half_length:.2f} m ahead and behind the middle, {facts.half_track:.2f} m "
                         f"to the side; {basis}); proposed "
                         f"{TURN_MARGIN:g} times that, at most the grip {facts.grip:.0f} N.")


def _round(force: float) -> float:
    """A force as the form shows it: whole newtons above 10 N, tenths below."""
    return float(round(force)) if force >= 10 else round(force, 1)


def drive_warnings(facts: DriveFacts, drive_type: str, engine_force: float, file: str) -> list[str]:
    """What keeps a URDF robot (`file`, its facts) from steering with the project's drive: a car without
    steering joints; a robot turned by its sides whose force is below the turning resistance. Sentences
    that say what to change (`sear validate` prints them; the robot still runs)."""
    proposal = propose_drive(facts)
    advice = (f" SEAR proposes {_label(proposal.drive_type)} with {proposal.engine_force:g} N: choose them on the "
              "Vehicle Dynamics tab." if proposal is not None else "")
    found = []
    if drive_type == "car" and not facts.steering:
        found.append(f"the drive type is Car, but {file} has no steering joint above its wheels: nothing steers, and "
                     f"steering only shifts the force between the sides, as skid steer does.{advice}")
    by_sides = drive_type == "skid" or (drive_type == "car" and not facts.steering) \
        or (drive_type == "differential" and (facts.left > 1 or facts.right > 1))
    if by_sides and facts.left and facts.right and engine_force < facts.turn_force:
        found.append(f"the acceleration force {engine_force:g} N is below the {facts.turn_force:.0f} N that turns "
                     f"{file} on the spot by its sides ({facts.mass:.1f} kg, tyre friction μ {facts.friction:.2f}): "
                     f"it will not turn.{advice}")
    return found


def _label(drive_type: str) -> str:
    """A drive type as the Vehicle Dynamics tab's drop-down starts its entry ('Skid steer')."""
    try:
        return drive_registry.model(drive_type).LABEL.split(" (")[0]
    except ValueError:
        return drive_type
