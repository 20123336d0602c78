"""The 3-D view reads as solids (issue 13 item 13): meshes are lit per face by a shader (a cube seen corner-on
shows three shades, whichever way its file winds the faces), the terrain is coloured by height, and the
sensor rays are uploaded to OpenGL only when a new sample changes them (not every frame)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import trimesh

from sear.gui.simview import terrain_item
from sear.gui.simwindow import SimulationWindow
from sear.project import Project
from sear.runtime.simulation import Simulation

pytestmark = pytest.mark.gl
PROBE = Path(__file__).with_name("render_probe.py")


def test_a_lit_cube_shows_three_shades_whichever_way_its_faces_wind():
    done = subprocess.run([sys.executable, str(PROBE)], capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    shades = json.loads(done.stdout.strip().splitlines()[-1])
    assert len(shades["lit"]) == 3, shades  # the three faces seen, each its own shade
    assert shades["inside_out"] == shades["lit"]
    # Positive control: the same cube unlit (pyqtgraph's plain colour shader) is one flat shade.
    assert len(shades["unlit"]) == 1, shades


def test_terrain_is_coloured_by_height():
    xs = np.linspace(-5.0, 5.0, 11)
    gx, gy = np.meshgrid(xs, xs)
    vertices = np.column_stack([gx.ravel(), gy.ravel(), (gx.ravel() + 5.0) * 0.5])  # a ramp 0..5 m up to the east
    faces = []
    for j in range(10):
        for i in range(10):
            a = j * 11 + i
            faces += [[a, a + 1, a + 12], [a, a + 12, a + 11]]
    item = terrain_item(trimesh.Trimesh(vertices, np.array(faces), process=False), None)
    colours = item.opts["meshdata"].vertexColors()
    low, high = colours[vertices[:, 2] == 0.0], colours[vertices[:, 2] == 5.0]
    assert len(low) == len(high) == 11
    assert (low[:, 1] > low[:, 0]).all() and (low[:, 1] > low[:, 2]).all()  # green low down
    assert (high[:, :3].min(axis=1) > low[:, :3].max(axis=1)).all()  # pale high up (snow)


def test_rays_are_uploaded_only_when_a_new_sample_changes_them(qtbot, demo_copy):
    simulation = Simulation(Project.load(demo_copy / "demo.prj"), seed=4, output=lambda text: None)
    try:
        window = SimulationWindow(simulation)
        qtbot.addWidget(window)
        window.show()
        window.commands["rays"].setChecked(True)
        window.advance(1.0)
        uploaded = window.scene.rays_item.pos
        starts, ends, _hits = window.scene.visible_rays(window.simulation.driven_robot)
        assert len(starts) > 0 and len(uploaded) == 2 * len(starts)
        assert np.allclose(uploaded[0::2], starts) and np.allclose(uploaded[1::2], ends)
        window.draw()  # nothing simulated since: the same rays, not set again
        assert window.scene.rays_item.pos is uploaded
        window.simulation.set_manual_input(1.0, 0.5, False)
        window.advance(0.5)  # the robot moved and the sensors sampled again: the new rays are drawn
        starts, ends, _hits = window.scene.visible_rays(window.simulation.driven_robot)
        drawn = window.scene.rays_item.pos
        assert drawn is not uploaded
        assert np.allclose(drawn[0::2], starts) and np.allclose(drawn[1::2], ends)
    finally:
        window.timer.stop()
        simulation.close()


def test_the_ground_grid_is_draped_over_the_terrain(demo_copy):
    from sear.gui.simview import GRID_LIFT, ground_grid

    simulation = Simulation(Project.load(demo_copy / "demo.prj"), seed=0, output=lambda text: None)
    try:
        segments = ground_grid(simulation.world)
        vertices = np.asarray(simulation.world.terrain.mesh.vertices)
    finally:
        simulation.close()
    assert len(segments) % 2 == 0 and len(segments) > 1000
    # Where a grid point falls on a vertex of the terrain mesh (the demo's is a 1 m grid), it lies GRID_LIFT
    # above that vertex: heights read from the mesh file here, not from the physics' ray casts the grid uses.
    by_xy = {(round(x, 6), round(y, 6)): z for x, y, z in vertices}
    on_vertices = [(by_xy[(round(float(x), 6), round(float(y), 6))], float(z)) for x, y, z in segments
                   if (round(float(x), 6), round(float(y), 6)) in by_xy]
    assert len(on_vertices) > 500
    ground, grid = np.array(on_vertices).T
    assert np.ptp(ground) > 0.5  # the demo's terrain is not flat, so following it is tested
    assert np.allclose(grid - ground, GRID_LIFT, atol=1e-3)
    # Lines every 5 m across the 100 m terrain (-50 to 50 m), both ways.
    starts, ends = segments[0::2], segments[1::2]
    north_south = {round(float(x), 6) for x in starts[starts[:, 0] == ends[:, 0], 0]}
    east_west = {round(float(y), 6) for y in starts[starts[:, 1] == ends[:, 1], 1]}
    assert north_south == east_west == {5.0 * k for k in range(-10, 11)}


def test_a_dense_sensors_rays_are_drawn_one_in_k_and_a_sparse_ones_all():
    from types import SimpleNamespace

    from sear.gui.simview import Scene

    def rays(count: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        starts = np.zeros((count, 3))
        ends = np.column_stack([np.arange(count, dtype=float), np.zeros(count), np.zeros(count)])
        return starts, ends, np.arange(count) % 15 == 0  # a hit every 15th ray

    # A VLP-16 sample (16 x 1,800 = 28,800 rays) and the demo's 180-beam LIDAR.
    run = SimpleNamespace(sensors=SimpleNamespace(rays_by_sensor={"vlp16": rays(28_800), "lidar": rays(180)}))
    starts, ends, hits = Scene.visible_rays(run)  # type: ignore[arg-type]
    dense, sparse = ends[:-180, 0], ends[-180:, 0]
    # 28,800 rays at most 2,048 a sensor: every 15th (ceil(28,800 / 2,048) = 15), 1,920 of them, from the first.
    assert len(dense) == 1920 and np.array_equal(dense, np.arange(0, 28_800, 15))
    assert np.array_equal(sparse, np.arange(180))  # under the cap: every ray
    # Each drawn ray keeps its own hit flag: the dense sensor's drawn rays are its hits, the sparse one's 12 of 180.
    assert len(starts) == len(hits) == 1920 + 180 and hits[:1920].all() and hits[1920:].sum() == 12
