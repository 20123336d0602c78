"""The `sim` calls, each declared once, and the simulation's `sim` object.

Every call a controller makes with a call message is a method of `SimulationCalls`, declared with
sear.simapi.declare: its signature, docstring and decorator (each argument's kind, unit and range; a
property, a request or a command) are the call's declaration, its body what it does on the simulation's
side. From that one declaration come:

- the simulation's answer to a controller's call message (`serve_call`), its arguments checked first;
- the table the protocol's welcome carries (`calls()`), from which a controller makes its `sim` methods
  with the same names, signatures, help and checks (sear.controller; type checkers and editors read
  them here);
- the simulation's own `Sim` (SimulationCalls and the calls the protocol's turns serve: time,
  sensor_names, read, print), which a script driving a Simulation calls directly.

A plug-in or a test adds a call with `register` (one declared method; every controller of a run started
afterwards can make it) and takes it away with `unregister`. A call's body acts on `self._robot`, a
`Robot`: the robot's vehicle, sensors, state and output, and the world it is in.

A new built-in call is a method here; beyond it, only what the world cannot do yet (a new kind of
obstacle: sear.physics.world) and the users' lists of calls (docs/user-code.md and the protocol's table
in docs/controller-protocol.md, which tests hold to this table).
"""

from __future__ import annotations

import builtins
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

import numpy as np

from sear.errors import SearError
from sear.protocol import Pose, check_call, result_to_wire
from sear.simapi import (
    BRAKE_FORCE,
    COORDINATE,
    COORDINATE_OR_NONE,
    FLAG_OR_NONE,
    FORCE,
    GRID,
    LIFT_HEIGHT,
    MASS,
    SENSOR_NAME,
    SHELF_LEVELS,
    SIZE,
    STEERING_ANGLE,
    TEXT,
    TURN_CALLS,
    YAW,
    Call,
    checked,
    declare,
)
from sear.state import VehicleState, quaternion_to_euler

if TYPE_CHECKING:
    from sear.physics.urdf import UrdfVehicle
    from sear.physics.vehicle import Vehicle
    from sear.physics.world import World
    from sear.sensors.suite import SensorSuite


class GridImage(NamedTuple):
    """A grid user code showed with sim.show_grid (the window's Grids dock draws it)."""

    values: np.ndarray
    """float32 (rows, columns): row 0 is the south edge, column 0 the west; 0 free/white .. 1 black, NaN
    unknown."""
    x: float
    """m: the grid's south-west corner, east of the terrain centre."""
    y: float
    """m: the grid's south-west corner, north of the terrain centre."""
    cell: float
    """m: a cell's edge."""
    time: float
    """s: simulated time when it was shown."""



class Robot(Protocol):
    """What the `sim` calls act on: one robot of a running simulation (sear.runtime.robotrun.RobotRun)."""

    @property
    def index(self) -> int:
        """Its place in the project's robots (and the world's vehicles)."""

    @property
    def prefix(self) -> str:
        """'' in a one-robot run, 'name.' with several robots (its log columns', arrays' and grids' names)."""

    @property
    def vehicle(self) -> Vehicle | UrdfVehicle: ...

    @property
    def sensors(self) -> SensorSuite: ...

    @property
    def state(self) -> VehicleState:
        """Its ground truth now."""

    @property
    def world(self) -> World:
        """The world it is in: the time, the obstacles, the grippers."""

    @property
    def grids(self) -> dict[str, GridImage]:
        """The grids user code showed (sim.show_grid), by title, shared by every robot of the run."""

    def emit(self, text: str, *, error: bool = False) -> None:
        """Its output (the console, or standard output / `error`: standard error when headless)."""


