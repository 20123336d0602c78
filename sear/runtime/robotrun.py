"""One robot of a running simulation: `RobotRun`, its vehicle, its sensors and its controller (the user
code process, or an external controller) with the turns it is given and the calls it makes.

Simulation (sear.runtime.simulation) makes one per robot of the project and advances them together.
"""

from __future__ import annotations

from collections.abc import Callable
from types import CodeType
from typing import TYPE_CHECKING, Any, Protocol

from sear.errors import StuckHookError, UserCodeError
from sear.project import Project, Robot
from sear.protocol import calls_to_wire, to_wire
from sear.runtime.logs import CsvLog
from sear.runtime.sim import GridImage, Sim, calls, serve_call
from sear.sensors.suite import SensorSuite
from sear.state import VehicleState
from sear.usercode import ControllerHost, UserCodeRunner

if TYPE_CHECKING:
    from sear.physics.world import World


WORLD_BUILDING_CALLS = frozenset({"add_tree", "add_box", "add_wall", "add_table", "add_shelf"})
"""The `sim` calls that add to the world (each returns nothing): a re-simulated run already holds what
they built, so a taking-over init's are left out (RobotRun.world_kept)."""


class Owner(Protocol):
    """What a RobotRun needs of the simulation it belongs to (a sear.runtime.simulation.Simulation)."""

    @property
    def project(self) -> Project: ...

    @property
    def world(self) -> World: ...

    @property
    def seed(self) -> int: ...

    @property
    def grids(self) -> dict[str, GridImage]: ...

    @property
    def log(self) -> CsvLog | None: ...

    def note_call(self, robot: int, name: str, args: Any) -> None: ...

    def emit(self, text: str, *, error: bool = False) -> None: ...


class RunObserver(Protocol):
    """What watches a run from inside (a recording, sear.recording.writer): Simulation tells it of the
    start (before any controller's init turn), every tick, every input and every piece of output."""

    def started(self, simulation: Any) -> None:
        """The robots, their sensors and the world are built; no controller has had a turn yet."""

    def ticked(self, simulation: Any, result: Any) -> None:
        """A tick (a sear.runtime.simulation.TickResult) is done, its log row written."""

    def call(self, robot: int, name: str, args: Any) -> None:
        """A controller's `sim` call `name` with its wire arguments was served on robot `robot`."""

    def input(self, robot: int, kind: str, args: list[Any]) -> None:
        """A keyboard input of the window ('manual', 'gripper', 'reset') for robot `robot` (-1: all)."""

    def output(self, text: str, error: bool) -> None:
        """User output or an error report of the run."""

    def closed(self, simulation: Any) -> None:
        """The run is over (Simulation.close)."""


