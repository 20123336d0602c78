"""Loads a project for a run and checks it on the way: every problem at once, each with where it is.

`load_project` is the one way in, for `sear validate`, `sear run` and the settings window's Simulate
button: it reads the project, its sensors file (parsed once), its user code (compiled, never run, so a
syntax error is found without side effects) and its models (read as a run reads them, so a broken mesh
is found here and not halfway into a run), and returns what it loaded with the list of Problems. A
Simulation takes what was loaded rather than reading the files again.
"""

from __future__ import annotations

import ast
import stat
from dataclasses import dataclass, field
from pathlib import Path
from types import CodeType
from typing import Any

from sear.errors import Problem, ProjectError, SearError
from sear.meshio import Models, RobotModels, load_mesh, load_robot, load_terrain
from sear.project import (
    HEIGHTMAP_SUFFIXES,
    MESH_SUFFIXES,
    URDF_SUFFIXES,
    WHEEL_IDS,
    FileChoice,
    Project,
    Robot,
    is_urdf,
    joint_names,
    model_suffix,
)
from sear.robotdesc import RobotDescription, choose_wheels, collision_report
from sear.sensors import registry
from sear.sensors.base import MAX_RAYS_PER_SECOND, sample_rate_hz
from sear.sensors.config import SensorConfig
from sear.sensors.files import load_sensors
from sear.sensors.gripper import GRIPPER_SENSOR
from sear.sensors.mounting import mounted


def check_choice(choice: FileChoice, *, allowed: tuple[str, ...], required: bool = True) -> list[Problem]:
    """Problems with one referenced file: unset, missing, a folder, unreadable or of an unknown type,
    each naming where the settings window chooses it (the choice's tab, label and field)."""
    path = choice.path

    def problem(message: str) -> list[Problem]:
        return [Problem(message, file=path, field=choice.field, tab=choice.tab, label=choice.label)]

    if path is None:
        return problem("no file chosen; choose one in the settings window.") if required else []
    if not path.exists():
        return problem(f"{path} does not exist; choose the file again or restore it.")
    if path.is_dir():
        return problem(f"{path} is a folder, not a file.")
    special = special_file(path)
    if special:
        return problem(special)
    try:
        with path.open("rb"):
            pass
    except OSError as exc:
        return problem(f"{path} cannot be read ({exc.strerror}).")
    if allowed and model_suffix(path) not in allowed:
        return problem(f"{path.name} is not a supported type; use one of {', '.join(allowed)}.")
    return []


def special_file(path: Path) -> str | None:
    """Why `path` is not a regular file that can be read without waiting (a FIFO, a device, a socket:
    opening a FIFO blocks until something writes to it), as a sentence; None for a regular file or one
    that does not exist."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return None
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    what = ("a named pipe (FIFO)" if stat.S_ISFIFO(mode) else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
            else "a socket" if stat.S_ISSOCK(mode) else "not a regular file")
    return f"{path} is {what}, not a file SEAR can read; choose a regular file."


_CODE: dict[str, Any] = {"field": "code.user_code", "tab": "Code Setup"}


def compile_user_code(path: Path) -> tuple[CodeType | None, list[Problem]]:
    """Compile (never run) a Python file: its code object, or the problem (a syntax error names the line)."""
    try:
        source = path.read_bytes()
    except OSError as exc:
        return None, [Problem(f"{path} cannot be read ({exc.strerror}).", file=path, label="user code file",
                              **_CODE)]
    try:
        return compile(source, str(path), "exec", dont_inherit=True), []
    except SyntaxError as exc:
        text = (exc.text or "").strip()
        shown = f" ({text})" if text else ""
        return None, [Problem(f"syntax error in the user code: {exc.msg}{shown}.", file=path, line=exc.lineno,
                              **_CODE)]
    except ValueError as exc:  # e.g. null bytes
        return None, [Problem(f"the user code file is not valid Python source ({exc}).", file=path, **_CODE)]


def check_user_code(path: Path) -> list[Problem]:
    """Compile (never run) a Python file; a syntax error names the file and line."""
    return compile_user_code(path)[1]


def check_hooks(path: Path) -> list[Problem]:
    """The hook rules sear.usercode enforces on load (main_loop or run, not both), read from the syntax
    tree so nothing is executed. Names bound any other way than `def` count as present. Call it on a
    file check_user_code accepted."""
    tree = ast.parse(path.read_bytes(), str(path))
    defined: dict[str, int] = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and any(alias.name == "*" for alias in node.names):
            return []  # a star import may bring the hooks in: only running the code could tell
        names: list[str] = []
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names = [node.name]
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names = [(alias.asname or alias.name).split(".")[0] for alias in node.names]
        else:
            names = [n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)]
        for name in names:
            defined.setdefault(name, node.lineno)
    if "main_loop" in defined and "run" in defined:
        return [Problem(f"the user code defines both main_loop(sim) (line {defined['main_loop']}) and run(sim); "
                        "use one style: main_loop is called every control tick, run(sim) loops itself with "
                        "`while sim.step():`.", file=path, line=defined["run"], **_CODE)]
    if "main_loop" not in defined and "run" not in defined:
        return [Problem("the user code defines neither main_loop(sim) nor run(sim), so it would do nothing; "
                        "start from the template (Code Setup > Create New).", file=path, **_CODE)]
    return []


@dataclass
class Loaded:
    """A project as loaded for a run, and every problem found on the way (none: ready to simulate).

    What could not be loaded is None (the project itself when its file is unreadable, `code` when there
    is no user code or it does not compile, `models` unless every model was read)."""

    project: Project | None
    problems: list[Problem] = field(default_factory=list)
    sensors: list[SensorConfig] = field(default_factory=list)
    """The sensor definitions, parsed once ([] without a sensors file)."""
    code: CodeType | None = None
    """The user code compiled (not run)."""
    models: Models | None = None
    """Terrain, body and wheel meshes, read once."""
    report: list[str] = field(default_factory=list)
    """URDF bodies' collision reports (sear.robotdesc.collision_report): warnings that do not stop a run."""
    robot_sensors: list[list[SensorConfig]] = field(default_factory=list)
    """Each robot's sensor definitions (Project.robots' order; the first is `sensors`)."""
    robot_code: list[CodeType | None] = field(default_factory=list)
    """Each robot's compiled user code (the first is `code`)."""

    @property
    def ok(self) -> bool:
        """True when nothing stops the project from simulating."""
        return self.project is not None and not self.problems


