"""A small 3-D view of models, so the user sees they picked the right file and how the wheels sit."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pyqtgraph.opengl as gl
from pyqtgraph import Vector
from PySide6.QtWidgets import QLabel, QStackedLayout, QWidget

if TYPE_CHECKING:
    import trimesh

_LIGHT = np.array([0.4, -0.3, 0.85]) / np.linalg.norm([0.4, -0.3, 0.85])


def shaded_colours(mesh: trimesh.Trimesh, base: tuple[float, float, float]) -> np.ndarray:
    """Per-face RGBA: the base colour lit by a fixed light (so shapes read without GL lighting)."""
    normals = np.asarray(mesh.face_normals)
    light = 0.35 + 0.65 * np.clip(normals @ _LIGHT, 0.0, 1.0)
    colours = np.empty((len(normals), 4))
    colours[:, :3] = np.clip(np.outer(light, base), 0.0, 1.0)
    colours[:, 3] = 1.0
    return colours


class MeshPreview(QWidget):
    """Shows meshes (each with a colour and a placement) in an orbiting view, or a message instead."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.stack = QStackedLayout(self)
        self.view = gl.GLViewWidget()
        self.view.setBackgroundColor((235, 238, 242))
        self.message = QLabel("No model chosen")
        self.message.setWordWrap(True)
        self.message.setStyleSheet("color: #555; padding: 12px;")
        self.stack.addWidget(self.message)
        self.stack.addWidget(self.view)
        self.setMinimumSize(260, 220)
        self._items: list = []

    def show_message(self, text: str) -> None:
        self.message.setText(text)
        self.stack.setCurrentWidget(self.message)

    def show_meshes(self, parts: list[tuple[trimesh.Trimesh, tuple[float, float, float]]]) -> None:
        """Draw (mesh already placed in the body/world frame, RGB colour 0..1) parts."""
        for item in self._items:
            self.view.removeItem(item)
        self._items = []
        if not parts:
            self.show_message("No model chosen")
            return
        lo = np.min([m.bounds[0] for m, _ in parts], axis=0)
        hi = np.max([m.bounds[1] for m, _ in parts], axis=0)
        size = float(np.max(hi - lo)) or 1.0
        centre = (lo + hi) / 2.0
        for mesh, colour in parts:
            data = gl.MeshData(vertexes=np.asarray(mesh.vertices, dtype=np.float32),
                               faces=np.asarray(mesh.faces, dtype=np.int32),
                               faceColors=shaded_colours(mesh, colour).astype(np.float32))
            item = gl.GLMeshItem(meshdata=data, smooth=False, drawEdges=False, shader=None,
                                 glOptions="opaque")
            self.view.addItem(item)
            self._items.append(item)
        grid = gl.GLGridItem()
        spacing = 10 ** np.floor(np.log10(size / 2)) if size > 0 else 1.0
        grid.setSize(size * 2, size * 2)
        grid.setSpacing(spacing, spacing)
        grid.translate(centre[0], centre[1], lo[2])
        self.view.addItem(grid)
        self._items.append(grid)
        self.view.setCameraPosition(pos=Vector(*centre), distance=size * 1.8, elevation=28, azimuth=-60)
        self.stack.setCurrentWidget(self.view)
