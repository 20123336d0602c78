"""The SEAR project: every field of the Project Settings window, as plain dataclasses.

A `Project` is pure data. It is read from and written to `.prj` XML files (format documented in
docs/project-format.md, schema in sear/schemas/project.xsd); the GUI edits it and the simulation builds its
world from it. File paths are held absolute in memory; on disk they are stored relative to the `.prj`
file's folder when they lie below it, so a project folder can be moved or zipped.

Units are SI unless a field name says otherwise: metres, kilograms, newtons, radians for angles used by
the physics, decimal degrees for geographic coordinates.
"""

from __future__ import annotations

import copy
import math
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from sear import saving, xmlio
from sear.drives import registry as drive_registry
from sear.errors import ProjectError
from sear.fields import FORMAT_VERSION, list_item_tag, param
from sear.scene import Scene
from sear.xsd import project_xsd

WHEEL_IDS: tuple[str, ...] = ("left_front", "right_front", "left_rear", "right_rear")
"""The four wheels, in the order the Wheel Models tab lists them."""


def joint_names(text: str | None) -> tuple[str, ...] | None:
    """A wheel or steering joint field's names (None when the field is left out: SEAR's proposal)."""
    return None if text is None else tuple(text.split())


def wheel_label(wid: str) -> str:
    """How messages and the Wheel Models tab name a wheel: 'left front'."""
    return wid.replace("_", " ")


@dataclass
class Terrain:
    """Terrain Model tab: the ground the robot drives on and where on Earth its centre is.

    The terrain's centre (the middle of its bounding box in x and y) is the world origin.
    """

    file: Path | None = param(None)
    """Terrain model: a mesh file, a grey-scale heightmap image or a GeoTIFF elevation model."""
    latitude: float = param(35.3, kind="latitude", unit="°", decimals=6, required=True)
    """Latitude of the terrain centre, decimal degrees north (-90..90)."""
    longitude: float = param(-80.7, kind="longitude", unit="°", decimals=6, required=True)
    """Longitude of the terrain centre, decimal degrees east (-180..180)."""
    altitude: float = param(0.0, unit="m", decimals=3)
    """Altitude above sea level of the terrain's surface at its centre (x = y = 0), metres (not of the
    model's z = 0: a surface 3 m up the model at the centre still reads this altitude there)."""
    scale: float = param(1.0, kind="positive", unit="×")
    """Factor from model units to metres (mesh files only)."""
    heightmap_size: float = param(100.0, kind="positive", unit="m", label="Heightmap size")
    """Heightmap images only: edge length of the square the image covers, metres (for a non-square
    image: its longer side; pixels stay square)."""
    heightmap_height: float = param(10.0, kind="nonNegative", unit="m", label="Heightmap height range")
    """Heightmap images only: height difference between black (0) and white (255) pixels, metres."""


MAX_GRIPPER_SIZE = 10.0
"""m: the largest gripper opening, paddle length and height, and lift travel."""


@dataclass
class Gripper:
    """Robot Body Model tab, Gripper: a parallel (paddle) gripper on a lift at the robot's front.

    Two upright paddles point forward from a carriage that slides up and down a mast fixed to the front
    of the robot; the paddles slide towards each other to squeeze what is between them. The grasp is
    friction only: each closed paddle presses with `grip_force`, so a box stays held while its weight is
    below 2 × μ × grip_force (μ = the paddles' friction with it: 0.6 for `sim.add_box` boxes), and the
    lift raises what it holds while the load's weight is below `lift_force`. A box wider than
    `max_opening` does not fit between the paddles and is pushed. docs/gripper.md describes the model.
    """

    max_opening: float = param(0.3, minimum=0.01, maximum=MAX_GRIPPER_SIZE, unit="m", label="Opening")
    """Widest gap between the paddles' inner faces, m (what fits between them)."""
    paddle_length: float = param(0.25, minimum=0.01, maximum=MAX_GRIPPER_SIZE, unit="m")
    """How far the paddles reach forward from the carriage, m."""
    paddle_height: float = param(0.1, minimum=0.01, maximum=MAX_GRIPPER_SIZE, unit="m")
    """Height of the paddles, m; at lift height 0 their lower edges are 2 cm above level ground."""
    lift_travel: float = param(0.4, minimum=0.0, maximum=MAX_GRIPPER_SIZE, unit="m", label="Lift travel")
    """How high the lift raises the paddles above their lowest position, m."""
    grip_force: float = param(20.0, kind="positive", unit="N", label="Grip force")
    """Force with which each paddle squeezes what it closes on, N (the paddle motors' limit)."""
    lift_force: float = param(60.0, kind="positive", unit="N", label="Lift force")
    """Most force the lift motor gives, N: it carries the carriage and paddles (0.6 kg) and the load."""