def load_project(source: str | Path | Project) -> Loaded:
    """Load a project (a .prj path, or a Project already in memory) and everything it refers to.

    Never raises for what a user can get wrong: each problem becomes a Problem in the result. A .prj
    that cannot be read gives one problem and no project."""
    if isinstance(source, Project):
        project = source
    else:
        special = special_file(Path(source))
        if special:
            return Loaded(None, [Problem(special, file=Path(source))])
        try:
            project = Project.load(source)
        except SearError as exc:
            return Loaded(None, [Problem.from_error(exc)])
    loaded = Loaded(project)
    problems = loaded.problems
    loaded.models = _load_models(project, problems)
    for index, robot in enumerate(project.robots):
        models = loaded.models.robot_models(index) if loaded.models is not None else None
        sensors, code = _load_robot_code(project, index, problems, models)
        loaded.robot_sensors.append(sensors)
        loaded.robot_code.append(code)
        if models is not None and models.description is not None:
            who = "" if index == 0 else f"robot {robot.name}: "
            loaded.report += [who + str(finding) for finding in collision_report(models.description)]
    loaded.sensors, loaded.code = loaded.robot_sensors[0], loaded.robot_code[0]
    return loaded


def _load_robot_code(project: Project, index: int, problems: list[Problem],
                     models: RobotModels | None) -> tuple[list[SensorConfig], CodeType | None]:
    """Robot `index`'s sensor definitions and compiled user code, adding a Problem for each that cannot be
    read (`models`: the robot's models when they were read, for the links its sensors mount on)."""
    choices = project.robot_file_choices(index)
    code = project.robots[index].code
    compiled: CodeType | None = None
    sensors: list[SensorConfig] = []
    code_problems = check_choice(choices["code.user_code"], allowed=(".py",))
    problems += code_problems
    if not code_problems and code.user_code is not None:
        compiled, code_problems = compile_user_code(code.user_code)
        problems += code_problems or check_hooks(code.user_code)
    sensor_choice = choices["code.sensors"]
    sensor_problems = check_choice(sensor_choice, allowed=(".xml",), required=False)
    problems += sensor_problems
    if not sensor_problems and code.sensors is not None:
        try:
            sensors = load_sensors(code.sensors)
        except SearError as exc:
            problems.append(Problem.from_error(exc, field=sensor_choice.field, tab="Code Setup"))
        else:
            problems += ray_budget_problems(sensors, project.simulation.physics_hz, code.sensors)
            robot = project.robots[index]
            problems += _link_problems(sensors, robot, models, code.sensors, sensor_choice.field)
            if robot.body.gripper is not None and any(s.name == GRIPPER_SENSOR for s in sensors):
                problems.append(Problem(f"a sensor is named {GRIPPER_SENSOR!r}, the name of the gripper's own "
                                        "sensor; rename that sensor (Sensor Wizard).", file=code.sensors,
                                        field=sensor_choice.field, tab="Code Setup"))
    return sensors, compiled


def _link_problems(sensors: list[SensorConfig], robot: Robot, models: RobotModels | None, path: Path,
                   field_name: str) -> list[Problem]:
    """Sensors mounted on links the robot does not have (or on a mesh body, or on a moving link)."""
    if is_urdf(robot.body.file) and models is None:
        return []  # the URDF's own problem is reported already
    try:
        mounted(sensors, models.description if models is not None else None)
    except ProjectError as exc:
        return [Problem(exc.message, file=path, field=field_name, tab="Code Setup", detail=exc.field)]
    return []


