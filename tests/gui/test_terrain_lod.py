"""A terrain too large for one mesh in the 3-D view (issue 29): nested levels of detail around the camera's
centre, every level on the grid's own samples, each finer window cut out of the coarser level, and a bounded
number of triangles however large the grid."""

from __future__ import annotations

import numpy as np
import pyqtgraph.opengl as gl
import pytest

from sear.gui.terrainlod import WINDOW, TerrainLod
from sear.models.heightgrid import HeightGrid

pytestmark = pytest.mark.gl


def test_levels_of_detail_follow_the_focus_on_the_grids_samples(qtbot):
    view = gl.GLViewWidget()
    qtbot.addWidget(view)
    rows = cols = 2049
    r, c = np.mgrid[0:rows, 0:cols]
    heights = (np.sin(c / 50.0) * 5.0 + np.cos(r / 70.0) * 3.0).astype(np.float32)
    grid = HeightGrid.centred(heights, 0.5, 0.5)
    lod = TerrainLod(view, grid)
    assert lod.strides == [1, 4, 16]  # 128, 512 and 2048 cells
    assert lod.update(0.0, 0.0)
    full = 2 * (rows - 1) * (cols - 1)
    assert sum(lod.triangles) < 0.02 * full  # ~8 M triangles as one mesh
    # level 0: full detail around the focus (the centre sample (1024, 1024))
    r0, r1, c0, c1 = lod.windows[0]
    assert r1 - r0 == c1 - c0 == WINDOW and r0 <= 1024 <= r1 and c0 <= 1024 <= c1
    assert r0 % 4 == 0 and c0 % 4 == 0  # on the next level's samples
    for level, item in enumerate(lod.items):
        data = item.opts["meshdata"]
        vertices, faces = data.vertexes(), data.faces()
        s = lod.strides[level]
        wr0, wr1, wc0, wc1 = lod.windows[level]
        samples = ((wr1 - wr0) // s + 1) * ((wc1 - wc0) // s + 1)
        assert len(vertices) >= samples
        top = np.arange(len(vertices)) < samples  # the grid's samples first, then the skirt hanging below
        cols_ = np.rint((vertices[top, 0] - grid.x0) / grid.dx).astype(int)
        rows_ = np.rint((grid.y0 - vertices[top, 1]) / grid.dy).astype(int)
        assert np.all((cols_ - wc0) % s == 0) and np.all((rows_ - wr0) % s == 0)
        assert np.allclose(vertices[top, 2], heights[rows_, cols_], atol=1e-5)
        if level > 0:  # no triangle of this level lies inside the finer level's window (a hole there)
            h0, h1, k0, k1 = lod.windows[level - 1]
            centre = vertices[faces].mean(axis=1)
            fc = (centre[:, 0] - grid.x0) / grid.dx
            fr = (grid.y0 - centre[:, 1]) / grid.dy
            assert not np.any((fc > k0) & (fc < k1) & (fr > h0) & (fr < h1))
            assert len(faces) > 0
    before = lod.windows[0]
    assert not lod.update(10.0, 0.0)  # 20 cells: within a quarter window, nothing made again
    assert lod.update(200.0, -100.0)  # 400 cells east: the fine windows move there
    r0, r1, c0, c1 = lod.windows[0]
    assert lod.windows[0] != before and c0 <= 1024 + 400 <= c1 and r0 <= 1024 + 200 <= r1


def test_the_simulation_window_draws_a_paged_dem(qtbot, tmp_path):
    from sear.gui.simwindow import SimulationWindow
    from sear.runtime.simulation import Simulation
    from tests.models.geotiff import write_dem
    from tests.physics.helpers import rover_project

    r, c = np.mgrid[0:601, 0:601]
    write_dem(tmp_path / "dem.tif", (300.0 + 4.0 * np.sin(c / 40.0) * np.cos(r / 50.0)).astype(np.float32), pixel=1.0)
    project = rover_project(tmp_path / "rover")
    project.terrain.file = tmp_path / "dem.tif"
    sim = Simulation(project, output=lambda text: None)
    try:
        assert sim.world.pager is not None and len(sim.world.pager.loaded) <= 4  # 601² samples: paged
        w = SimulationWindow(sim)
        qtbot.addWidget(w)
        w.resize(800, 500)
        w.show()
        qtbot.waitExposed(w)
        from PySide6.QtGui import QVector3D

        w.view.setCameraPosition(pos=QVector3D(0.0, 0.0, 300.0), distance=400.0, elevation=35.0, azimuth=30.0)
        for _ in range(3):
            w.draw()
        lod = w.scene.lod
        assert lod is not None and lod.strides == [1, 4, 16] and sum(lod.triangles) > 0
        image = w.view.grab().toImage()
        centre = image.pixelColor(image.width() // 2, image.height() // 2)
        assert centre.red() > centre.blue() and centre.green() > centre.blue()  # the terrain's colours, not the sky
        w.close()
    finally:
        sim.close()