class SimulationCalls:
    """The `sim` calls a controller makes of the simulation, each declared once (see the module's
    docstring), on one robot: `_robot`, which the calls' bodies act on.

    Units: metres, seconds, newtons, radians. Drive inputs hold until changed, like pedals."""

    def __init__(self, robot: Robot) -> None:
        self._robot = robot

    @declare("command", force=FORCE)
    def accelerate(self, force: float) -> None:
        """Engine force, N (negative reverses); 0 to coast."""
        self._robot.vehicle.accelerate(force)

    @declare("command", force=BRAKE_FORCE)
    def brake(self, force: float) -> None:
        """Brake force, N (0 releases the brake)."""
        self._robot.vehicle.brake(force)

    @declare("command", angle=STEERING_ANGLE)
    def steer(self, angle: float) -> None:
        """Steering angle, rad, positive left, clamped to the robot's steering limit (a drive type whose
        wheels do not steer turns by driving the sides differentially)."""
        self._robot.vehicle.steer(angle)

    @declare("command", left=FORCE, right=FORCE)
    def drive(self, left: float, right: float) -> None:
        """Drive force of the left and right side, N (negative reverses), until accelerate() (or, when no
        wheel steers, steer()) takes over; each side's driven wheels share its force (the drive type says
        which wheels are driven)."""
        self._robot.vehicle.drive(left, right)

    @declare("request", x=COORDINATE, y=COORDINATE, z=COORDINATE_OR_NONE)
    def add_tree(self, x: float, y: float, z: float | None = None) -> None:
        """A static tree whose trunk axis stands at (x, y) m, its foot at height z m: a trunk 0.3 m wide
        and 2 m tall, a conical crown 2.4 m wide from 1.5 m up to its tip 4.5 m above the foot. z None
        puts the foot on the lowest ground under the trunk (on a slope the uphill edge sinks in)."""
        self._robot.world.add_tree(x, y, z)

    @declare("request", x=COORDINATE, y=COORDINATE, z=COORDINATE_OR_NONE, size=SIZE, mass=MASS)
    def add_box(self, x: float, y: float, z: float | None = None, size: float = 1.0, mass: float = 1.0) -> None:
        """A cube of edge `size` m and `mass` kg (0: immovable), edges along x and y, its CENTRE at
        (x, y, z) m. z None rests its bottom on the highest ground under it (on a slope: touching the
        uphill edge; a movable box then settles). A movable box falls under gravity; mass 0 stays put."""
        self._robot.world.add_box(x, y, z, size=size, mass=mass)

    @declare("request", x1=COORDINATE, y1=COORDINATE, x2=COORDINATE, y2=COORDINATE, height=SIZE, thickness=SIZE)
    def add_wall(self, x1: float, y1: float, x2: float, y2: float, height: float = 1.0,
                 thickness: float = 0.2) -> None:
        """A static wall `height` m tall and `thickness` m thick whose centre line runs from (x1, y1) to
        (x2, y2) m, extended past each end point by thickness / 2 (walls sharing an end point close
        the corner). Level bottom at the lowest ground under it, top `height` above that: on a slope
        it never floats and its uphill part sinks into the ground."""
        self._robot.world.add_wall(x1, y1, x2, y2, height=height, thickness=thickness)

    @declare("request", x=COORDINATE, y=COORDINATE, width=SIZE, depth=SIZE, height=SIZE)
    def add_table(self, x: float, y: float, width: float, depth: float, height: float) -> None:
        """A static table centred on (x, y) m: a top `width` m along x and `depth` m along y whose upper
        face is `height` m above the lowest ground under its legs, on four legs at its corners. A robot
        lower than the top's underside drives under it; the sensors see its legs and top."""
        self._robot.world.add_table(x, y, width, depth, height)

    @declare("request", x=COORDINATE, y=COORDINATE, width=SIZE, depth=SIZE, height=SIZE, levels=SHELF_LEVELS,
             yaw=YAW)
    def add_shelf(self, x: float, y: float, width: float, depth: float, height: float, levels: float = 5,
                  yaw: float = 0.0) -> None:
        """A static shelf centred on (x, y) m, turned `yaw` rad from east: two side panels `width` m apart
        (outer faces), `depth` m deep and `height` m tall, with `levels` boards (a whole number, 2 to 50)
        between them, the lowest on the ground and the highest flush with the top; panels and boards
        are 2 cm thick; open at front and back. Its feet stand on the lowest ground under it (on a slope
        the uphill side sinks in); the sensors see its panels and boards."""
        if levels != int(levels):
            raise SearError(f"sim.add_shelf(levels={levels!r}): levels must be a whole number of boards, "
                            "from 2 to 50")
        self._robot.world.add_shelf(x, y, width, depth, height, int(levels), yaw=yaw)

    @property
    @declare("property")
    def pose(self) -> Pose:
        """Ground-truth pose: x, y, z m (ENU) and roll, pitch, yaw rad, yaw 0 = east (for debugging; a
        real robot has only its sensors)."""
        state = self._robot.state
        x, y, z = state.position.tolist()
        roll, pitch, yaw = quaternion_to_euler(state.orientation)
        return Pose(x, y, z, roll, pitch, yaw)

    @declare("request", open=FLAG_OR_NONE, height=LIFT_HEIGHT)
    def gripper(self, open: bool | None = None, height: float | None = None) -> None:
        """The gripper at the robot's front (Robot Body Model tab): open (True) or close (False) its
        paddles, and lift them to `height` m above their lowest position (clamped to the lift's travel);
        None keeps either command as it is. Commands hold until changed; the motors move at their own
        speed (docs/gripper.md). An error when the robot has no gripper."""
        robot = self._robot
        gripper = robot.world.grippers.get(robot.index)
        if gripper is None:
            raise SearError("sim.gripper: this robot has no gripper; add one on the Robot Body Model tab "
                            "(Gripper) or in the project file's <body><gripper>.")
        gripper.command(open=open, height=height)

    @property
    @declare("property")
    def speed(self) -> float:
        """Ground-truth speed, m/s."""
        return float(np.linalg.norm(self._robot.state.linear_velocity))

    @declare("request", name=SENSOR_NAME)
    def read_sick(self, name: str) -> np.ndarray | None:
        """The latest scan of LIDAR `name` packed as SICK LMS2xx 16-bit values (needs sick_format in its
        definition): millimetres when its range fits 8.191 m, else centimetres; 0x1FFF = no return."""
        return getattr(self._robot.sensors.sensor(name), "sick", None)

    @declare("request", grid=GRID, x=COORDINATE, y=COORDINATE, cell=SIZE, title=TEXT)
    def show_grid(self, grid: np.ndarray, x: float = 0.0, y: float = 0.0, cell: float = 0.1,
                  title: str | None = "grid") -> None:
        """Show `grid` (a 2-D array: rows south to north, columns west to east; 0 white .. 1 black, NaN
        unknown) in the simulation window's Grids dock under `title` (None: "grid"), its south-west
        corner at (x, y) m, cells `cell` m wide. The latest grid of each title is kept (headless runs
        keep it too, in Simulation.grids; with several robots the title starts with the robot's name and
        a dot)."""
        robot = self._robot
        robot.grids[robot.prefix + (title or "grid")] = GridImage(grid.copy(), x, y, cell, robot.world.time)


