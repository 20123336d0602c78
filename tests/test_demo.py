"""The demo models: made deterministically, loadable, and the sizes and slopes the demo project needs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from sear.demo import DEMO_MODEL_FILES, write_demo_models
from sear.demo import main as demo_main
from sear.models.meshfiles import load_mesh, load_terrain
from sear.physics.meshes import MAX_MESH_VERTICES
from sear.project import Terrain

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("demo-models")
    write_demo_models(folder)
    return folder


def test_every_file_is_written_and_identical_on_a_second_run(models, tmp_path):
    assert sorted(p.name for p in models.iterdir()) == sorted(DEMO_MODEL_FILES)
    result = subprocess.run([sys.executable, "-m", "sear.demo", str(tmp_path / "again")],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    for name in DEMO_MODEL_FILES:
        assert (tmp_path / "again" / name).read_bytes() == (models / name).read_bytes(), name


def test_the_command_needs_a_folder(capsys):
    assert demo_main([]) == 2
    assert "usage" in capsys.readouterr().err


def test_terrain_is_100_m_square_gentle_and_level_in_the_middle(models):
    model = load_terrain(Terrain(file=models / "terrain.obj"))
    mesh = model.mesh
    assert np.allclose(mesh.bounds[:, :2], [[-50, -50], [50, 50]])
    assert len(mesh.vertices) < MAX_MESH_VERTICES
    slopes = np.degrees(np.arccos(np.clip(mesh.face_normals[:, 2], -1, 1)))
    assert slopes.max() <= 10.0                                   # faces look up, none steeper than 10°
    relief = np.ptp(mesh.vertices[:, 2])
    assert 2.0 <= relief <= 6.0                                   # hills a few metres high
    centres = mesh.triangles_center
    middle = np.hypot(centres[:, 0], centres[:, 1]) < 20.0
    assert np.abs(centres[middle, 2]).max() < 0.01 and slopes[middle].max() < 0.5
    assert model.vertex_colors is not None and len(np.unique(model.vertex_colors, axis=0)) > 10


@pytest.mark.parametrize("name", ["wheel_lf.obj", "wheel_rf.obj", "wheel_lr.ply", "wheel_rr.ply"])
def test_wheels_are_10_cm_radius_6_cm_wide_axle_along_y(models, name):
    wheel = load_mesh(models / name, tab="Wheel Models")
    assert np.allclose(wheel.bounds.mean(axis=0), 0.0, atol=1e-6)
    assert np.allclose(wheel.extents, (0.2, 0.06, 0.2), atol=1e-3)
    radii = np.hypot(wheel.vertices[:, 0], wheel.vertices[:, 2])
    assert np.allclose(radii[radii > 0.01], 0.1, atol=1e-6)       # round about y: the rim is a circle
    assert wheel.is_watertight


def test_body_fits_between_the_wheels_with_ground_clearance(models):
    body = load_mesh(models / "body.stl", tab="Robot Body Model")
    assert np.allclose(body.extents, (0.6, 0.4, 0.2), atol=0.03)
    assert body.is_watertight
    # Wheels of the demo project: centres x = ±0.22, y = ±0.25, z = -0.08 from the body origin.
    assert body.bounds[1][1] < 0.25 - 0.03 and body.bounds[0][1] > -(0.25 - 0.03)   # inside the tyres
    assert body.bounds[0][2] > -0.08 - 0.1                                          # above the ground


def test_tree_stands_on_the_origin_about_4_m_high(models):
    tree = load_mesh(models / "tree.obj")
    assert tree.bounds[0][2] == pytest.approx(0.0, abs=1e-6)
    assert 3.5 <= tree.bounds[1][2] <= 5.0
    assert np.allclose(tree.bounds.mean(axis=0)[:2], 0.0, atol=1e-6)


def test_the_shipped_demo_models_are_exactly_what_the_generator_makes(models):
    """The models in sear/data/demo are committed so a fresh clone and a wheel have them; they must never
    drift from sear/demo.py (after changing it: `python -m sear.demo sear/data/demo`)."""
    shipped = REPO / "sear" / "data" / "demo"
    for name in DEMO_MODEL_FILES:
        assert (shipped / name).read_bytes() == (models / name).read_bytes(), (
            f"sear/data/demo/{name} differs from what sear/demo.py makes: run `python -m sear.demo sear/data/demo`")
