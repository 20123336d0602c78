"""The simulation loop shared by the simulation window and headless runs: `Simulation` and `TickResult`.

One `Simulation.tick()` is one fixed physics step: inputs -> vehicle -> pybullet step -> sensors sample
(each on its own period of simulated time) -> user code (every control tick, once started) -> log row.
The window only adds a view and a keyboard around the same ticks, so a windowed run and a headless run
with the same seed and inputs compute the same readings.

`tick()` says what it did (a `TickResult`). The one loop around it is `Simulation.advance()`: a number of
ticks, within a wall-time budget for a window's frame; `run(duration)` is that loop for a stretch of
simulated time, optionally kept to the wall clock by a `Pacer` (sear.runtime.pacer), which also tells a
window's timer how many ticks are due. Each robot is a RobotRun (sear.runtime.robotrun); the log is
sear.runtime.logs'. Choosing a window or none, the summary and the process's exit are sear.launcher's.
"""

from __future__ import annotations

import sys
import time as _time
from collections import deque
from collections.abc import Callable
from pathlib import Path
from types import CodeType
from typing import Any, NamedTuple

import numpy as np

from sear.errors import ProjectError, UserCodeError
from sear.loading import Loaded
from sear.models.loaded import load_models
from sear.physics.picking import Pull
from sear.physics.world import World
from sear.project import Project, Robot
from sear.runtime.logs import CsvLog, LogFull, check_log_path
from sear.runtime.pacer import Pacer
from sear.runtime.robotrun import RobotRun, RunObserver
from sear.runtime.sim import GridImage, Sim, calls
from sear.runtime.stdstreams import reopen_std_streams, silence_closed_pipe
from sear.sensors.base import Sensor, SensorContext
from sear.sensors.config import SensorConfig
from sear.sensors.files import load_sensors
from sear.sensors.gripper import GRIPPER_SENSOR, GripperSensor, GripperSensorConfig
from sear.sensors.mounting import mounted
from sear.sensors.suite import SensorSuite, update_together
from sear.state import VehicleState
from sear.usercode import ControllerHost, SwarmProcess

HISTORY_PIECE = 100_000
"""Characters of one piece of output Simulation.output_history keeps (its end)."""


class JournalEntry(NamedTuple):
    """One input of a run, as Simulation.journal keeps it."""

    time: float
    """s of simulated time when it was made."""
    step: int
    """The physics steps done before it (it acts from the next one)."""
    robot: int
    """The robot's index (-1: every robot, or none in particular)."""
    kind: str
    """'call', 'manual', 'gripper', 'reset', 'pull', 'pull_to' or 'release'."""
    name: str
    """The call's name (the kind for the others)."""
    args: list[Any]
    """Its arguments (a call's as the protocol carries them)."""


_PROPERTIES: frozenset[str] | None = None


def _property_calls() -> frozenset[str]:
    """The `sim` calls that only read (properties): not inputs."""
    global _PROPERTIES
    if _PROPERTIES is None:
        _PROPERTIES = frozenset(name for name, call in calls().items() if call.kind == "property")
    return _PROPERTIES


class TickResult(NamedTuple):
    """What one `Simulation.tick()` did, so nothing outside the loop works it out again."""

    control: bool
    """A control tick: user code had its turn (when running) and the log got a row (when recording)."""
    sampled: tuple[Sensor, ...]
    """The sensors that took a sample on this tick (their periods are in simulated time)."""


_QUIET_TICK, _CONTROL_TICK = TickResult(False, ()), TickResult(True, ())
"""The results of the ticks that sample no sensor: most ticks, so they allocate nothing."""