@dataclass
class Body:
    """Robot Body Model tab: the chassis model and where the robot starts.

    The start position is either relative (metres north/east of the terrain centre and altitude above
    the terrain there) or absolute (latitude, longitude, altitude above sea level). The robot starts at
    rest on the terrain there, or, with Drop start, is dropped from the start altitude and settles.
    """

    file: Path | None = param(None)
    """Robot body (chassis) model file, or a URDF robot description (.urdf): then the robot's links, joints,
    masses and wheels come from it, and the Wheel Models tab and the dynamics' mass are not used."""
    scale: float = param(1.0, kind="positive", unit="×")
    """Factor from model units to metres (mesh files only; a URDF gives its own mesh scales)."""
    package_roots: str | None = param(None, label="Package roots")
    """URDF only: folders where `package://NAME/...` mesh paths are looked up (as FOLDER/NAME/... and
    FOLDER/...), separated by ';'; relative folders are relative to the project's folder. The folders
    above the URDF and its own folder are always searched too."""
    left_wheels: str | None = param(None, label="Left wheel joints")
    """URDF only: the joints that turn the left wheels, names separated by spaces; left out: SEAR's
    proposal (continuous joints with an axis across the robot, at y > 0)."""
    right_wheels: str | None = param(None, label="Right wheel joints")
    """URDF only: the joints that turn the right wheels, as left_wheels."""
    steering_joints: str | None = param(None, label="Steering joints")
    """URDF only, car drive: the joints that steer the front wheels, names separated by spaces; left
    out: SEAR's proposal (joints with a vertical axis above a wheel)."""
    start_mode: Literal["relative", "absolute"] = param("relative", type_name="startMode")
    """Which start position fields apply."""
    start_north: float = param(0.0, unit="m", label="North")
    """Relative start: metres north of the terrain centre."""
    start_east: float = param(0.0, unit="m", label="East")
    """Relative start: metres east of the terrain centre."""
    start_altitude: float = param(0.05, unit="m", label="Altitude", decimals=3)
    """Relative start with Drop start ticked: gap between the wheels' lowest point and the terrain, metres
    (the robot drops and settles). Otherwise unused: the robot starts resting on the terrain."""
    start_latitude: float = param(35.3, kind="latitude", unit="°", label="Latitude", decimals=6)
    """Absolute start: decimal degrees north."""
    start_longitude: float = param(-80.7, kind="longitude", unit="°", label="Longitude", decimals=6)
    """Absolute start: decimal degrees east."""
    start_abs_altitude: float = param(0.5, unit="m", label="Altitude", decimals=3)
    """Absolute start with Drop start ticked: altitude of the wheels' lowest point above sea level, metres
    (raised to the terrain surface if below it). Otherwise unused: the robot starts resting on the terrain."""
    drop_start: bool = param(False, label="Drop start")
    """Start as the original SEAR did: dropped from the start altitude, the robot falls onto its springs and
    bounces until its dampers settle it. Unticked (the default), it starts at rest: placed on the ground
    under its start position with its suspension compressed by its weight and its chassis following the
    slope, so a parked robot's sensors read steady values from the first tick. A robot from a URDF (its
    wheels are bodies on joints) is set down on the ground and brought to rest in a pre-roll of up to 2 s
    of simulated time before t = 0, which the clock, the log and the sensors do not see; so is a robot whose
    body reaches the ground before its wheels' bump stops do (it rests on its body)."""
    rotation: tuple[float, float, float, float] = param((0.0, 0.0, 0.0, 1.0))
    """Start orientation as a quaternion (x, y, z, w) in the world frame; normalised on load."""
    gripper: Gripper | None = param(None)
    """A gripper with a lift at the front of the robot (None: no gripper)."""


@dataclass
class Wheel:
    """One wheel of the Wheel Models tab."""

    file: Path | None = param(None)
    """Wheel model file (its axle along the model's y axis, centred at the origin)."""
    position: tuple[float, float, float] | None = param(None, unit="m")
    """Wheel centre relative to the body centre in the body frame (x forward, y left, z up), metres.

    None: use the offset baked into the model (the model's bounding-box centre)."""


def _default_wheels() -> dict[str, Wheel]:
    return {wid: Wheel() for wid in WHEEL_IDS}


