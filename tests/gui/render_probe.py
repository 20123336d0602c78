"""Renders a unit cube in a 3-D view and prints, as JSON, the shades (colours covering ≥ 2 % of the view,
background excluded) of each way of drawing it: lit (SEAR's shader), lit with its faces wound the other way,
and unlit (pyqtgraph's plain colour shader). Run by test_view_rendering.py in a process of its own, so that
no OpenGL state of other tests' views is involved.

    python tests/gui/render_probe.py
"""

from __future__ import annotations

import json
import sys

import numpy as np
import pyqtgraph.opengl as gl
import trimesh
from pyqtgraph import Vector
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QApplication

BACKGROUND = (255, 255, 255)


def shades(app: QApplication, view: gl.GLViewWidget, item: gl.GLMeshItem) -> list[list[int]]:
    """The shades of `item` drawn alone in `view`. One view serves every item: a second top-level GL view
    made after the first was closed once painted with no GL context and crashed (a CI run under Xvfb)."""
    view.addItem(item)
    for _ in range(10):
        app.processEvents()
    image = view.grabFramebuffer().convertToFormat(QImage.Format.Format_RGB888)
    view.removeItem(item)
    pixels = np.frombuffer(image.constBits(), np.uint8).reshape(image.height(), image.bytesPerLine())
    rgb = pixels[:, : image.width() * 3].reshape(-1, 3) // 8 * 8
    colours, counts = np.unique(rgb, axis=0, return_counts=True)
    background = np.array(BACKGROUND) // 8 * 8
    return sorted([int(v) for v in c] for c, n in zip(colours, counts, strict=True)
                  if n >= 0.02 * len(rgb) and np.abs(c.astype(int) - background).max() > 8)


def main() -> int:
    from sear.gui.app import configure_qt
    from sear.gui.preview import lit_mesh_item

    configure_qt()
    app = QApplication(sys.argv[:1])
    cube = trimesh.creation.box(extents=(1.0, 1.0, 1.0))
    inside_out = trimesh.Trimesh(cube.vertices, cube.faces[:, ::-1], process=False)
    data = gl.MeshData(vertexes=np.asarray(cube.vertices, np.float32), faces=np.asarray(cube.faces, np.int32))
    flat = gl.GLMeshItem(meshdata=data, smooth=False, shader=None, color=(0.6, 0.6, 0.8, 1.0), glOptions="opaque")
    view = gl.GLViewWidget()
    view.setBackgroundColor(BACKGROUND)
    view.resize(200, 200)
    view.setCameraPosition(pos=Vector(0, 0, 0), distance=3.0, elevation=35, azimuth=-60)
    view.show()
    for _ in range(10):
        app.processEvents()
    print(json.dumps({"lit": shades(app, view, lit_mesh_item(cube, (0.6, 0.6, 0.8))),
                      "inside_out": shades(app, view, lit_mesh_item(inside_out, (0.6, 0.6, 0.8))),
                      "unlit": shades(app, view, flat)}))
    view.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
