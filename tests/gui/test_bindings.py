"""The Qt bindings must not corrupt the interpreter while our views redraw.

PySide6 6.12.0 releases a reference to None (and True) on every pyqtgraph paint and plot update; after a
few hundred redraws Python aborts with "deallocating None". A healthy binding leaves the counts where
they were, so a drop of more than a few references over many redraws means a broken binding.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest
import trimesh

from sear.gui.preview import MeshPreview

pytestmark = pytest.mark.gl

REDRAWS = 40


def test_redrawing_previews_and_plots_keeps_none_and_true_alive(qtbot):
    import pyqtgraph as pg

    preview = MeshPreview()
    plot = pg.PlotWidget()
    qtbot.addWidget(preview)
    qtbot.addWidget(plot)
    preview.show()
    plot.show()
    box = trimesh.creation.box((0.6, 0.4, 0.2))
    preview.show_meshes([(box, (0.5, 0.5, 0.7))])
    dots = plot.plot([], [], pen=None, symbol="o")
    qtbot.wait(50)
    none_before, true_before = sys.getrefcount(None), sys.getrefcount(True)
    for i in range(REDRAWS):
        preview.view.update()
        dots.setData(np.arange(i + 3.0), np.ones(i + 3))
        qtbot.wait(5)
    lost_none = none_before - sys.getrefcount(None)
    lost_true = true_before - sys.getrefcount(True)
    # 6.12.0 loses ~7 None references per GL paint and ~20 True per plot update: hundreds here
    assert lost_none < 2 * REDRAWS and lost_true < REDRAWS, (lost_none, lost_true)