MAX_SUSPENSION_STIFFNESS = 1000.0
"""1/s²: with MAX_SUSPENSION_DAMPING, the most an explicit step at 120 Hz keeps stable (see Dynamics)."""
MAX_SUSPENSION_DAMPING = 30.0
"""1/s: 4·30/120 Hz = 1 < 2, the explicit damper's stability limit, with 4·1000/120² = 0.28 for the spring."""


@dataclass
class Dynamics:
    """Vehicle Dynamics tab. Meanings are those of Bullet's btRaycastVehicle.

    Defaults are the thesis's workable vehicle (mass 400, force 400, brake 1, stiffness 120,
    compression 0.2, damping 0.3) plus Bullet's defaults for the fields the thesis planned.
    """

    mass: float = param(400.0, kind="positive", unit="kg", required=True)
    """Chassis mass, kg (> 0)."""
    engine_force: float = param(400.0, kind="nonNegative", unit="N", label="Acceleration force", required=True)
    """Acceleration force at full throttle, N, shared by the driven wheels."""
    brake_force: float = param(1.0, kind="nonNegative", unit="N", label="Brake force", required=True)
    """Brake force at full brake, N (the thesis default is small; raise it for sharp stops)."""
    suspension_stiffness: float = param(120.0, minimum=1.0, maximum=MAX_SUSPENSION_STIFFNESS, unit="1/s²",
                                        required=True)
    """Spring stiffness per kg of chassis mass, 1/s², 1 to 1000 (Bullet: 10 offroad, 50 sports car, 200
    F1). The springs are stepped explicitly at the physics rate; four of them bounce the chassis at
    ω² = 4·stiffness, and the step stays stable while ω²·dt² + 8·damping·dt < 4, which these bounds and
    those of the dampers keep at physics rates of 120 Hz and more (the default is 240 Hz). Springs too soft
    for their travel (below g / (4·travel)) leave the robot on its wheels' bump stops (sear.physics.tyre)."""
    suspension_compression: float = param(0.2, minimum=0.0, maximum=MAX_SUSPENSION_DAMPING, unit="1/s",
                                          required=True)
    """Damping coefficient of the compressing stroke per kg of chassis mass, 1/s, 0 to 30 (Bullet's
    wheelsDampingCompression). Its damping ratio on four wheels is ζ = compression / sqrt(stiffness)
    (sear.suspension; Bullet's "k·2·sqrt(stiffness) is k times critical" counts one wheel): road vehicles
    have ζ = 0.2-0.5, the default here (the thesis's) is 0.018.
    Four dampers slow the chassis at 4·damping per second; stepped explicitly, more than 1/(2·dt) would
    overshoot each step and chatter, so the bound keeps it stable at physics rates of 120 Hz and more."""
    suspension_damping: float = param(0.3, minimum=0.0, maximum=MAX_SUSPENSION_DAMPING, unit="1/s",
                                      required=True)
    """Damping coefficient of the extending (relaxing) stroke per kg of chassis mass, 1/s, 0 to 30
    (Bullet's wheelsDampingRelaxation); bounded like the compression damping. Damping ratio ζ = damping /
    sqrt(stiffness), 0.027 at the (thesis's) defaults."""
    friction_slip: float = param(10.5, kind="nonNegative", unit="", label="Wheel friction slip")
    """Tyre friction coefficient μ: a wheel's drive/brake and side forces together are at most this times
    its load (the friction circle), so no robot accelerates or brakes harder than μ·g, and a braked robot
    holds on slopes with tan θ < μ (Bullet's frictionSlip; ~0.8-1 rubber on concrete, 10.5 Bullet's
    default, < 0.3 ice)."""
    rolling_resistance: float = param(0.015, minimum=0.0, maximum=0.5, unit="", label="Rolling resistance")
    """Rolling resistance coefficient c_rr, 0 to 0.5: a wheel that is neither driven nor braked is held
    back by at most c_rr times its load (the force that would stop it, if smaller). About 0.01-0.02 for
    tyres on hard ground, 0.05-0.3 on grass, sand or soft soil; 0 rolls for ever, as Bullet's vehicle
    does. Driven wheels have none: the engine force is what reaches the ground."""
    cog_offset: tuple[float, float, float] = param((0.0, 0.0, 0.0), unit="m")
    """Centre of gravity relative to the body model's centre, body frame, metres."""
    drive_type: str = param(drive_registry.BUILT_IN[0].NAME, type_name="driveType", enumeration=drive_registry.names)
    """The drive model: which wheels steer, which are driven and which are casters, and how the engine force,
    drive(left, right) and steering become each wheel's force and angle (sear.drives: each model's help
    says what it does)."""
    caster_trail: float | None = param(None, kind="positive", unit="m", label="Caster swivel offset")
    """The casters' kind, for drive types with casters (differential): None: ball transfers, which roll any
    way at once; a length: swivel casters whose wheel trails its vertical swivel axis by this offset, m
    (1-4 cm on small robots' casters), so it turns to follow the caster's motion over a few offsets of
    travel, and swings round when the robot reverses. Either passes only rolling resistance."""
    max_steering: float = param(0.5, kind="nonNegative", unit="rad", label="Steering limit")
    """Steering limit of the front wheels, radians."""
    suspension_rest_length: float | None = param(None, kind="positive", unit="m", label="Suspension rest length")
    """Unloaded suspension length, metres; None = the wheel radius."""
    max_suspension_travel: float | None = param(None, kind="positive", unit="m", label="Suspension travel")
    """How far the suspension may compress or extend from rest, metres; None = the rest length."""
    # The wheel motors (sear.motors): every driven wheel has one such DC gearmotor when these are given.
    motor_stall_torque: float | None = param(None, kind="positive", unit="N·m", label="Motor stall torque")
    """Stall torque of each driven wheel's gearmotor at its output shaft at the rated voltage, N·m (the
    datasheet's stall extrapolation). With the no-load speed and rated voltage it makes the drive a DC motor
    model: torque falls linearly with speed, and the drive inputs set its duty. None: plain drive forces."""
    motor_no_load_speed: float | None = param(None, kind="positive", unit="rad/s", label="Motor no-load speed")
    """No-load speed of the gearmotor's output shaft at the rated voltage, rad/s (datasheet RPM × 2π/60). A
    motor is given either by this and the stall torque or by its constants (torque constant, back-EMF
    constant, resistance), never both."""
    motor_rated_voltage: float | None = param(None, kind="positive", unit="V", label="Motor rated voltage")
    """The voltage the motor's stall torque and no-load speed are given for, V."""
    motor_torque_constant: float | None = param(None, kind="positive", unit="N·m/A", label="Motor torque constant")
    """Torque constant kt of the motor, N·m/A: with the back-EMF constant and the winding resistance, instead of
    the stall torque and no-load speed, for a datasheet that gives these (sear.motors: stall torque
    kt·V_r/R, no-load speed V_r/ke at the rated voltage V_r). For a gearmotor, the figures at its output
    shaft; for a bare motor, at its shaft, its gearbox then being the extra gear ratio and efficiency."""
    motor_back_emf_constant: float | None = param(None, kind="positive", unit="V·s/rad",
                                                  label="Motor back-EMF constant")
    """Back-EMF (speed) constant ke of the motor, V·s/rad (V per rad/s; in SI units equal to kt in N·m/A for an
    ideal motor). Goes with the torque constant and the resistance."""
    motor_resistance: float | None = param(None, kind="positive", unit="Ω", label="Motor resistance")
    """Winding (terminal) resistance R of the motor, Ω. Goes with the torque and back-EMF constants."""
    motor_supply_voltage: float | None = param(None, kind="positive", unit="V", label="Motor supply voltage")
    """The voltage the motor driver switches at full throttle, V; None = the rated voltage. Stall torque and
    no-load speed scale with it."""
    motor_gear_ratio: float | None = param(None, kind="positive", unit="", label="Motor extra gear ratio")
    """Turns of the gearmotor's output shaft per wheel turn, for a reduction beyond the gearmotor's own
    gearbox (whose ratio is in its figures); None = 1, the wheel on the shaft."""
    motor_efficiency: float | None = param(None, minimum=0.0, maximum=1.0, exclusive_minimum=True, unit="",
                                           label="Motor extra gear efficiency")
    """Efficiency of that extra reduction, greater than 0 and at most 1; None = 1."""