class Sim(SimulationCalls):
    """The simulation's `sim` for one robot (RobotRun.sim): every declared call, and the calls the
    protocol's turns serve a controller (time, sensor_names, read, print) served here directly. A script
    driving a Simulation calls it (simulation.sim); a controller's call messages arrive here through
    serve_call. Each robot has its own: its sensors, its drive, its pose; the world's calls (time,
    obstacles) are shared."""

    @property
    def time(self) -> float:
        """Simulated time since the start, s."""
        return self._robot.world.time

    @property
    def sensor_names(self) -> list[str]:
        """Names of the project's sensors, for read()."""
        return list(self._robot.sensors.names)

    @checked
    def read(self, name: str) -> Any:
        """Latest reading of the sensor called `name` (None until its first sample or when nothing is in
        range). Raises an error listing the sensor names when there is no such sensor."""
        return self._robot.sensors.read(name)

    @checked
    def print(self, *args: Any, sep: str | None = " ", end: str | None = "\n", file: Any = None,
              flush: bool = False) -> None:
        """Print to the console (the window's console panel, or stdout when headless: stderr for
        `file=sys.stderr`), flushed.

        Takes print()'s arguments; `file=` an open file of the user's writes there instead (standard
        output and standard error mean the console)."""
        if file is not None and file is not sys.stdout and file is not sys.stderr:
            builtins.print(*args, sep=sep, end=end, file=file, flush=flush)
            return
        sep = " " if sep is None else sep
        end = "\n" if end is None else end
        self._robot.emit(sep.join(str(a) for a in args) + end, error=file is sys.stderr)


# --- the table of calls -----------------------------------------------------------------------------------

def _declared(member: Any) -> tuple[Call, Callable[..., Any]] | None:
    """A declared call's declaration and body (the method unchecked; a property's getter), else None."""
    method: Any = member.fget if isinstance(member, property) else member
    call = getattr(method, "sim_call", None)
    if not isinstance(call, Call):
        return None
    return call, getattr(method, "__wrapped__", method)


_declarations = [found for member in vars(SimulationCalls).values() if (found := _declared(member)) is not None]
_calls: dict[str, Call] = {call.name: call for call, _body in _declarations}
_bodies: dict[str, Callable[..., Any]] = {call.name: body for call, body in _declarations}
BUILT_IN = frozenset(_calls)
"""The calls SEAR declares (SimulationCalls' own methods)."""


def calls() -> dict[str, Call]:
    """Every call a controller may make with a call message, by name, in the order declared (registered
    ones last): what the protocol's welcome carries."""
    return dict(_calls)


def register(method: Callable[..., Any] | property) -> None:
    """Add a call: a method declared with sear.simapi.declare (a property whose getter is declared),
    which becomes a method of every robot's `sim` and part of the table each controller connecting from
    now on gets in its welcome. ValueError when it is not declared or its name is taken."""
    found = _declared(method)
    if found is None:
        raise ValueError(f"{method!r} is not a declared sim call: decorate it with sear.simapi.declare")
    call, body = found
    if call.name in _calls or call.name in TURN_CALLS or hasattr(Sim, call.name):
        raise ValueError(f"sim.{call.name} exists already; a registered call needs a name of its own")
    setattr(SimulationCalls, call.name, method)
    _calls[call.name], _bodies[call.name] = call, body


def unregister(name: str) -> None:
    """Take away a call added with `register` (the built-in ones stay)."""
    if name in _calls and name not in BUILT_IN:
        delattr(SimulationCalls, name)
        del _calls[name], _bodies[name]


def serve_call(sim: SimulationCalls, name: Any, args: Any) -> Any:
    """A controller's call message's [name, args] made on `sim`: the arguments checked by the call's
    declaration (TypeError / ValueError naming the call and argument, or an unknown name), the body run,
    its result as the protocol sends it."""
    call, values = check_call(_calls, name, args)
    return result_to_wire(_bodies[call.name](sim, *values))
