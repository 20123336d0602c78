"""A small 3-D view of models, so the user sees they picked the right file and how the wheels sit."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pyqtgraph.opengl as gl
from pyqtgraph import Vector
from pyqtgraph.opengl import shaders
from PySide6.QtWidgets import QLabel, QStackedLayout, QWidget

if TYPE_CHECKING:
    import trimesh

LIT = shaders.ShaderProgram("sear-lit", [
    shaders.VertexShader("""
        uniform mat4 u_mvp;
        uniform mat3 u_normal;
        attribute vec4 a_position;
        attribute vec3 a_normal;
        attribute vec4 a_color;
        varying vec4 v_color;
        varying vec3 v_normal;
        void main() {
            v_normal = u_normal * a_normal;
            v_color = a_color;
            gl_Position = u_mvp * a_position;
        }
    """),
    shaders.FragmentShader("""
        #ifdef GL_ES
        precision mediump float;
        #endif
        varying vec4 v_color;
        varying vec3 v_normal;
        void main() {
            vec3 n = normalize(v_normal);
            if (n.z < 0.0) n = -n;  /* a face seen from the camera faces it, whichever way the file winds it */
            float key = max(dot(n, normalize(vec3(-0.45, 0.8, 0.4))), 0.0);
            float fill = max(dot(n, normalize(vec3(0.7, -0.2, 0.3))), 0.0);
            gl_FragColor = vec4(min(v_color.rgb * (0.28 + 0.62 * key + 0.2 * fill), 1.0), v_color.a);
        }
    """),
])
"""Lambert lighting in the camera's frame (a key light from the upper left behind the viewer, a weaker fill
from the right, some ambient), per pixel from the faces' normals: bodies read as solids whichever way they
turn. Mesh files wind their faces either way, so a normal pointing away from the camera is turned round."""


def lit_mesh_item(mesh: trimesh.Trimesh, colour: tuple[float, float, float], edges: bool = False) -> gl.GLMeshItem:
    """A flat-faced mesh in one colour (RGB 0..1), lit by the LIT shader; `edges` outlines its faces."""
    data = gl.MeshData(vertexes=np.asarray(mesh.vertices, dtype=np.float32), faces=np.asarray(mesh.faces, np.int32))
    return gl.GLMeshItem(meshdata=data, smooth=False, shader=LIT, color=(*colour, 1.0), drawEdges=edges,
                         edgeColor=(0, 0, 0, 1), glOptions="opaque")


HIGHLIGHT = (1.0, 0.55, 0.05)
"""RGB (0..1) of the parts the user selected (a URDF link chosen in its tree): an orange no model part
is given by SEAR's own colours."""
FADED = (0.86, 0.87, 0.89)
"""RGB the other parts are faded towards while one is highlighted (near the background's)."""
FADE = 0.35
"""How much of its own colour a part keeps while another is highlighted."""
SEE_THROUGH = 0.45
"""Opacity (alpha) of the other parts while one is highlighted: the highlighted one shows through them."""


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
        self._named: dict[str, list[tuple[gl.GLMeshItem, tuple[float, float, float]]]] = {}
        self._highlighted: tuple[str, ...] = ()

    def show_message(self, text: str) -> None:
        self.message.setText(text)
        self.stack.setCurrentWidget(self.message)

    def show_meshes(self, parts: list[tuple[trimesh.Trimesh, tuple[float, float, float]]]) -> None:
        """Draw (mesh already placed in the body/world frame, RGB colour 0..1) parts."""
        self.show_parts([(None, mesh, colour) for mesh, colour in parts])

    def show_parts(self, parts: list[tuple[str | None, trimesh.Trimesh, tuple[float, float, float]]]) -> None:
        """Draw (name, mesh placed in the body/world frame, RGB colour 0..1) parts; parts with a name (a URDF
        link's) can be highlighted by that name (`highlight`). Several parts may share a name."""
        for item in self._items:
            self.view.removeItem(item)
        self._items = []
        self._named = {}
        self._highlighted = ()
        if not parts:
            self.show_message("No model chosen")
            return
        lo = np.min([m.bounds[0] for _, m, _ in parts], axis=0)
        hi = np.max([m.bounds[1] for _, m, _ in parts], axis=0)
        size = float(np.max(hi - lo)) or 1.0
        centre = (lo + hi) / 2.0
        for name, mesh, colour in parts:
            item = lit_mesh_item(mesh, colour)
            self.view.addItem(item)
            self._items.append(item)
            if name is not None:
                self._named.setdefault(name, []).append((item, colour))
        grid = gl.GLGridItem()
        spacing = 10 ** np.floor(np.log10(size / 2)) if size > 0 else 1.0
        grid.setSize(size * 2, size * 2)
        grid.setSpacing(spacing, spacing)
        grid.translate(centre[0], centre[1], lo[2])
        self.view.addItem(grid)
        self._items.append(grid)
        self.view.setCameraPosition(pos=Vector(*centre), distance=size * 1.8, elevation=28, azimuth=-60)
        self.stack.setCurrentWidget(self.view)

    def highlight(self, name: str | tuple[str, ...] | None) -> bool:
        """Draw the parts called `name` (or any of a tuple of names: a pair of links that overlap, say) in the
        highlight colour, the others faded and see-through; None (or no such part: a link without geometry)
        draws every part in its own colour. True when something is highlighted."""
        names = (name,) if isinstance(name, str) else tuple(name or ())
        self._highlighted = tuple(n for n in names if n in self._named)
        for part, items in self._named.items():
            for item, colour in items:
                if not self._highlighted:
                    item.setColor((*colour, 1.0))
                    item.setShader(LIT)
                    item.setGLOptions("opaque")
                    item.setDepthValue(0)
                elif part in self._highlighted:
                    # one flat colour (unlit: never darkened by a face turned from the light), drawn first so
                    # that the see-through parts are blended over it
                    item.setColor((*HIGHLIGHT, 1.0))
                    item.setShader(None)
                    item.setGLOptions("opaque")
                    item.setDepthValue(-1)
                else:  # faded and see-through, so the highlighted part shows even behind them
                    faded = (FADE * c + (1.0 - FADE) * b for c, b in zip(colour, FADED, strict=True))
                    item.setColor((*faded, SEE_THROUGH))
                    item.setShader(LIT)
                    item.setGLOptions("translucent")
                    item.setDepthValue(0)
        return bool(self._highlighted)

    @property
    def highlighted(self) -> str | None:
        """The name of the parts drawn highlighted (the first, when several are), or None."""
        return self._highlighted[0] if self._highlighted else None

    @property
    def highlighted_names(self) -> tuple[str, ...]:
        """The names of all the parts drawn highlighted."""
        return self._highlighted

    def part_names(self) -> list[str]:
        """The names of the named parts drawn, in drawing order."""
        return list(self._named)
