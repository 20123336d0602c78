"""A height-grid terrain too large for one mesh (sear.models.heightgrid), drawn in nested levels of detail.

Level 0 draws every sample in a window of WINDOW x WINDOW cells around where the camera looks; level k
every 4^k-th sample in a window 4^k times as large around the same place, with a hole where level k - 1
lies; the last level covers the whole terrain. A 4097² grid is four levels of ~33 k triangles each
(every sample within ~64 cells of the focus, every 4th within ~256, every 16th within ~1,024, every 64th
beyond), where one mesh would be 33 M triangles. Each window is aligned to the next coarser level's
samples, so the two meet on shared vertices; skirts hang from each finer window's edge and from the edge
of the hole it fills, to hide the cracks between the finer edge's samples and the coarser edge. A level is
made again when the focus has moved a quarter of its window from its centre.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph.opengl as gl

from sear.models.heightgrid import HeightGrid

WINDOW = 128
"""Cells along a level's window, at its own stride."""
SUN = np.array([0.3, -0.4, 0.87]) / np.linalg.norm([0.3, -0.4, 0.87])


class TerrainLod:
    """The items of a grid terrain in a view, kept at the detail the focus asks for (`update`)."""

    def __init__(self, view: gl.GLViewWidget, grid: HeightGrid) -> None:
        self.view = view
        self.grid = grid
        cells = max(grid.rows, grid.cols) - 1
        self.strides = [1]
        while self.strides[-1] * WINDOW < cells:
            self.strides.append(self.strides[-1] * 4)
        self.low, self.high = float(grid.heights.min()), float(grid.heights.max())
        self.windows: list[tuple[int, int, int, int] | None] = [None] * len(self.strides)
        """Each level's window: rows r0..r1, columns c0..c1 (samples, inclusive)."""
        self.items: list[gl.GLMeshItem] = []
        for _ in self.strides:
            item = gl.GLMeshItem(meshdata=gl.MeshData(), smooth=True, shader=None, computeNormals=False,
                                 glOptions="opaque")
            view.addItem(item)
            self.items.append(item)
        self.triangles = [0] * len(self.strides)
        """Triangles each level draws now."""

    def _window(self, level: int, x: float, y: float) -> tuple[int, int, int, int]:
        """Level `level`'s window around (x, y) m: WINDOW of its cells, aligned to the next level's stride
        (the whole grid for the last level)."""
        g = self.grid
        if level == len(self.strides) - 1:
            s = self.strides[level]
            return 0, (g.rows - 1) // s * s, 0, (g.cols - 1) // s * s
        s, align = self.strides[level], self.strides[level + 1]
        span = WINDOW * s
        col, row = (x - g.x0) / g.dx, (g.y0 - y) / g.dy

        def place(centre: float, last: int) -> tuple[int, int]:
            usable = last // align * align
            lo = round((centre - span / 2) / align) * align
            lo = min(max(lo, 0), max(usable - span, 0))
            return lo, min(lo + span, usable)

        r0, r1 = place(row, g.rows - 1)
        c0, c1 = place(col, g.cols - 1)
        return r0, r1, c0, c1

    def update(self, x: float, y: float) -> bool:
        """Bring the levels up to date for a focus at (x, y) m (where the camera looks); True when any was
        made again."""
        changed = False
        g = self.grid
        for level in range(len(self.strides)):
            current = self.windows[level]
            if current is not None and level < len(self.strides) - 1:
                r0, r1, c0, c1 = current
                quarter = WINDOW * self.strides[level] / 4
                col, row = (x - g.x0) / g.dx, (g.y0 - y) / g.dy
                if abs(col - (c0 + c1) / 2) < quarter and abs(row - (r0 + r1) / 2) < quarter:
                    continue
            window = self._window(level, x, y)
            if window == current and not changed:
                continue
            self.windows[level] = window
            changed = True
        if changed:
            for level in range(len(self.strides)):
                self._build(level)
        return changed

    def _build(self, level: int) -> None:
        g, s = self.grid, self.strides[level]
        window = self.windows[level]
        assert window is not None
        r0, r1, c0, c1 = window
        vertices, faces = g.patch(r0, r1, c0, c1, s)
        rows, cols = (r1 - r0) // s + 1, (c1 - c0) // s + 1
        z = vertices[:, 2].reshape(rows, cols)
        gy, gx = np.gradient(z, s * g.dy, s * g.dx) if rows > 1 and cols > 1 else (np.zeros_like(z),) * 2
        normals = np.stack([-gx, gy, np.ones_like(z)], axis=-1).reshape(-1, 3)  # rows run south: -d/dy = +gy
        normals /= np.linalg.norm(normals, axis=1)[:, None]
        colours = self._colours(vertices[:, 2], normals)
        finer = self.windows[level - 1] if level > 0 else None
        if finer is not None:
            h0, h1, k0, k1 = finer  # the finer level's window: a hole here
            cell_r = (np.arange(rows - 1) * s + r0)
            cell_c = (np.arange(cols - 1) * s + c0)
            inside = ((cell_r >= h0) & (cell_r < h1))[:, None] & ((cell_c >= k0) & (cell_c < k1))[None, :]
            keep = ~np.concatenate([inside.ravel(), inside.ravel()])
            faces = faces[keep]
        idx = np.arange(rows * cols).reshape(rows, cols)
        if level < len(self.strides) - 1:  # hangs from this window's edge: where the coarser level is lower
            vertices, faces, colours = _skirt(vertices, faces, colours, _ring(idx),
                                              depth=0.5 * self.strides[level + 1] * max(g.dx, g.dy))
        if finer is not None:  # hangs from the hole's edge: where this level is higher than the finer one
            h0, h1, k0, k1 = finer
            hole = idx[(h0 - r0) // s:(h1 - r0) // s + 1, (k0 - c0) // s:(k1 - c0) // s + 1]
            vertices, faces, colours = _skirt(vertices, faces, colours, _ring(hole),
                                              depth=0.5 * s * max(g.dx, g.dy))
        self.items[level].setMeshData(vertexes=vertices.astype(np.float32), faces=faces.astype(np.int32),
                                      vertexColors=colours)
        self.triangles[level] = len(faces)

    def _colours(self, z: np.ndarray, normals: np.ndarray) -> np.ndarray:
        """RGBA by height (green low, brown, white high over the whole terrain's range), lit by a fixed sun
        as sear.gui.simview.terrain_item colours a mesh."""
        t = (z - self.low) / max(self.high - self.low, 1e-6)
        low, mid, high = np.array([0.27, 0.55, 0.25]), np.array([0.6, 0.55, 0.33]), np.array([0.92, 0.92, 0.9])
        base = np.where(t[:, None] < 0.6, low + (mid - low) * (t[:, None] / 0.6),
                        mid + (high - mid) * ((t[:, None] - 0.6) / 0.4))
        light = 0.45 + 0.55 * np.clip(normals @ SUN, 0.0, 1.0)
        rgba = np.ones((len(z), 4), dtype=np.float32)
        rgba[:, :3] = np.clip(base * light[:, None], 0, 1)
        return rgba


def _skirt(vertices: np.ndarray, faces: np.ndarray, colours: np.ndarray, ring: np.ndarray, depth: float
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A strip hanging `depth` m down from the closed loop of vertices `ring`, added to the mesh."""
    below = vertices[ring].copy()
    below[:, 2] -= depth
    base = len(vertices)
    a, b = ring, np.roll(ring, -1)
    c, d = base + np.arange(len(ring)), base + np.roll(np.arange(len(ring)), -1)
    strip = np.concatenate([np.column_stack([a, b, d]), np.column_stack([a, d, c])])
    return (np.concatenate([vertices, below]), np.concatenate([faces, strip.astype(faces.dtype)]),
            np.concatenate([colours, colours[ring]]))


def _ring(idx: np.ndarray) -> np.ndarray:
    """The border of a 2-D array of vertex indices, as one closed loop."""
    return np.concatenate([idx[0, :], idx[1:, -1], idx[-1, -2::-1], idx[-2:0:-1, 0]])