DEFAULT_DYNAMICS = Dynamics()


MIN_PHYSICS_HZ = 120.0
"""Hz: the suspension's bounds (Dynamics) keep its explicit step stable from this rate up."""
MAX_PHYSICS_HZ = 1000.0
"""Hz: a step with the demo's sensors costs ~1-2 ms, so 1,000 steps keep a simulated second within a few
seconds of real time."""
MIN_HOOK_TIMEOUT, MAX_HOOK_TIMEOUT = 0.01, 3600.0
"""s: the bounds of CodeSetup.hook_timeout."""
MIN_CONTROL_HZ = 0.01
"""Hz: main_loop at least once every 100 s."""


@dataclass
class CodeSetup:
    """Code Setup tab: the user's control code and how the simulation runs it."""

    user_code: Path | None = param(None)
    """Python file with `init(sim)` and `main_loop(sim)` (or `run(sim)`)."""
    sensors: Path | None = param(None)
    """Sensors XML file written by the Sensor Wizard."""
    debug_shapes: bool = param(False)
    """Draw physics collision shapes in the simulation window."""
    hook_timeout: float = param(5.0, minimum=MIN_HOOK_TIMEOUT, maximum=MAX_HOOK_TIMEOUT, unit="s",
                                label="Hook time-out")
    """Seconds a user hook may run before it is reported as stuck and the run is ended, 0.01 to 3600 (an
    hour; a wait longer than that is a hang, and the operating system's time-outs end at a few hundred
    days)."""