class RobotRun:
    """One robot of a running simulation: its vehicle, its sensors, its controller (user code process) and
    the `sim` that controller's calls act on. Simulation._build_robot makes one for every robot of the
    project, the one place a robot's sensors and controller are made; the world's factory
    (sear.physics.robot.build_vehicle) made its vehicle."""

    def __init__(self, simulation: Owner, index: int, robot: Robot, sensors: SensorSuite,
                 code: CodeType | None) -> None:
        self.simulation = simulation
        self.index = index
        """Its place in Project.robots (and World.vehicles)."""
        self.robot = robot
        self.name = robot.name
        self.vehicle = simulation.world.vehicles[index]
        self.sensors = sensors
        self.prefix = f"{robot.name}." if len(simulation.project.robots) > 1 else ""
        """What its log columns and array outputs start with: '' in a one-robot run (today's names),
        'name.' with several robots."""
        self._code = code
        self.runner: ControllerHost | None = None
        self._sent: dict[str, float | None] = {}
        """Each sensor's sample time last sent to the controller: a turn carries only newer readings."""
        self._state: VehicleState | None = None
        self.user_started = False
        self.user_error: UserCodeError | None = None
        self.stuck = False
        """The user code's last failure was a hook that did not return in time."""
        self.with_arrays = any(s.HAS_ARRAYS for s in sensors.sensors)
        self.sim = Sim(self)
        self.world_kept: list[str] | None = None
        """While user code takes over a re-simulated run (sear.recording.resume.attach_user_code): the
        world-building calls (WORLD_BUILDING_CALLS) its init turn made and that were left out, since the
        world already holds what the recorded run's init built; None otherwise."""

    @property
    def state(self) -> VehicleState:
        """Ground truth of this robot now, worked out once per tick on the ticks that ask for it."""
        state = self._state
        if state is None:
            state = self._state = self.vehicle.state(self.simulation.world.time)
        return state

    @property
    def world(self) -> World:
        """The world the robot is in."""
        return self.simulation.world

    @property
    def grids(self) -> dict[str, GridImage]:
        """The grids user code showed (sim.show_grid), by title: the simulation's, shared by its robots."""
        return self.simulation.grids

    def emit(self, text: str, *, error: bool = False) -> None:
        """This robot's output: the simulation's, each line marked with the robot's name when there are
        several robots."""
        if self.prefix and text:
            lines = text.splitlines(keepends=True)
            text = "".join(f"[{self.name}] {line}" for line in lines)
        self.simulation.emit(text, error=error)

    # --- its controller ---------------------------------------------------------------------------

    def _welcome(self) -> dict[str, Any]:
        """The protocol's welcome fields: what a controller knows of the run from the start, and every call
        it may make (the declarations its `sim` methods are made from)."""
        simulation = self.simulation.project.simulation
        return {"sensors": list(self.sensors.names), "time": self.simulation.world.time,
                "physics_hz": float(simulation.physics_hz), "control_hz": float(simulation.control_hz),
                "timeout": float(self.robot.code.hook_timeout), "seed": self.simulation.seed,
                "calls": calls_to_wire(calls().values())}

    def _spawn(self, welcome: dict[str, Any]) -> UserCodeRunner:
        """The robot's user code in a new process (its hello taken, `welcome` sent)."""
        code = self.robot.code
        assert code.user_code is not None
        runner = UserCodeRunner(code.user_code, code.hook_timeout, code=self._code)
        runner.emit = self.emit
        runner.start(welcome)
        return runner

    def attach(self, controller: Callable[[dict[str, Any]], ControllerHost]) -> None:
        """Replace the controller (closing the old one) with the one `controller` returns when given the
        welcome fields, and give it its init turn (UserCodeError when that fails)."""
        if self.runner is not None:
            self.runner.close()
            self.runner = None
        self.user_error, self.stuck, self.user_started = None, False, False
        self._attach(controller(self._welcome()))

    def _attach(self, runner: ControllerHost) -> None:
        """Make `runner` the controller and give it its init turn (before the first physics step)."""
        self.runner = runner
        runner.emit = self.emit
        runner.dispatch = self._serve  # its call messages, made on this robot's sim
        self._sent = {}
        runner.turn("init", self._turn_fields())

    def _serve(self, name: Any, args: Any) -> Any:
        """A controller's call message made on this robot's sim; the simulation notes it once served (its
        journal, its observer)."""
        if self.world_kept is not None and name in WORLD_BUILDING_CALLS:
            self.world_kept.append(str(name))
            return None
        result = serve_call(self.sim, name, args)
        self.simulation.note_call(self.index, name, args)
        return result

    def _turn_fields(self) -> dict[str, Any]:
        """A turn's time (s) and the readings of the sensors sampled since the last turn."""
        readings: dict[str, Any] = {}
        sent = self._sent
        for sensor in self.sensors.sensors:
            when = sensor.last_sample_time
            if when is not None and sent.get(sensor.name) != when:
                sent[sensor.name] = when
                readings[sensor.name] = to_wire(sensor.value(sensor.reading))
        return {"time": self.simulation.world.time, "readings": readings}

    @property
    def user_code_running(self) -> bool:
        return (self.user_started and self.user_error is None and self.runner is not None
                and not self.runner.finished and not self.runner.failed)

    def start_user_code(self) -> None:
        runner = self.runner
        if self.user_started or runner is None:
            return
        self.user_started = True
        self.guard(lambda: runner.turn("start", self._turn_fields()))

    @property
    def can_restart(self) -> bool:
        runner = self.runner
        return (isinstance(runner, UserCodeRunner) and self.user_started
                and (self.user_error is not None or runner.finished))

    def restart_user_code(self) -> bool:
        if not self.can_restart or self.runner is None:
            return False
        self.emit("sear: restarting the user code in a new process.\n")
        try:
            self.attach(self._spawn)
        except UserCodeError as exc:
            self.user_started = True
            self.user_error = exc
            self.emit(f"{exc}\n")
            return False
        self.start_user_code()
        return True

    def guard(self, action: Callable[[], Any]) -> bool:
        """Run `action` (a controller's turn): its result as a bool, False when the controller failed (the
        error is kept in user_error and reported)."""
        try:
            return bool(action())
        except UserCodeError as exc:
            self.user_error = exc
            self.stuck = isinstance(exc, StuckHookError)
            log = self.simulation.log
            if log is not None:
                log.flush()
            self.emit(f"{exc}\n", error=True)
            return False

    def set_manual_input(self, throttle: float, steer: float, brake: bool) -> None:
        """Keyboard driving: throttle and steer in -1..1 of the robot's engine force and steering limit;
        brake applies the full brake force."""
        dyn = self.robot.dynamics
        vehicle = self.vehicle
        vehicle.accelerate(max(-1.0, min(1.0, throttle)) * dyn.engine_force)
        vehicle.steer(max(-1.0, min(1.0, steer)) * dyn.max_steering)
        vehicle.brake(dyn.brake_force if brake else 0.0)
