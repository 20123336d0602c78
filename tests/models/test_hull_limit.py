"""A body model whose convex hull pybullet cannot build (more than MAX_CONVEX_VERTICES corners) is refused by
validation with that limit; a model of as many triangles whose hull is small validates (and, in the slow
tier, runs). The default tier checks the bound's logic on small meshes with the limit lowered; the slow
tier builds the real thing: a 1.3-million-triangle sphere and a million-triangle box, made at test time."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import trimesh

from sear.loading import load_project
from sear.models import meshfiles
from sear.project import Project
from sear.starter import create_new_project


def tessellated_box(cells: int, size: float = 0.4) -> trimesh.Trimesh:
    """A cube of edge `size` whose every face is a grid of cells x cells squares (12 cells² triangles): many
    triangles, a convex hull of 8 corners."""
    u = np.linspace(-size / 2, size / 2, cells + 1)
    a, b = np.meshgrid(u, u, indexing="ij")
    grid = np.column_stack([a.ravel(), b.ravel()])
    i, j = np.meshgrid(np.arange(cells), np.arange(cells), indexing="ij")
    corner = (i * (cells + 1) + j).ravel()
    quads = np.column_stack([corner, corner + cells + 1, corner + cells + 2, corner + 1])
    faces = np.vstack([quads[:, [0, 1, 2]], quads[:, [0, 2, 3]]])
    vertices, all_faces = [], []
    for axis in range(3):
        for side in (-1.0, 1.0):
            points = np.insert(grid, axis, side * size / 2, axis=1)
            flipped = faces[:, ::-1] if (side > 0) == (axis == 1) else faces
            all_faces.append(flipped + sum(len(v) for v in vertices))
            vertices.append(points)
    return trimesh.Trimesh(np.vstack(vertices), np.vstack(all_faces), process=False)


def _project_with_body(folder: Path, mesh: trimesh.Trimesh, name: str = "body.stl") -> Path:
    prj = folder / "p.prj"
    create_new_project(prj)
    mesh.export(folder / name)
    project = Project.load(prj)
    project.body.file = folder / name
    project.save(prj)
    return prj


def test_a_body_whose_hull_has_more_corners_than_pybullet_builds_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(meshfiles, "MAX_CONVEX_VERTICES", 600)
    sphere = trimesh.creation.icosphere(subdivisions=3)  # 642 vertices, every one a corner of its hull
    loaded = load_project(_project_with_body(tmp_path, sphere))
    assert [p.field for p in loaded.problems] == ["body.file"]
    message = str(loaded.problems[0])
    assert "642 corners" in message and "at most 600" in message and f"{len(sphere.faces):,} triangles" in message


def test_a_body_of_many_triangles_and_a_small_hull_validates(tmp_path, monkeypatch):
    monkeypatch.setattr(meshfiles, "MAX_CONVEX_VERTICES", 600)
    box = tessellated_box(20)  # 4,800 triangles, 2,646 distinct vertices, a hull of 8
    assert len(box.faces) == 4800
    assert load_project(_project_with_body(tmp_path, box)).problems == []


def _sear(args: list[str], tmp: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TMPDIR": str(tmp)}
    return subprocess.run([sys.executable, "-m", "sear", *args], capture_output=True, text=True, env=env,
                          timeout=900)


@pytest.mark.slow
def test_a_million_triangle_body_is_refused_by_validate_with_its_limit_or_runs(tmp_path):
    """The issue's reproduction: a sphere of 1,310,720 triangles (655,362 hull corners) is refused by
    `sear validate` and `sear run` with the limit, no traceback; a box of 1,000,000 triangles validates and
    runs. Neither leaves a file in the temporary folder."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    sphere_folder, box_folder = tmp_path / "sphere", tmp_path / "box"
    sphere_folder.mkdir()
    box_folder.mkdir()
    sphere = _project_with_body(sphere_folder, trimesh.creation.icosphere(subdivisions=8, radius=0.2))
    for command in (["validate", str(sphere)], ["run", str(sphere), "--headless", "--duration", "0.1"]):
        done = _sear(command, tmp)
        assert done.returncode == 1, done.stderr
        said = done.stdout + done.stderr
        assert "655,362 corners" in said and f"at most {meshfiles.MAX_CONVEX_VERTICES:,}" in said, said
        assert "Traceback" not in said
    box_mesh = tessellated_box(289)
    assert len(box_mesh.faces) >= 1_000_000
    box = _project_with_body(box_folder, box_mesh)
    assert _sear(["validate", str(box)], tmp).returncode == 0
    done = _sear(["run", str(box), "--headless", "--duration", "0.1"], tmp)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    assert sorted(p.name for p in tmp.iterdir()) == []