@dataclass
class SimulationSettings:
    """Timing of the simulation loop (not on a tab of the thesis; kept in the .prj)."""

    physics_hz: float = param(240.0, minimum=MIN_PHYSICS_HZ, maximum=MAX_PHYSICS_HZ, unit="Hz",
                              label="Physics rate")
    """Fixed physics step rate, Hz, 120 to 1000: below 120 the suspension's explicit step is not stable
    at its largest stiffness and damping; above 1000 a simulated second costs more than a few seconds."""
    control_hz: float = param(60.0, minimum=MIN_CONTROL_HZ, maximum=MAX_PHYSICS_HZ, unit="Hz", label="Control rate")
    """Rate at which main_loop runs, Hz, 0.01 to 1000; main_loop runs on every physics step nearest
    this rate, so a control rate above the physics rate runs it on every step."""
    swarm: bool = param(False, label="Swarm controller")
    """Run every robot's user code in one process (a swarm), not one process per robot: 100 robots are
    then one Python process, not 100. Each robot keeps its own module, `sim` and state; a robot whose code
    raises stops alone, but a hook that does not return ends the shared process and so every robot's
    code."""


FIRST_ROBOT_NAME = "robot"
"""The first robot's name when the project does not give one (Project.robot_name)."""


@dataclass
class Robot:
    """One robot of a project: its name, body (with its start pose), wheels, dynamics and code (user code
    and sensors file). A project's first robot is its top-level <body>, <wheels>, <dynamics> and <code>
    (so a one-robot file is today's file); further robots are <robot name="..."> elements under
    <extra_robots>, each holding the same four elements."""

    name: str = param(FIRST_ROBOT_NAME, kind="robotName", attribute=True, required=True)
    """Unique among the project's robots; prefixes the robot's log columns (`name.truth.x`) when the
    project has more than one robot."""
    body: Body = param(default_factory=Body, required=True)
    wheels: dict[str, Wheel] = param(default_factory=_default_wheels, choices=WHEEL_IDS, type_name="wheelId",
                                     required=True)
    dynamics: Dynamics = param(default_factory=Dynamics, required=True)
    code: CodeSetup = param(default_factory=CodeSetup)


DUPLICATE_OFFSET = 2.0
"""m: a duplicated robot starts this far north of the original (relative start), so the two do not start
inside each other."""


@dataclass
class CameraView:
    """A named view of the simulation window's 3-D view (View > Save View As...), kept with the project so
    that View > Camera offers it in every later run: pyqtgraph's orbit camera, the eye `distance` from the
    point it looks at, `elevation` above level and `azimuth` round from east (x), world frame."""

    name: str = param("view", kind="nonEmptyString", attribute=True, required=True)
    """What the Camera box lists it as; unique among the project's views."""
    center: tuple[float, float, float] = param((0.0, 0.0, 0.0), unit="m", required=True)
    """The point the camera looks at (x east, y north, z up), m."""
    distance: float = param(8.0, kind="positive", unit="m", required=True)
    """How far the eye is from the point it looks at, m."""
    elevation: float = param(25.0, minimum=-90.0, maximum=90.0, unit="°", required=True)
    """The eye's angle above level seen from the point, degrees (90: straight down)."""
    azimuth: float = param(-135.0, minimum=-3600.0, maximum=3600.0, unit="°", required=True)
    """The eye's direction from the point, degrees anticlockwise from east (x) seen from above."""