def rays_per_second(sensors: list[SensorConfig], physics_hz: float) -> float:
    """Rays all `sensors` cast per simulated second at most: each its rays per sample times its rate,
    a sensor sampling at most once a physics step (its rate above the physics rate counts as that)."""
    total = 0.0
    for config in sensors:
        model = registry.model(config.TYPE)
        rays = model.rays_per_sample(config) if model is not None else 0
        if rays:
            total += rays * min(sample_rate_hz(config), physics_hz)
    return total


def ray_budget_problems(sensors: list[SensorConfig], physics_hz: float, path: Path) -> list[Problem]:
    """The run's limits over all sensors together (each sensor's own are checked when its file is read):
    at most MAX_RAYS_PER_SECOND rays per simulated second."""
    total = rays_per_second(sensors, physics_hz)
    if total <= MAX_RAYS_PER_SECOND:
        return []
    return [Problem(f"the sensors together cast {total:,.0f} rays per simulated second (at a physics rate of "
                    f"{physics_hz:g} Hz); SEAR casts at most {MAX_RAYS_PER_SECOND:,}: lower the update rates, "
                    "use coarser resolutions or fewer sensors.", file=path, field="code.sensors",
                    tab="Code Setup")]


def _load_models(project: Project, problems: list[Problem]) -> Models | None:
    """Read the terrain, then each robot's body and wheel models (or its URDF), in the run's order, adding
    a Problem for each that is not there or not readable; the models when every one was read, else None."""
    terrain = _read(project, project.file_choices()["terrain.file"], problems, terrain=True)
    robots: list[RobotModels | None] = []
    for index, robot in enumerate(project.robots):
        choices = project.robot_file_choices(index)
        if is_urdf(robot.body.file):
            description = _read_robot(project, robot, choices["body.file"], problems)
            models = None
            if description is not None:
                try:
                    models = RobotModels(description.visual_mesh(description.links), {}, description)
                except ProjectError as exc:
                    problems.append(Problem(exc.message, file=description.path, line=exc.line,
                                            field=choices["body.file"].field, tab=choices["body.file"].tab,
                                            detail=exc.field))
            robots.append(models)
            continue
        scale = robot.body.scale
        body = _read(project, choices["body.file"], problems, scale=scale)
        wheels = {wid: _read(project, choices[f"wheels.{wid}.file"], problems, scale=scale) for wid in WHEEL_IDS}
        ok = body is not None and all(w is not None for w in wheels.values())
        robots.append(RobotModels(body, wheels) if ok else None)
    if terrain is None or any(r is None for r in robots):
        return None
    first, *rest = robots
    assert first is not None
    return Models(terrain, first.body, first.wheels, first.description, tuple(r for r in rest if r is not None))


def _read(project: Project, choice: FileChoice, problems: list[Problem], *, terrain: bool = False,
          scale: float = 1.0) -> Any:
    """One model (a TerrainModel when `terrain`, else a mesh) read as a run reads it, or None after adding
    its problem."""
    file_problems = check_choice(choice, allowed=MESH_SUFFIXES + HEIGHTMAP_SUFFIXES if terrain else MESH_SUFFIXES)
    problems += file_problems
    path = choice.path
    if file_problems or path is None:
        return None
    try:
        return load_terrain(project.terrain, tab=choice.tab) if terrain else load_mesh(
            path, scale=scale, tab=choice.tab)
    except ProjectError as exc:
        problems.append(Problem(f"{path}: {exc.message}", file=path, line=exc.line, field=choice.field,
                                tab=choice.tab, label=choice.label))
        return None


def _read_robot(project: Project, robot: Robot, choice: FileChoice,
                problems: list[Problem]) -> RobotDescription | None:
    """A URDF body read as a run reads it, its wheels chosen as a run chooses them; None after adding
    the problem (naming the URDF's line and element, or the wheel field on the Robot Body tab)."""
    file_problems = check_choice(choice, allowed=(*URDF_SUFFIXES, ".xacro"))
    problems += file_problems
    if file_problems:
        return None
    body = robot.body
    try:
        description = load_robot(body, project.path.parent if project.path is not None else None)
    except ProjectError as exc:
        problems.append(Problem(exc.message, file=exc.file or choice.path, line=exc.line, field=choice.field,
                                tab=choice.tab, detail=exc.field))
        return None
    try:
        choose_wheels(description, joint_names(body.left_wheels), joint_names(body.right_wheels),
                      joint_names(body.steering_joints))
    except ProjectError as exc:  # the robot is read: its collision report still helps
        problems.append(Problem(exc.message, file=project.path, field=exc.field, tab=choice.tab,
                                label=(exc.field or "").split(".")[-1].replace("_", " ")))
    return description


def check_project(project: Project) -> list[str]:
    """Every problem that would stop `project` from simulating, as the lines `sear validate` prints; an
    empty list when it is ready."""
    return [str(problem) for problem in load_project(project).problems]
