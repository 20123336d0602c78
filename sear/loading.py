"""Loading a project: the one way from a .prj file to everything a run needs, checked on the way, every
problem at once, each with where it is.

`load_project` serves `sear validate`, `sear run` and the settings window's Simulate button. It reads
the project file, then the terrain, and robot by robot: its body and wheel models or its URDF (its wheels
chosen, its collision report made), its sensors file (parsed once, its sensors' links checked against
the robot) and its user code (compiled, never run, so a syntax error is found without side effects).
Models are read as a run reads them (sear.models.loaded), so a broken mesh is found here and not halfway
into a run. It returns a `Loaded`: the project, the models, each robot's sensors and compiled code, and
the Problems. A Simulation and its World are built from that and read nothing again.

The readers it calls are self-contained: sear.project (the .prj), sear.models (models), sear.sensors.files
(the sensors file). Each problem names the robot (its field, its tab, and its name in the message when
the project has several robots).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from types import CodeType

from sear.codecheck import read_user_code
from sear.errors import Problem, SearError
from sear.models.filecheck import check_choice, special_file
from sear.models.loaded import Models, RobotModels, read_robot_models, read_terrain
from sear.models.meshfiles import TerrainModel
from sear.models.robotdesc.drive import drive_facts, drive_warnings
from sear.models.robotdesc.parse import is_urdf
from sear.models.robotdesc.report import collision_report
from sear.motors import MOTOR_FIELDS, motor_problem
from sear.project import Project
from sear.sensors.checks import read_robot_sensors
from sear.sensors.config import SensorConfig


@dataclass
class LoadedRobot:
    """One robot of a project as loaded. What could not be loaded is None (`models` unless every model of
    the robot was read, `code` when there is no user code or it does not compile)."""

    models: RobotModels | None = None
    """Its body and wheel meshes, or its URDF's, read once."""
    sensors: list[SensorConfig] = field(default_factory=list)
    """Its sensor definitions as the sensors file gives them, parsed once ([] without a sensors file)."""
    code: CodeType | None = None
    """Its user code, compiled (not run)."""
    report: list[str] = field(default_factory=list)
    """Its URDF's collision report (sear.models.robotdesc.report): warnings that do not stop a run."""
    drive_warnings: list[str] = field(default_factory=list)
    """What keeps its URDF body from steering with the project's drive (sear.models.robotdesc.drive):
    warnings that do not stop a run."""


@dataclass
class Loaded:
    """A project as loaded for a run, and every problem found on the way (none: ready to simulate).

    `project` is None when the project file cannot be read; `terrain` when it was not read."""

    project: Project | None
    problems: list[Problem] = field(default_factory=list)
    terrain: TerrainModel | None = None
    robots: list[LoadedRobot] = field(default_factory=list)
    """Every robot as loaded, in Project.robots' order."""

    @property
    def ok(self) -> bool:
        """True when nothing stops the project from simulating."""
        return self.project is not None and not self.problems

    @property
    def models(self) -> Models | None:
        """The terrain and every robot's models, what a World is built from (None unless all were read)."""
        robots = tuple(robot.models for robot in self.robots if robot.models is not None)
        if self.terrain is None or len(robots) != len(self.robots):
            return None
        return Models(self.terrain, robots)

    @property
    def report(self) -> list[str]:
        """Every robot's collision report, as `sear validate` prints it."""
        return [line for robot in self.robots for line in robot.report]

    @property
    def drive_warnings(self) -> list[str]:
        """Every robot's drive warnings, as `sear validate` prints them."""
        return [line for robot in self.robots for line in robot.drive_warnings]


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
    problems: list[Problem] = []
    choices = project.file_choices()
    terrain = read_terrain(project, choices["terrain.file"], problems)
    robots = []
    for index, robot in enumerate(project.robots):
        prefix, who = project.robot_prefix(index), project.robot_who(index)
        motor = motor_problem(robot.dynamics, f"{prefix}dynamics")
        if motor is not None:
            problems.append(Problem(who + motor[0], file=project.path, field=motor[1],
                                    line=_motor_line(project.path, None if index == 0 else robot.name)))
        description, models = read_robot_models(project, index, choices, problems)
        report = [who + str(finding) for finding in collision_report(description)] if description is not None else []
        sensors_choice = choices[f"{prefix}code.sensors"]
        found = check_choice(sensors_choice, allowed=(".xml",), required=False)
        problems += found
        sensors = [] if found else read_robot_sensors(
            sensors_choice, physics_hz=project.simulation.physics_hz,
            description=description, links_known=description is not None or not is_urdf(robot.body.file),
            gripper=robot.body.gripper is not None, who=who, problems=problems)
        code_choice = choices[f"{prefix}code.user_code"]
        found = check_choice(code_choice, allowed=(".py",))
        problems += found
        code = None if found else read_user_code(code_choice, who=who, problems=problems)
        warnings = []
        if models is not None and models.description is not None and models.urdf_wheels is not None:
            facts = drive_facts(models.description, models.urdf_wheels)
            warnings = [who + line for line in drive_warnings(facts, robot.dynamics.drive_type,
                                                               robot.dynamics.engine_force,
                                                               models.description.path.name)]
        robots.append(LoadedRobot(models, sensors, code, report, warnings))
    return Loaded(project, problems, terrain, robots)


def check_project(project: Project) -> list[str]:
    """Every problem that would stop `project` from simulating, as the lines `sear validate` prints; an
    empty list when it is ready."""
    return [str(problem) for problem in load_project(project).problems]


def _motor_line(path: Path | None, robot: str | None) -> int | None:
    """The line of the first motor field in the <dynamics> of the project file at `path` (the first
    robot's when `robot` is None, else that of <robot name=ROBOT> under <extra_robots>), or of <dynamics>
    itself: where a motor whose figures do not go together is written. None when it cannot be read."""
    from lxml import etree

    try:
        root = etree.parse(str(path)).getroot() if path is not None else None
    except (OSError, etree.XMLSyntaxError):
        return None
    if root is None:
        return None
    holder = root if robot is None else next(
        (r for r in root.iterfind("extra_robots/robot") if r.get("name") == robot), None)
    dynamics = holder.find("dynamics") if holder is not None else None
    if dynamics is None:
        return None
    first = next((child for child in dynamics if child.tag in MOTOR_FIELDS), dynamics)
    return int(first.sourceline) if first.sourceline is not None else None
