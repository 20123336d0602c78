"""A new project that simulates at once (File > New): flat ground, a box robot on four cylinder wheels,
the template user code and a sensors file, written as ordinary files next to the new `.prj`.

The models are written next to the project rather than made in memory whenever a project names no model:
the `.prj` then means exactly what it says to every reader (`sear validate`, `sear run`, older SEAR
versions, other tools), a forgotten model in a hand-written project is still reported as missing, and the
user sees the files, can open them in any mesh tool and replace them one by one in the settings window.
They are small (the ground is 100 m x 100 m of 5 m squares, 800 triangles; the box 12; a wheel 128).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import trimesh

from sear.errors import ProjectError
from sear.project import WHEEL_IDS, Dynamics, Project
from sear.resources import packaged

GROUND_SIZE_M = 100.0
"""Edge of the square of flat ground, metres (the world's footprint)."""
GROUND_STEP_M = 5.0
"""Edge of the ground mesh's squares, metres."""
BODY_EXTENTS_M = (0.6, 0.4, 0.15)
"""The box body: length (x, forward), width (y), height (z), metres (the demo rover's size)."""
WHEEL_RADIUS_M = 0.1
WHEEL_WIDTH_M = 0.06
WHEEL_POSITIONS_M: dict[str, tuple[float, float, float]] = {
    "left_front": (0.22, 0.25, -0.08), "right_front": (0.22, -0.25, -0.08),
    "left_rear": (-0.22, 0.25, -0.08), "right_rear": (-0.22, -0.25, -0.08),
}
"""Wheel centres in the body frame (x forward, y left, z up), metres: outside the box's sides with 2 cm to
spare, their axles 8 cm below its centre."""
NEW_DYNAMICS = Dynamics(mass=20.0, engine_force=40.0, brake_force=20.0, suspension_stiffness=40.0,
                        suspension_compression=2.3, suspension_damping=2.4, friction_slip=1.0)
"""A 20 kg robot's dynamics (the demo rover's): the template code's 20 N pushes it to its 1 m/s. The
Project defaults (Reset Defaults) are the thesis's 400 kg vehicle, which 20 N would not move: the
rolling resistance of its undriven front wheels alone is 0.015 x 200 kg x 9.81 m/s² = 29 N."""


@dataclass(frozen=True)
class StarterFiles:
    """The files of a new project, by role, in the folder of its `.prj`."""

    terrain: str = "terrain.obj"
    body: str = "body.obj"
    wheel: str = "wheel.obj"
    user_code: str = "user_code.py"
    sensors: str = "sensors.xml"

    def names(self) -> tuple[str, ...]:
        return (self.terrain, self.body, self.wheel, self.user_code, self.sensors)


STARTER_FILES = StarterFiles()


def make_ground() -> trimesh.Trimesh:
    """Flat ground at z = 0, GROUND_SIZE_M square centred on the origin, grass green."""
    n = round(GROUND_SIZE_M / GROUND_STEP_M) + 1
    xs = np.linspace(-GROUND_SIZE_M / 2, GROUND_SIZE_M / 2, n)
    gx, gy = np.meshgrid(xs, xs, indexing="xy")
    vertices = np.column_stack([gx.ravel(), gy.ravel(), np.zeros(n * n)])
    idx = np.arange(n * n).reshape(n, n)
    a, b, c, d = idx[:-1, :-1].ravel(), idx[:-1, 1:].ravel(), idx[1:, 1:].ravel(), idx[1:, :-1].ravel()
    faces = np.concatenate([np.column_stack([a, b, c]), np.column_stack([a, c, d])])
    colours = np.tile(np.array([[90, 150, 70, 255]], np.uint8), (n * n, 1))
    return trimesh.Trimesh(vertices, faces, vertex_colors=colours, process=False)


def make_box_body() -> trimesh.Trimesh:
    """The box body, BODY_EXTENTS_M, centred on the origin."""
    return trimesh.creation.box(extents=BODY_EXTENTS_M)


def make_cylinder_wheel() -> trimesh.Trimesh:
    """A wheel of WHEEL_RADIUS_M and WHEEL_WIDTH_M, axle along y, centred on the origin."""
    wheel = trimesh.creation.cylinder(radius=WHEEL_RADIUS_M, height=WHEEL_WIDTH_M, sections=32)
    wheel.apply_transform(trimesh.transformations.rotation_matrix(np.pi / 2, (1, 0, 0)))
    return wheel


def create_new_project(path: Path, name: str | None = None) -> Project:
    """Write a new project that simulates at once to `path` (a `.prj`) and the files it refers to beside it
    (STARTER_FILES); returns it, saved. Refuses with a ProjectError, writing nothing, when `path` or any of
    those files exists already (nothing of the user's is overwritten) or the folder cannot be written."""
    path = Path(path).absolute()
    folder = path.parent
    taken = [p.name for p in (path, *(folder / n for n in STARTER_FILES.names())) if p.exists() or p.is_symlink()]
    if taken:
        raise ProjectError(f"a new project would overwrite {', '.join(taken)} in {folder}; choose an empty or "
                           "new folder.", file=path)
    project = Project(name=name or path.stem, dynamics=replace(NEW_DYNAMICS))
    files = STARTER_FILES
    project.terrain.file = folder / files.terrain
    project.body.file = folder / files.body
    for wid in WHEEL_IDS:
        project.wheels[wid].file = folder / files.wheel
        project.wheels[wid].position = WHEEL_POSITIONS_M[wid]
    project.code.user_code = folder / files.user_code
    project.code.sensors = folder / files.sensors
    written: list[Path] = []
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for target, write in (
            (folder / files.terrain, lambda p: make_ground().export(p, include_color=True)),
            (folder / files.body, lambda p: make_box_body().export(p)),
            (folder / files.wheel, lambda p: make_cylinder_wheel().export(p)),
            (folder / files.user_code, lambda p: p.write_bytes(packaged("templates", "user_code.py").read_bytes())),
            (folder / files.sensors, lambda p: p.write_bytes(packaged("templates", "sensors.xml").read_bytes())),
        ):
            written.append(target)
            write(target)
        project.save(path)
    except OSError as exc:
        for target in written:
            target.unlink(missing_ok=True)
        raise ProjectError(f"the new project cannot be written ({exc.strerror or exc}); choose a folder you can "
                           "write to.", file=path) from None
    except ProjectError:
        for target in written:
            target.unlink(missing_ok=True)
        raise
    return project
