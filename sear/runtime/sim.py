"""The `sim` object a script's or a controller's calls act on, on the simulation's side: `Sim`, one per
robot (RobotRun.sim), and `GridImage`, what sim.show_grid leaves for the window.

Robot is what the calls need of the robot they act on (a sear.runtime.robotrun.RobotRun): its vehicle,
sensors, state and output, and the world it is in.
"""

from __future__ import annotations

import builtins
import sys
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

import numpy as np

from sear.errors import SearError
from sear.protocol import Pose
from sear.simapi import checked
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


class Sim:
    """The simulation's side of the `sim` calls a controller makes (sear.controller.Sim is what user code
    holds; its calls arrive here through the controller protocol), and of the same calls made directly
    by a script that drives a Simulation itself: read sensors, drive, add obstacles, print.

    Units: metres, seconds, newtons, radians. Drive inputs hold until changed, like pedals. Each robot
    has its own `sim` (RobotRun.sim): its sensors, its drive, its pose; the world's calls (time, obstacles)
    are shared.
    """

    def __init__(self, robot: Robot) -> None:
        self._r = robot

    @property
    def time(self) -> float:
        """Simulated time since the start, s."""
        return self._r.world.time

    @property
    def sensor_names(self) -> list[str]:
        """Names of the project's sensors, for read()."""
        return list(self._r.sensors.names)

    @checked
    def read(self, name: str) -> Any:
        """Latest reading of the sensor called `name` (None until its first sample or when nothing is in
        range). Raises an error listing the sensor names when there is no such sensor."""
        return self._r.sensors.read(name)

    @checked
    def gripper(self, open: bool | None = None, height: float | None = None) -> None:
        """The gripper at the robot's front (Robot Body Model tab): open (True) or close (False) its
        paddles, and lift them to `height` m above their lowest position (clamped to the lift's travel);
        None keeps either command as it is. Commands hold until changed; the motors move at their own
        speed (docs/gripper.md). An error when the robot has no gripper."""
        gripper = self._r.world.grippers.get(self._r.index)
        if gripper is None:
            raise SearError("sim.gripper: this robot has no gripper; add one on the Robot Body Model tab "
                            "(Gripper) or in the project file's <body><gripper>.")
        gripper.command(open=open, height=height)

    @checked
    def accelerate(self, force: float) -> None:
        """Engine force, N (negative reverses); 0 to coast."""
        self._r.vehicle.accelerate(force)

    @checked
    def brake(self, force: float) -> None:
        """Brake force, N (0 releases the brake)."""
        self._r.vehicle.brake(force)

    @checked
    def steer(self, angle: float) -> None:
        """Steering angle, rad, positive left, clamped to the robot's steering limit (skid and
        differential drive: turns by driving the sides differentially)."""
        self._r.vehicle.steer(angle)

    @checked
    def drive(self, left: float, right: float) -> None:
        """Drive force of the left and right side, N (negative reverses), until accelerate() (or, skid
        and differential drive, steer()) takes over. Skid: each side's two wheels share its force;
        differential: each driven wheel gets its side's; car: each rear wheel gets its side's (the
        front wheels still steer)."""
        self._r.vehicle.drive(left, right)

    @checked
    def add_tree(self, x: float, y: float, z: float | None = None) -> None:
        """A static tree whose trunk axis stands at (x, y) m, its foot at height z m: a trunk 0.3 m wide
        and 2 m tall, a conical crown 2.4 m wide from 1.5 m up to its tip 4.5 m above the foot. z None
        puts the foot on the lowest ground under the trunk (on a slope the uphill edge sinks in)."""
        self._r.world.add_tree(x, y, z)

    @checked
    def add_box(self, x: float, y: float, z: float | None = None, size: float = 1.0, mass: float = 1.0) -> None:
        """A cube of edge `size` m and `mass` kg (0: immovable), edges along x and y, its CENTRE at
        (x, y, z) m. z None rests its bottom on the highest ground under it (on a slope: touching the
        uphill edge; a movable box then settles). A movable box falls under gravity; mass 0 stays put."""
        self._r.world.add_box(x, y, z, size=size, mass=mass)

    @checked
    def add_wall(self, x1: float, y1: float, x2: float, y2: float, height: float = 1.0,
                 thickness: float = 0.2) -> None:
        """A static wall `height` m tall and `thickness` m thick whose centre line runs from (x1, y1) to
        (x2, y2) m, extended past each end point by thickness / 2 (walls sharing an end point close
        the corner). Level bottom at the lowest ground under it, top `height` above that: on a slope
        it never floats and its uphill part sinks into the ground."""
        self._r.world.add_wall(x1, y1, x2, y2, height=height, thickness=thickness)

    @checked
    def add_table(self, x: float, y: float, width: float, depth: float, height: float) -> None:
        """A static table centred on (x, y) m: a top `width` m along x and `depth` m along y whose upper
        face is `height` m above the lowest ground under its legs, on four legs at its corners. A robot
        lower than the top's underside drives under it; the sensors see its legs and top."""
        self._r.world.add_table(x, y, width, depth, height)

    @checked
    def read_sick(self, name: str) -> np.ndarray | None:
        """The latest scan of LIDAR `name` packed as SICK LMS2xx 16-bit values (needs sick_format in its
        definition): millimetres when its range fits 8.191 m, else centimetres; 0x1FFF = no return."""
        return getattr(self._r.sensors.sensor(name), "sick", None)

    @checked
    def show_grid(self, grid: np.ndarray, x: float = 0.0, y: float = 0.0, cell: float = 0.1,
                  title: str | None = "grid") -> None:
        """Show `grid` (rows south to north, columns west to east; 0 white .. 1 black, NaN unknown) in the
        window's Grids dock under `title` (None: "grid"), its south-west corner at (x, y) m, cells `cell`
        m wide. The latest grid of each title is kept in Simulation.grids (headless runs too; with several
        robots the title starts with the robot's name and a dot)."""
        self._r.grids[self._r.prefix + (title or "grid")] = GridImage(grid.copy(), x, y, cell, self._r.world.time)

    @property
    def pose(self) -> Pose:
        """Ground-truth pose (for debugging; a real robot has only its sensors)."""
        state = self._r.state
        x, y, z = state.position.tolist()
        roll, pitch, yaw = quaternion_to_euler(state.orientation)
        return Pose(x, y, z, roll, pitch, yaw)

    @property
    def speed(self) -> float:
        """Ground-truth speed, m/s."""
        return float(np.linalg.norm(self._r.state.linear_velocity))

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
        self._r.emit(sep.join(str(a) for a in args) + end, error=file is sys.stderr)
