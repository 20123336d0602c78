"""A robot's sensors file read for a run, with the checks only a run's context can make: the rays all its
sensors cast per simulated second within the ray caster's budget, each sensor's link on the robot, and
no sensor under the gripper's sensor's name. Each problem is a Problem naming the sensors file, its field
and its tab, and the robot when the project has several (sear.loading.load_project collects them).
"""

from __future__ import annotations

from sear.errors import Problem, ProjectError, SearError
from sear.models.robotdesc.model import RobotDescription
from sear.project import FileChoice
from sear.sensors import registry
from sear.sensors.base import MAX_RAYS_PER_SECOND, sample_rate_hz
from sear.sensors.config import SensorConfig
from sear.sensors.files import load_sensors
from sear.sensors.gripper import GRIPPER_SENSOR
from sear.sensors.mounting import mounted

TAB = "Code Setup"
"""The settings window's tab that chooses the sensors file."""


def read_robot_sensors(choice: FileChoice, *, physics_hz: float, description: RobotDescription | None,
                       links_known: bool, gripper: bool, who: str = "",
                       problems: list[Problem]) -> list[SensorConfig]:
    """The sensor definitions of the sensors file `choice` names (checked: sear.models.filecheck.check_choice)
    as the file gives them ([] without one, or after adding its problem to `problems`), checked for a run
    at `physics_hz`: the ray budget, the links they mount on (`description`: the robot's URDF, None for a
    mesh body; `links_known`: False when its URDF could not be read, so its links are not checked) and the
    gripper's name (`gripper`: the robot has one). `who` names the robot in messages
    (sear.project.Project.robot_who)."""
    path, field = choice.path, choice.field
    if path is None:
        return []
    try:
        sensors = load_sensors(path)
    except SearError as exc:
        problem = Problem.from_error(exc, field=field, tab=TAB)
        problems.append(Problem(who + problem.message, file=problem.file, line=problem.line, field=problem.field,
                                tab=problem.tab, detail=problem.detail))
        return []
    total = rays_per_second(sensors, physics_hz)
    if total > MAX_RAYS_PER_SECOND:
        problems.append(Problem(f"{who}the sensors together cast {total:,.0f} rays per simulated second (at a "
                                f"physics rate of {physics_hz:g} Hz); SEAR casts at most {MAX_RAYS_PER_SECOND:,}: "
                                "lower the update rates, use coarser resolutions or fewer sensors.", file=path,
                                field=field, tab=TAB))
    if links_known:
        try:
            mounted(sensors, description)
        except ProjectError as exc:
            problems.append(Problem(who + exc.message, file=path, field=field, tab=TAB, detail=exc.field))
    if gripper and any(s.name == GRIPPER_SENSOR for s in sensors):
        problems.append(Problem(f"{who}a sensor is named {GRIPPER_SENSOR!r}, the name of the gripper's own sensor; "
                                "rename that sensor (Sensor Wizard).", file=path, field=field, tab=TAB))
    return sensors


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