@dataclass
class Project:
    """A whole SEAR project. `path` is the .prj file it was loaded from or last saved to.

    `body`, `wheels`, `dynamics` and `code` are the first robot's; `extra_robots` holds any further ones.
    `robots` lists them all as Robot objects (the first one's parts are these fields themselves, so
    editing `robots[0].body` edits `body`)."""

    name: str = param("Untitled", kind="nonEmptyString", required=True)
    terrain: Terrain = param(default_factory=Terrain, required=True)
    body: Body = param(default_factory=Body, required=True)
    wheels: dict[str, Wheel] = param(default_factory=_default_wheels, choices=WHEEL_IDS, type_name="wheelId",
                                     required=True)
    dynamics: Dynamics = param(default_factory=Dynamics, required=True)
    code: CodeSetup = param(default_factory=CodeSetup)
    simulation: SimulationSettings = param(default_factory=SimulationSettings)
    views: list[CameraView] = param(default_factory=list)
    """The simulation window's named camera views (View > Save View As...), in the order saved."""
    robot_name: str | None = param(None, kind="robotName", label="Robot name")
    """The first robot's name; None (left out of the file) means "robot". It matters only when the project
    has extra robots: it then prefixes the first robot's log columns."""
    extra_robots: list[Robot] = param(default_factory=list)
    """Robots besides the first, each with its own body, start pose, wheels, dynamics, user code and
    sensors."""
    world: Scene | None = param(None)
    """The obstacles placed in the world (the World tab; sear.scene); None: the file has no <world> and the
    world holds only what user code adds. The robots' start poses stay in their <body>."""
    path: Path | None = field(default=None, compare=False)
    """Where this project lives on disk; not part of equality (a moved project is the same project)."""

    # --- robots ----------------------------------------------------------------------------------

    @property
    def robots(self) -> list[Robot]:
        """Every robot, the first (the top-level body, wheels, dynamics and code, shared, not copied)
        included."""
        first = Robot(self.robot_name or FIRST_ROBOT_NAME, self.body, self.wheels, self.dynamics, self.code)
        return [first, *self.extra_robots]

    def robot_problem(self) -> tuple[str, str] | None:
        """Why the robot list cannot be simulated or saved, as (message, field): a name used twice; None
        when it is fine."""
        names = [robot.name for robot in self.robots]
        seen: set[str] = set()
        for name in names:
            if name in seen:
                return (f"two robots are named {name!r}; give each robot its own name (it prefixes its log "
                        "columns).", f"robots.{name}.name")
            seen.add(name)
        return None

    def add_robot(self, robot: Robot) -> Robot:
        """Append `robot` (ProjectError when its name is taken); returns it."""
        self.extra_robots.append(robot)
        problem = self.robot_problem()
        if problem is not None:
            self.extra_robots.pop()
            raise ProjectError(problem[0], field=problem[1])
        return robot

    def duplicate_robot(self, index: int, name: str) -> Robot:
        """A copy of robot `index` named `name`, appended; it starts DUPLICATE_OFFSET m north of the
        original (relative start) or as far north in latitude (absolute start)."""
        robot = copy.deepcopy(self.robots[index])
        robot.name = name
        robot.body.start_north += DUPLICATE_OFFSET
        robot.body.start_latitude = min(90.0, robot.body.start_latitude + DUPLICATE_OFFSET / 111_320.0)
        return self.add_robot(robot)

    def rename_robot(self, index: int, name: str) -> None:
        """Rename robot `index` (ProjectError when another robot has that name)."""
        if name in [r.name for i, r in enumerate(self.robots) if i != index]:
            raise ProjectError(f"another robot is already named {name!r}; choose another name.",
                               field=f"robots.{name}.name")
        if index == 0:
            self.robot_name = name
        else:
            self.extra_robots[index - 1].name = name

    def remove_robot(self, index: int) -> Robot:
        """Remove robot `index` and return it; removing the first makes the second the first (its parts
        become the top-level fields). The last robot cannot be removed (ProjectError)."""
        if len(self.extra_robots) == 0:
            raise ProjectError("a project needs at least one robot; this is its only one.")
        removed = self.robots[index]
        if index == 0:
            second = self.extra_robots.pop(0)
            self.robot_name = second.name
            self.body, self.wheels, self.dynamics, self.code = (second.body, second.wheels, second.dynamics,
                                                                second.code)
        else:
            del self.extra_robots[index - 1]
        return removed

    # --- files -----------------------------------------------------------------------------------

    @classmethod
    def load(cls, path: str | Path) -> Project:
        """Read a .prj file. Paths inside become absolute (resolved against the file's folder).

        Raises ProjectError naming the file, line and field for anything that is not a valid project.
        """
        path = Path(path)
        tree = xmlio.parse_file(path, root_tag=ROOT_TAG, schema_name="project.xsd", what="project file")
        base = path.absolute().parent
        try:
            project = xmlio.element_to_dataclass(cls, tree.getroot(), base)
        except ProjectError as exc:
            raise ProjectError(exc.message, file=path, line=exc.line, field=exc.field) from None
        project.path = Path(os.path.normpath(path.absolute()))
        rotation = tree.getroot().find("body/rotation")
        project.body.rotation = _normalised_quaternion(project.body.rotation, path,
                                                       None if rotation is None else rotation.sourceline)
        for robot in project.extra_robots:
            robot.body.rotation = _normalised_quaternion(robot.body.rotation, path, None,
                                                         f"extra_robots.{robot.name}.body.rotation")
        problem = project.robot_problem()
        if problem is not None:
            raise ProjectError(problem[0], file=path, field=problem[1])
        problem = project.world.problem() if project.world is not None else None
        if problem is not None:
            raise ProjectError(problem[0], file=path, line=_line_of(tree.getroot(), problem[1]), field=problem[1])
        return project

    def save(self, path: str | Path | None = None) -> Path:
        """Write the project to `path` (default: where it was loaded from) atomically.

        The previous file is kept as NAME.prj.bak; a save killed at any moment leaves both files whole
        (sear.saving.atomic_write); a link is followed (its target written, the link kept) and the file
        keeps its permissions. The comments and layout of the file the project was read from are kept
        (sear.saving.write_document). A project with an invalid value (e.g. a negative mass set in code)
        is refused with a ProjectError and nothing on disk changes.
        """
        if path is None:
            path = self.path
        if path is None:
            raise ProjectError("the project has never been saved; choose a file name to save it as.")
        path = Path(os.path.normpath(Path(path).absolute()))
        problem = self.robot_problem() or (self.world.problem() if self.world is not None else None)
        if problem is not None:
            raise ProjectError(f"not saved: {problem[0]}", file=path, field=problem[1])
        try:
            root = xmlio.dataclass_to_element(self, ROOT_TAG, path.parent)
        except ProjectError as exc:
            raise ProjectError(f"not saved: {exc.message}", file=path, field=exc.field) from None
        root.set("version", str(FORMAT_VERSION))
        saving.check_against_schema(root, "project.xsd", ROOT_TAG, path, "project")
        # The file the project was read from (or `path`) keeps its comments: its tree is updated in place.
        template = self.path if self.path is not None and self.path.is_file() else path
        saving.write_document(path, root, template=template,
                             reads_back=lambda merged: self._same_as_element(merged, path.parent))
        self.path = path
        return path

    def _same_as_element(self, root: object, base: Path) -> bool:
        """Whether the element `root` (a merged document) reads back as this project."""
        try:
            return bool(xmlio.element_to_dataclass(Project, root, base) == self)
        except (ValueError, TypeError, KeyError):
            return False

    def robot_prefix(self, index: int) -> str:
        """Where robot `index`'s fields are in the project: '' for the first robot (the top-level <body>,
        <wheels>, ...), 'extra_robots.NAME.' for another; prefixed to a field within a robot
        ('code.sensors'), it gives the dotted project field."""
        return "" if index == 0 else f"extra_robots.{self.robots[index].name}."

    def robot_who(self, index: int) -> str:
        """How messages name robot `index`: 'robot NAME: ' when the project has several robots, else ''."""
        return f"robot {self.robots[index].name}: " if self.extra_robots else ""

    def file_choices(self) -> dict[str, FileChoice]:
        """Every file the project refers to and where the settings window chooses it, by dotted field
        ('terrain.file', 'wheels.left_front.file', 'extra_robots.NAME.code.sensors'), in the order a run
        reads them: the terrain, then each robot's."""
        choices = [FileChoice("terrain.file", "Terrain Model", "terrain file", self.terrain.file)]
        for index in range(len(self.robots)):
            choices += self.robot_file_choices(index).values()
        return {choice.field: choice for choice in choices}

    def robot_file_choices(self, index: int) -> dict[str, FileChoice]:
        """The files of robot `index` (body, wheels, user code, sensors), keyed by their field within the
        robot ('body.file', 'code.sensors', ...); their fields are the project's (robot_prefix) and their
        labels name the robot when the project has several (robot_who)."""
        robot, prefix, who = self.robots[index], self.robot_prefix(index), self.robot_who(index)
        choices = [FileChoice(f"{prefix}body.file", "Robot Body Model", f"{who}body file", robot.body.file)]
        choices += [FileChoice(f"{prefix}wheels.{wid}.file", "Wheel Models", f"{who}{wheel_label(wid)} wheel file",
                               robot.wheels[wid].file) for wid in WHEEL_IDS]
        choices += [FileChoice(f"{prefix}code.user_code", "Code Setup", f"{who}user code file", robot.code.user_code),
                    FileChoice(f"{prefix}code.sensors", "Code Setup", f"{who}sensors file", robot.code.sensors)]
        return {choice.field[len(prefix):]: choice for choice in choices}

    def copy_own_files(self, folder: Path) -> list[tuple[FileChoice, Path]]:
        """Save As to another folder: make the new project independent of the old one, as a document
        saved under a new name is. The files the project owns and SEAR edits, its user code and its
        sensors file, are copied to `folder` when they lie in the project's folder (or below it: kept at
        the same relative place) and their fields are pointed at the copies; a copy that would
        replace a different file of the same name is not made (that field keeps its file). Models
        (terrain, body, wheels) are inputs the project only reads, often large and shared: they stay
        where they are, referred to by absolute path when outside `folder`. Returns the copies made, as
        (the field's choice with its old path, the new path)."""
        if self.path is None:
            return []
        old_folder = self.path.parent
        folder = Path(os.path.normpath(Path(folder).absolute()))
        if folder == old_folder:
            return []
        copied: list[tuple[FileChoice, Path]] = []
        for index, robot in enumerate(self.robots):
            choices = self.robot_file_choices(index)
            for key in ("code.user_code", "code.sensors"):
                choice = choices[key]
                source = choice.path
                if source is None or not source.is_file() or not source.is_relative_to(old_folder):
                    continue
                target = folder / source.relative_to(old_folder)
                if target.exists() and target.read_bytes() != source.read_bytes():
                    continue
                if not target.exists():
                    target.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(source, target)
                    shutil.copymode(source, target)
                setattr(robot.code, key.split(".")[1], target)
                copied.append((choice, target))
        return copied

    def referenced_files(self) -> dict[str, Path | None]:
        """Every file the project refers to, keyed by the place in the settings window it comes from."""
        return {f"{c.tab}: {c.label}": c.path for c in self.file_choices().values()}


