"""A project's models as loaded, what its world is built from: the terrain, and each robot's body and
wheel meshes, or its URDF description with the wheels chosen on it; and reading them, each file once,
every problem reported as a Problem naming the robot, the field and the tab. Pure (no pybullet, no Qt).

Above the readers it calls, sear.models.meshfiles (mesh files, heightmaps) and sear.models.robotdesc (URDF
files). sear.loading.load_project reads a project's models here with the rest of the project;
sear.physics.world builds the world from them without reading or deriving anything again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from sear.errors import Problem, ProjectError
from sear.models.filecheck import FileChoice, check_choice
from sear.models.meshfiles import (
    HEIGHTMAP_SUFFIXES,
    MESH_SUFFIXES,
    TerrainModel,
    convex_hull_problem,
    load_mesh,
    load_terrain,
)
from sear.models.robotdesc.model import RobotDescription
from sear.models.robotdesc.parse import URDF_SUFFIXES, is_urdf, load_urdf, package_root_paths
from sear.models.robotdesc.wheels import UrdfWheels, choose_wheels, wheel_ids
from sear.project import WHEEL_IDS, Project, joint_names

if TYPE_CHECKING:
    import trimesh


@dataclass(frozen=True)
class RobotModels:
    """One robot's models as its vehicle is built from them, in metres.

    A mesh body: its body model and its four wheel models (by WHEEL_IDS), each in its own model frame
    scaled by the body's scale. A URDF body: its links but the wheels' as one mesh in the root link's
    frame, each wheel's links in that wheel's link frame (by wheel_ids), all at the zero pose, with the
    description and the wheels chosen on it."""

    body: trimesh.Trimesh
    wheels: dict[str, trimesh.Trimesh]
    lowest: float
    """z of the robot's lowest point in its body frame (URDF: root link frame) when it stands on level
    ground at rest, m (the bottom of its lowest wheel, or of its lowest collision shape): the body frame
    starts -lowest above the ground."""
    description: RobotDescription | None = None
    """The URDF as read (None for a mesh body)."""
    urdf_wheels: UrdfWheels | None = None
    """The URDF's wheel and steering joints (None for a mesh body)."""


@dataclass(frozen=True)
class Models:
    """A project's models as loaded: the terrain and every robot's, in Project.robots' order."""

    terrain: TerrainModel
    robots: tuple[RobotModels, ...]


def mesh_robot_models(body: trimesh.Trimesh, wheels: dict[str, trimesh.Trimesh],
                      positions: dict[str, tuple[float, float, float] | None]) -> RobotModels:
    """A mesh robot's models: its `body` and `wheels` meshes (by WHEEL_IDS) and where the project puts
    each wheel's centre in the body frame (`positions`, m; None: the model's own offset, the centre of
    its bounding box). A wheel's lowest point is its centre less half its height."""
    bottoms = []
    for wid in WHEEL_IDS:
        lo, hi = wheels[wid].bounds
        position = positions[wid]
        centre = np.asarray(position if position is not None else (lo + hi) / 2.0)
        bottoms.append(centre[2] - (hi[2] - lo[2]) / 2.0)
    return RobotModels(body, wheels, float(min(bottoms)))


def urdf_robot_models(description: RobotDescription, wheels: UrdfWheels) -> RobotModels:
    """A URDF robot's models: its visual shapes (RobotDescription.visual_mesh) split into the body and
    each wheel's subtree. Raises ProjectError for a mesh that cannot be read."""
    wheel_links = {link for w in wheels.wheels for link in description.subtree(w.link)}
    body = description.visual_mesh([name for name in description.links if name not in wheel_links])
    ids = wheel_ids(wheels)
    wheel_meshes = {ids[w.joint]: description.visual_mesh(description.subtree(w.link), frame=w.link)
                    for w in wheels.wheels}
    return RobotModels(body, wheel_meshes, description.lowest_point(), description, wheels)


# --- reading a project's models --------------------------------------------------------------------

def load_models(project: Project) -> Models:
    """Every model of `project`, read as sear.loading.load_project reads them, for a world built from a
    bare Project (scripts, tests): ProjectError for the first problem."""
    problems: list[Problem] = []
    choices = project.file_choices()
    terrain = read_terrain(project, choices["terrain.file"], problems)
    robots = [read_robot_models(project, index, choices, problems)[1] for index in range(len(project.robots))]
    if problems or terrain is None:
        raise ProjectError(str(problems[0]))
    return Models(terrain, tuple(models for models in robots if models is not None))