class Simulation:
    """A project loaded into a world with its robots' sensors and user code, advanced one tick at a time.

    Every robot has a RobotRun (`robots`): its vehicle, sensors and controller, all advanced in lock-step
    by one tick. The attributes without a robot in their name (sensors, runner, sim, state) are the first
    robot's, a one-robot run's only one; `driven` is the robot the keyboard drives and the window follows."""

    def __init__(self, project: Project | Loaded, *, seed: int = 0, log_path: str | Path | None = None,
                 realtime: bool = False, output: Callable[[str], None] | None = None,
                 sensor_configs: list[SensorConfig] | None = None,
                 controller: Callable[[dict[str, Any]], ControllerHost] | None = None,
                 observer: RunObserver | None = None, user_code: bool = True, journal: bool = False) -> None:
        """`project` is what sear.loading.load_project loaded (its sensors, compiled user code and models
        are used as they are: nothing is read twice), or a bare Project, whose files are read here.
        `sensor_configs`: the first robot's sensors instead of its sensors file's. `controller`: instead of
        the first robot's user code, the controller it returns when given the protocol's welcome fields
        (an external controller: sear.usercode.ExternalListener.accept). `observer`: told of every tick,
        input and output of the run from before the controllers' init turns (a recording:
        sear.recording.writer). `user_code` False starts no robot's user code (a re-simulation replays
        recorded inputs instead: sear.recording.resume). `journal`: keep every input from the start
        (`journal`), so a recording started later (the window's Record Run) can still be re-simulated."""
        models = None
        robot_sensors: list[list[SensorConfig] | None] = []
        robot_code: list[CodeType | None] = []
        if isinstance(project, Loaded):
            if not project.ok or project.project is None:
                problem = project.problems[0] if project.problems else "the project was not loaded"
                raise ProjectError(f"cannot simulate: {problem}")
            models = project.models
            robot_sensors = [robot.sensors for robot in project.robots]
            robot_code = [robot.code for robot in project.robots]
            project = project.project
        self.project = project
        self.seed = seed
        self.realtime = realtime
        self.output_listeners: list[Callable[[str], None]] = [output] if output else []
        self.output_history: deque[str] = deque(maxlen=2000)
        self.output_gone = False
        """True once standard output's reader went away (a closed pipe): a headless run ends there."""
        self.rng = np.random.default_rng(seed)
        """The first robot's sensors' noise; robot k > 0 draws from default_rng([seed, k])."""
        self.world = World(project, models if models is not None else load_models(project))
        self.robots: list[RobotRun] = []
        self.driven = 0
        """The robot the keyboard drives and the window's camera follows (an index into `robots`)."""
        self.grids: dict[str, GridImage] = {}
        self.swarm: SwarmProcess | None = None
        """The one process running every robot's user code (project.simulation.swarm), or None."""
        """The latest grid user code showed under each title (sim.show_grid), in the order first shown."""
        self.log: CsvLog | None = None
        self.log_failure: LogFull | None = None
        """Why the log stopped being written, when a write failed during the run (the disk was full)."""
        self.run_end: float | None = None
        """s: the simulated time run() runs to (for the free space a failed log needs)."""
        self.pull: Pull | None = None
        """The mouse's pull on a movable body (the window's picking), put on it before every physics step."""
        self.observer: RunObserver | None = None
        """Told of every tick, input and output (a recording), set before the controllers' init turns."""
        self.journal: list[JournalEntry] | None = [] if journal else None
        """Every input so far (`sim` calls that are not properties, keys, pulls), when asked for."""
        try:
            count = len(project.robots)
            robot_sensors += [None] * (count - len(robot_sensors))
            robot_code += [None] * (count - len(robot_code))
            if sensor_configs is not None:
                robot_sensors[0] = sensor_configs
            for index, robot in enumerate(project.robots):
                self.robots.append(self._build_robot(index, robot, robot_sensors[index], robot_code[index]))
            self._with_arrays = any(r.with_arrays for r in self.robots)
            self.physics_hz = project.simulation.physics_hz
            self.control_every = max(1, round(project.simulation.physics_hz / project.simulation.control_hz))
            self.steps = 0
            if log_path is not None:  # before the controllers' init turns: a run whose init fails keeps its log
                self.start_log(log_path)
            if observer is not None:
                self.observer = observer
                observer.started(self)
            first = self.robots[0]
            if controller is not None:
                first._attach(controller(first._welcome()))
            coded = [run for run in self.robots
                     if user_code and run.runner is None and run.robot.code.user_code is not None]
            if project.simulation.swarm and len(coded) > 1:
                self._start_swarm(coded)
            else:
                for run in coded:
                    run._attach(run._spawn(run._welcome()))
        except BaseException:
            self.close()
            raise

    def _start_swarm(self, runs: list[RobotRun]) -> None:
        """The user code of `runs` in one swarm process (project.simulation.swarm), each robot greeted and
        given its init turn in order (UserCodeError when the process does not start or an init fails)."""
        code = runs[0].robot.code
        swarm = SwarmProcess([(run.name, Path(str(run.robot.code.user_code))) for run in runs], code.hook_timeout)
        self.swarm = swarm
        swarm.launch()
        for run, member in zip(runs, swarm.members, strict=True):
            member.emit = run.emit
            member.start(run._welcome())
            run._attach(member)

    def _build_robot(self, index: int, robot: Robot, configs: list[SensorConfig] | None,
                     code: CodeType | None) -> RobotRun:
        """Robot `index`'s sensors (from `configs`, else its sensors file; mounted on its URDF links where
        they name one) and run; its controller is attached by the caller. Its sensors ignore its own body
        and see the others."""
        if configs is None:
            configs = load_sensors(robot.code.sensors) if robot.code.sensors else []
        world = self.world
        try:
            configs = mounted(configs, world.descriptions[index])
        except ProjectError as exc:
            raise ProjectError(exc.message, file=robot.code.sensors, field=exc.field) from None
        vehicle = world.vehicles[index]
        rng = self.rng if index == 0 else np.random.default_rng([self.seed, index])
        # A URDF's base whose centre-of-mass frame is turned against its link frame: rays in the world frame.
        aligned = getattr(vehicle, "cog_aligned", True)
        sensors = SensorSuite(configs, rng=rng, client=world.client, ignore_bodies=world.robot_body_ids(index),
                              origin=world.geodetic_origin, body=vehicle.body_id if aligned else None,
                              body_centre=vehicle.cog, static_world=world.static_world,
                              accessories=self._accessories(index, robot, configs, rng))
        return RobotRun(self, index, robot, sensors, code)

    def _accessories(self, index: int, robot: Robot, configs: list[SensorConfig],
                     rng: np.random.Generator) -> list[Sensor]:
        """The sensors of robot `index`'s accessories, which its sensors file does not list: the gripper's."""
        gripper = self.world.grippers.get(index)
        if gripper is None:
            return []
        if any(config.name == GRIPPER_SENSOR for config in configs):
            raise ProjectError(f"the sensors file has a sensor named {GRIPPER_SENSOR!r}, the name of the "
                               "gripper's sensor; rename that sensor.", file=robot.code.sensors)
        rate = min(self.project.simulation.control_hz, self.project.simulation.physics_hz)
        config = GripperSensorConfig(name=GRIPPER_SENSOR, update_rate_hz=rate)
        context = SensorContext(origin=self.world.geodetic_origin)
        return [GripperSensor(config, rng, context, source=gripper.reading)]

    # --- the first robot (a one-robot run's only one) ------------------------------------------------

    @property
    def sensors(self) -> SensorSuite:
        """The first robot's sensors."""
        return self.robots[0].sensors

    @property
    def sim(self) -> Sim:
        """The first robot's `sim`."""
        return self.robots[0].sim

    @property
    def runner(self) -> ControllerHost | None:
        """The first robot's controller."""
        return self.robots[0].runner if self.robots else None

    @property
    def state(self) -> VehicleState:
        """Ground truth of the first robot now. Worked out on the ticks that ask for it (sensor samples,
        user code, the log, the window), not on every physics step."""
        return self.robots[0].state

    @property
    def user_started(self) -> bool:
        """Whether the user code has been started (Space, or at once headless)."""
        return any(r.user_started for r in self.robots)

    @property
    def user_error(self) -> UserCodeError | None:
        """The failure of a robot's user code (the first robot's that failed), None while all run."""
        return next((r.user_error for r in self.robots if r.user_error is not None), None)

    @property
    def stuck(self) -> bool:
        """A robot's user code failed by a hook that did not return in time."""
        return any(r.stuck for r in self.robots)

    @property
    def driven_robot(self) -> RobotRun:
        """The robot the keyboard drives and the window follows."""
        return self.robots[self.driven]

    def choose_next_robot(self) -> RobotRun:
        """Tab in the window: the keyboard drives the next robot (after the last, the first)."""
        self.driven = (self.driven + 1) % len(self.robots)
        return self.driven_robot

    def choose_robot(self, index: int) -> RobotRun:
        """The keyboard drives robot `index` (its place in `robots`; the window's Objects dock)."""
        if not 0 <= index < len(self.robots):
            raise IndexError(f"there is no robot {index}; the project has {len(self.robots)}")
        self.driven = index
        return self.driven_robot

    # --- inputs ------------------------------------------------------------------------------------------

    def _note(self, robot: int, kind: str, args: list[Any]) -> None:
        """A keyboard or mouse input (`kind`: 'manual', 'gripper', 'reset', 'pull', 'pull_to', 'release'),
        into the journal and to the observer."""
        if self.journal is not None:
            self.journal.append(JournalEntry(self.world.time, self.steps, robot, kind, kind, list(args)))
        if self.observer is not None:
            self.observer.input(robot, kind, args)

    def note_call(self, robot: int, name: str, args: Any) -> None:
        """A controller's `sim` call served on robot `robot` (RobotRun): into the journal (unless it only
        reads, a property) and to the observer."""
        if self.journal is not None and name not in _property_calls():
            self.journal.append(JournalEntry(self.world.time, self.steps, robot, "call", str(name),
                                             list(args) if isinstance(args, list | tuple) else [args]))
        if self.observer is not None:
            self.observer.call(robot, name, args)

    # --- output ------------------------------------------------------------------------------------------

    def emit(self, text: str, *, error: bool = False) -> None:
        """User output and error reports: to every listener, or when there is none to stdout (an `error`
        report to stderr, where a headless run's summary says it is). The text is also kept (the last
        2,000 pieces, each cut to its last HISTORY_PIECE characters), so a console opened later can show
        what came before."""
        self.output_history.append(text if len(text) <= HISTORY_PIECE else text[-HISTORY_PIECE:])
        if self.observer is not None:
            self.observer.output(text, error)
        if not self.output_listeners:
            stream = sys.stderr if error else sys.stdout
            if stream is None or stream.closed:  # user code closed it: SEAR's console stays
                reopen_std_streams()
                stream = sys.stderr if error else sys.stdout
            try:
                stream.write(text)
                stream.flush()
            except BrokenPipeError:
                silence_closed_pipe("stderr" if error else "stdout")
                self.output_gone = True
        for listener in self.output_listeners:
            listener(text)

    def start_log(self, path: str | Path, *, force: bool = True) -> None:
        """Start (or restart) a CSV log at `path`: ProjectError when that would overwrite one of the
        project's files, or (without `force`) any existing file (check_log_path). A run of several robots
        has a column block per robot ('name.truth.x', 'name.front_ir.distance')."""
        check_log_path(path, self.project, force=force)
        self.stop_log()
        self.log_failure = None
        if len(self.robots) == 1:
            self.log = CsvLog(path, self.sensors.log_columns(), on_failure=self._log_failed)
        else:
            self.log = CsvLog(path, [], robots=[(r.prefix, r.sensors.log_columns()) for r in self.robots],
                              on_failure=self._log_failed)

    def _log_failed(self, failure: LogFull) -> None:
        """A write of the log failed (the disk is full): the log is closed whole (CsvLog); say so. A
        headless run stops at this tick (sear.launcher); a window goes on without recording."""
        self.log_failure = failure
        self.emit(f"sear: {failure.message(self.run_end)}\n", error=True)

    def stop_log(self) -> Path | None:
        if self.log is None:
            return None
        self.log.close()
        path, self.log = self.log.path, None
        return path

    # --- control (every robot's controller) ---------------------------------------------------------------

    def attach(self, controller: Callable[[dict[str, Any]], ControllerHost]) -> None:
        """Replace the first robot's controller (closing the old one) with the one `controller` returns
        when given the welcome fields, and give it its init turn (UserCodeError when that fails). User
        code is then not started: start_user_code() starts it."""
        self.robots[0].attach(controller)

    @property
    def user_code_running(self) -> bool:
        """Whether any robot's user code is running."""
        return any(r.user_code_running for r in self.robots)

    def start_user_code(self) -> None:
        """Start every robot's main_loop / run(sim) (Space in the window; at once in headless runs)."""
        for run in self.robots:
            run.start_user_code()

    def collect_result(self, index: int) -> Any:
        """What robot `index`'s user code's optional result(sim) hook returns now (a dict of names to
        numbers or text; None without the hook, or when the user code is not running): `sear batch` asks
        each robot at the end of a run, over the protocol's `collect` turn. A failure there is the user
        code's error, as in any hook."""
        run = self.robots[index]
        runner = run.runner
        if runner is None or not run.user_code_running:
            return None
        runner.turn_result = None
        run.guard(lambda: runner.turn("collect", run._turn_fields()))
        return runner.turn_result if run.user_error is None else None

    @property
    def can_restart(self) -> bool:
        """Whether restart_user_code() can start some robot's user code again: it is the project's own (an
        external controller cannot be restarted from here) and it has failed or finished."""
        return any(r.can_restart for r in self.robots)

    def restart_user_code(self) -> bool:
        """Space after user code failed or finished: each such robot's code in a fresh process, its init
        again, then started. True when one was restarted (a failure to load is reported like any user
        code error)."""
        restarted = False
        for run in self.robots:
            restarted = run.restart_user_code() or restarted
        return restarted

    def reset(self) -> None:
        """Put every robot back at its start pose (Enter in the window)."""
        self.world.reset_vehicle()
        for run in self.robots:
            run._state = None
        self._note(-1, "reset", [])

    def set_manual_input(self, throttle: float, steer: float, brake: bool) -> None:
        """Keyboard driving of the driven robot: throttle and steer in -1..1 of its engine force and
        steering limit; brake applies its full brake force."""
        self.driven_robot.set_manual_input(throttle, steer, brake)
        self._note(self.driven, "manual", [throttle, steer, brake])

    def set_gripper_input(self, open: bool | None = None, lift: int = 0) -> None:
        """Keyboard gripper of the driven robot (on a key's press or release, not every tick): `open`
        True/False opens/closes the paddles (None: as they are); `lift` +1 sends the lift towards its top,
        -1 towards its bottom, 0 stops it where it is now. Nothing without a gripper."""
        gripper = self.world.grippers.get(self.driven)
        if gripper is None:
            return
        self._note(self.driven, "gripper", [open, lift])
        if lift == 0:
            gripper.stop_lift()
        gripper.command(open=open, height=gripper.travel if lift > 0 else 0.0 if lift < 0 else None)

    def start_pull(self, body_id: int, point: np.ndarray | list[float]) -> Pull:
        """The mouse grabs movable body `body_id` at `point` (m, world frame): it is pulled towards the
        point given to pull_to() before every physics step until release_pull() (ValueError for a fixed body)."""
        point = [float(c) for c in point]
        self.pull = Pull(self.world, body_id, np.array(point))
        self._note(-1, "pull", [body_id, *point])
        return self.pull

    def pull_to(self, target: np.ndarray | list[float]) -> None:
        """Where the grabbed point is pulled to now (m, world frame)."""
        if self.pull is None:
            return
        target = [float(c) for c in target]
        self.pull.target = np.array(target)
        self._note(-1, "pull_to", target)

    def release_pull(self) -> None:
        """The mouse lets go."""
        if self.pull is None:
            return
        self.pull = None
        self._note(-1, "release", [])

    # --- the loop ----------------------------------------------------------------------------------------

    def tick(self) -> TickResult:
        """One physics step, then sensors, then (on control ticks) user code and the log; says which.
        Robots take their control turns together: every controller is given its turn, the log row is
        written while they think, then each turn is finished."""
        world = self.world
        robots = self.robots
        if self.pull is not None:
            self.pull.apply()
        if world.step():
            for index, (t, x, y) in zip(world.fell, world.falls[-len(world.fell):], strict=True):
                who = "The robot" if len(robots) == 1 else f"Robot {robots[index].name}"
                self.emit(f"{who} fell off the edge of the terrain (at x = {x:.1f} m, y = {y:.1f} m) and is back "
                          f"at its start pose (t = {t:.2f} s).\n")
        self.steps += 1
        log = self.log
        sampled: list[Sensor] | tuple[()] = ()
        for run in robots:
            run._state = None
        sampling = [run for run in robots if world.time + 1e-9 >= run.sensors.next_due]
        # Every robot's rays of the tick in one batch (sear.sensors.suite.update_together).
        dues = (update_together([run.sensors for run in sampling], [run.state for run in sampling])
                if len(sampling) > 1 else [run.sensors.update(run.state) for run in sampling])
        for run, due in zip(sampling, dues, strict=True):
            if due:
                if self._with_arrays and log is not None:
                    for sensor in due:
                        if sensor.HAS_ARRAYS and sensor.reading is not None:
                            stamp = world.time if sensor.reading_time is None else sensor.reading_time
                            log.add_arrays(run.prefix + sensor.name, stamp, sensor.arrays(sensor.reading))
                sampled = due if not sampled else [*sampled, *due]
        control = self.steps % self.control_every == 0
        if control:
            turns: list[RobotRun] = []
            for run in robots:
                runner = run.runner
                if runner is not None and run.user_code_running:
                    if log is not None and not turns:  # the log on disk reaches this tick before a controller moves on
                        log.flush()
                    fields = run._turn_fields()
                    if run.guard(lambda runner=runner, fields=fields: runner.give_turn("tick", fields)):  # type: ignore[misc]
                        turns.append(run)
            if log is not None:  # while the controllers take their turns: their commands do not change the row
                if len(robots) == 1:
                    log.write(self.state, self.sensors.log_values())
                else:
                    log.write_robots(world.time, [(r.state, r.sensors.log_values()) for r in robots])
            for run in turns:
                runner = run.runner
                if runner is not None and not runner.failed:  # a swarm ended by another robot's hang: no turn left
                    run.guard(runner.finish_turn)
        result = TickResult(control, tuple(sampled)) if sampled else _CONTROL_TICK if control else _QUIET_TICK
        if self.observer is not None:
            self.observer.ticked(self, result)
        return result

    def steps_until(self, time: float) -> int:
        """Ticks from now until simulated `time` (s), 0 when it has passed: a run stops exactly there."""
        return max(0, round((time - self.world.time) * self.physics_hz))

    def advance(self, steps: int, *, budget: float | None = None, pacer: Pacer | None = None,
                before_tick: Callable[[], None] | None = None,
                after_tick: Callable[[TickResult], object] | None = None) -> int:
        """Up to `steps` ticks; returns how many were done. Fewer with `budget` once that many wall
        seconds have passed (a window's frame must not freeze), or when
        `after_tick` returns a true value. With `pacer`, each tick waits for the wall clock. `before_tick`
        runs before every tick (a window's held keys), `after_tick` after it with what the tick did (a
        script's own bookkeeping and its reasons to stop early)."""
        deadline = None if budget is None else _time.perf_counter() + budget
        tick = self.tick
        for done in range(steps):
            if deadline is not None and _time.perf_counter() > deadline:
                return done
            if before_tick is not None:
                before_tick()
            result = tick()
            if after_tick is not None and after_tick(result):
                return done + 1
            if pacer is not None:
                pacer.wait()
        return steps

    def run(self, duration: float, *, pace: bool | None = None,
            after_tick: Callable[[TickResult], object] | None = None) -> int:
        """Tick until `duration` more simulated seconds have passed (or `after_tick` returned a true
        value); returns the ticks done. `pace` keeps to the wall clock (default: the
        simulation's `realtime`); `after_tick` as for advance()."""
        pace = self.realtime if pace is None else pace
        self.run_end = self.world.time + duration
        return self.advance(round(duration * self.physics_hz), pacer=Pacer(self) if pace else None,
                            after_tick=after_tick)

    def close(self) -> None:
        """Stop the controller (a run(sim) sees sim.step() return False and may finish; its process
        ends), flush the log, free the physics. Closing twice does nothing more."""
        for run in getattr(self, "robots", ()):
            if run.runner is not None:
                run.runner.close()
        swarm = getattr(self, "swarm", None)
        if swarm is not None:
            swarm.close()
        observer, self.observer = getattr(self, "observer", None), None
        if observer is not None:
            observer.closed(self)
        self.stop_log()
        self.world.close()