@dataclass(frozen=True)
class FileChoice:
    """A file a project refers to, and where the settings window chooses it."""

    field: str
    """The dotted project field ('wheels.left_front.file')."""
    tab: str
    """The settings window tab ('Wheel Models')."""
    label: str
    """How that tab and messages name it ('left front wheel file')."""
    path: Path | None


ROOT_TAG = "sear-project"


def _line_of(root: object, dotted: str) -> int | None:
    """The line of the element a dotted world field names ('world.walls.w1.name': the <wall name="w1">
    under <world><walls>), or None."""
    parts = dotted.split(".")
    if len(parts) < 3 or parts[0] != "world":
        return None
    line = None
    for element in root.iterfind(f"world/{parts[1]}/{list_item_tag(parts[1])}"):  # type: ignore[attr-defined]
        if element.get("name") == parts[2] and element.sourceline is not None:
            line = int(element.sourceline)  # the last one: the name's second use
    return line


def save_camera_view(path: str | Path, view: CameraView) -> list[CameraView]:
    """Put `view` into the project file at `path` (replacing a view of its name) and nothing else: the file
    as it is on disk now is read, so what the settings window saved meanwhile is kept; the simulation
    window's project in memory may be older. Returns the file's views now (ProjectError when it cannot be
    read or written)."""
    project = Project.load(path)
    project.views = [v for v in project.views if v.name != view.name] + [view]
    project.save()
    return project.views


def _normalised_quaternion(q: tuple[float, ...], path: Path,
                           line: int | None = None, field: str = "body.rotation") -> tuple[float, float, float, float]:
    norm = math.sqrt(sum(c * c for c in q))
    if norm < 1e-9:
        raise ProjectError("the rotation quaternion is all zeros; use 0 0 0 1 for no rotation.", file=path,
                           line=line, field=field)
    if abs(norm - 1.0) < 1e-12:
        return (q[0], q[1], q[2], q[3])
    return (q[0] / norm, q[1] / norm, q[2] / norm, q[3] / norm)


def _schema() -> str:
    """The project schema, from the dataclasses above (with every drive model registered now)."""
    return project_xsd(Project, ROOT_TAG, standalone=True)


xmlio.provide_schema("project.xsd", _schema, drive_registry.generation)