def read_terrain(project: Project, choice: FileChoice, problems: list[Problem]) -> TerrainModel | None:
    """The terrain (a mesh or a heightmap image) `choice` names, or None after adding its problem."""
    if _file_problems(choice, MESH_SUFFIXES + HEIGHTMAP_SUFFIXES, problems) or choice.path is None:
        return None
    try:
        return load_terrain(project.terrain, tab=choice.tab)
    except ProjectError as exc:
        problems.append(_unreadable(choice, exc))
        return None


def read_robot_models(project: Project, index: int, choices: dict[str, FileChoice],
                      problems: list[Problem]) -> tuple[RobotDescription | None, RobotModels | None]:
    """Robot `index`'s URDF (None for a mesh body, or one that cannot be read) and its models (None unless
    every one was read), adding a Problem for each file that is not there or not readable and for wheel
    fields the URDF does not have (`choices`: Project.file_choices)."""
    robot, prefix, who = project.robots[index], project.robot_prefix(index), project.robot_who(index)
    body_choice = choices[f"{prefix}body.file"]
    if is_urdf(robot.body.file):
        description = _read_urdf(project, index, body_choice, problems)
        if description is None:
            return None, None
        try:
            wheels = choose_wheels(description, joint_names(robot.body.left_wheels),
                                   joint_names(robot.body.right_wheels), joint_names(robot.body.steering_joints))
        except ProjectError as exc:
            where = exc.field or ""
            problems.append(Problem(exc.message, file=project.path, field=prefix + where, tab=body_choice.tab,
                                    label=who + where.split(".")[-1].replace("_", " ")))
            return description, None
        try:
            return description, urdf_robot_models(description, wheels)
        except ProjectError as exc:
            problems.append(Problem(who + exc.message, file=description.path, line=exc.line, field=body_choice.field,
                                    tab=body_choice.tab, detail=exc.field))
            return description, None
    scale = robot.body.scale
    body = _read_mesh(body_choice, scale, problems)
    if body is not None:
        hull = convex_hull_problem(body)
        if hull:
            problems.append(Problem(f"{body_choice.path}: {hull}", file=body_choice.path, field=body_choice.field,
                                    tab=body_choice.tab, label=body_choice.label))
            body = None
    wheels_read = {wid: _read_mesh(choices[f"{prefix}wheels.{wid}.file"], scale, problems) for wid in WHEEL_IDS}
    meshes = {wid: mesh for wid, mesh in wheels_read.items() if mesh is not None}
    if body is None or len(meshes) != len(WHEEL_IDS):
        return None, None
    return None, mesh_robot_models(body, meshes, {wid: robot.wheels[wid].position for wid in WHEEL_IDS})


def _read_mesh(choice: FileChoice, scale: float, problems: list[Problem]) -> trimesh.Trimesh | None:
    """One body or wheel model `choice` names, scaled by `scale`, or None after adding its problem."""
    if _file_problems(choice, MESH_SUFFIXES, problems) or choice.path is None:
        return None
    try:
        return load_mesh(choice.path, scale=scale, tab=choice.tab)
    except ProjectError as exc:
        problems.append(_unreadable(choice, exc))
        return None


def _read_urdf(project: Project, index: int, choice: FileChoice, problems: list[Problem]) -> RobotDescription | None:
    """Robot `index`'s URDF body `choice` names, or None after adding its problem (naming the URDF's line
    and element); its package roots are relative to the project's folder."""
    if _file_problems(choice, (*URDF_SUFFIXES, ".xacro"), problems) or choice.path is None:
        return None
    folder = project.path.parent if project.path is not None else None
    try:
        return load_urdf(choice.path, package_root_paths(project.robots[index].body.package_roots, folder))
    except ProjectError as exc:
        problems.append(Problem(project.robot_who(index) + exc.message, file=exc.file or choice.path, line=exc.line,
                                field=choice.field, tab=choice.tab, detail=exc.field))
        return None


def _file_problems(choice: FileChoice, allowed: tuple[str, ...], problems: list[Problem]) -> bool:
    """Add the problems of the file `choice` names (check_choice) to `problems`; whether there were any."""
    found = check_choice(choice, allowed=allowed)
    problems += found
    return bool(found)


def _unreadable(choice: FileChoice, exc: ProjectError) -> Problem:
    """A model file that is there but cannot be read, printed with the file's tab and label."""
    return Problem(f"{choice.path}: {exc.message}", file=choice.path, line=exc.line, field=choice.field,
                   tab=choice.tab, label=choice.label)
