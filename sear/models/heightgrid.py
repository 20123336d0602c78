"""A terrain given as a regular grid of heights (a heightmap image or an elevation model), its surface, and
rays against it.

The surface is the grid's triangles, as sear.models.meshfiles has always made a heightmap's mesh: each cell
(rows r, r + 1 and columns c, c + 1; row 0 the north edge, column 0 the west edge) is split along its
south-west to north-east diagonal into the triangles (sw, se, ne) and (sw, ne, nw). The physics' collision
tiles (sear.physics.terrainpager), the sensors' rays (`cast`, a grid walk exact for those triangles) and
`heights_at` all use this one surface, so the wheels, the sensors and the drawing agree.

Pure (numpy; numba only through sear.jit, when `cast_kernel` is first wanted): no pybullet, no Qt.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from sear.jit import compiled_or_none, numba_wanted

MESH_UP_TO_SAMPLES = 513 * 513
"""Height grids of up to this many samples are also made into one triangle mesh (as heightmaps always
were: the demo's and most tests' runs stay what they were); larger ones exist only as the grid, which the
physics pages in tiles (sear.physics.terrainpager) and the window draws in levels of detail."""
BLOCK = 16
"""Cells per side of the blocks whose lowest and highest heights let a ray skip them whole (`cast`)."""


@dataclass
class HeightGrid:
    """Heights on a regular grid in the world frame (x east, y north, z up; metres).

    Sample (r, c) lies at x = x0 + c·dx, y = y0 - r·dy, z = heights[r, c] (float32, m): row 0 is the
    north edge, column 0 the west edge."""

    heights: np.ndarray
    """(rows, cols) float32 heights, m."""
    dx: float
    """Distance between columns, m."""
    dy: float
    """Distance between rows, m."""
    x0: float
    """x of column 0 (the west edge), m."""
    y0: float
    """y of row 0 (the north edge), m."""
    _blocks: tuple[np.ndarray, np.ndarray] | None = field(default=None, repr=False)

    @classmethod
    def centred(cls, heights: np.ndarray, dx: float, dy: float) -> HeightGrid:
        """A grid of `heights` (rows north to south) whose x/y bounding box is centred on the origin."""
        rows, cols = heights.shape
        return cls(np.ascontiguousarray(heights, dtype=np.float32), float(dx), float(dy),
                   -(cols - 1) / 2.0 * dx, (rows - 1) / 2.0 * dy)

    @property
    def rows(self) -> int:
        return int(self.heights.shape[0])

    @property
    def cols(self) -> int:
        return int(self.heights.shape[1])

    @property
    def triangles(self) -> int:
        """Triangles of the whole surface."""
        return 2 * (self.rows - 1) * (self.cols - 1)

    @property
    def bounds(self) -> np.ndarray:
        """(2, 3) lowest and highest corner of the surface's bounding box, m."""
        z = self.heights
        return np.array([[self.x0, self.y0 - (self.rows - 1) * self.dy, float(z.min())],
                         [self.x0 + (self.cols - 1) * self.dx, self.y0, float(z.max())]])

    def xs(self, c0: int = 0, c1: int | None = None, stride: int = 1) -> np.ndarray:
        """x (m) of columns c0, c0 + stride, ... up to c1 (inclusive; default the last)."""
        c1 = self.cols - 1 if c1 is None else c1
        return self.x0 + np.arange(c0, c1 + 1, stride) * self.dx

    def ys(self, r0: int = 0, r1: int | None = None, stride: int = 1) -> np.ndarray:
        """y (m) of rows r0, r0 + stride, ... up to r1 (inclusive; default the last)."""
        r1 = self.rows - 1 if r1 is None else r1
        return self.y0 - np.arange(r0, r1 + 1, stride) * self.dy

    def patch(self, r0: int, r1: int, c0: int, c1: int, stride: int = 1) -> tuple[np.ndarray, np.ndarray]:
        """The surface over rows r0..r1 and columns c0..c1 (inclusive; r1 - r0 and c1 - c0 multiples of
        `stride`) as vertices (V, 3) float64 m and triangles (F, 3) int32, every `stride`-th sample (1: the
        exact surface; more: a coarser one for drawing far away)."""
        xs, ys = self.xs(c0, c1, stride), self.ys(r0, r1, stride)
        z = self.heights[r0:r1 + 1:stride, c0:c1 + 1:stride].astype(np.float64)
        gx, gy = np.meshgrid(xs, ys, indexing="xy")
        vertices = np.column_stack([gx.ravel(), gy.ravel(), z.ravel()])
        return vertices, grid_faces(len(ys), len(xs))

    def heights_at(self, xy: np.ndarray, outside: float = 0.0) -> np.ndarray:
        """Heights (m) of the surface at world points (N, 2); `outside` where no terrain lies."""
        xy = np.asarray(xy, dtype=np.float64).reshape(-1, 2)
        u = (xy[:, 0] - self.x0) / self.dx
        v = (self.y0 - xy[:, 1]) / self.dy
        inside = (u >= 0) & (u <= self.cols - 1) & (v >= 0) & (v <= self.rows - 1)
        c = np.clip(np.floor(u), 0, self.cols - 2).astype(np.int64)
        r = np.clip(np.floor(v), 0, self.rows - 2).astype(np.int64)
        fu = np.clip(u - c, 0.0, 1.0)  # east of the cell's west edge, 0..1
        fn = np.clip(1.0 - (v - r), 0.0, 1.0)  # north of the cell's south edge, 0..1
        h = self.heights
        nw, ne = h[r, c].astype(np.float64), h[r, c + 1].astype(np.float64)
        sw, se = h[r + 1, c].astype(np.float64), h[r + 1, c + 1].astype(np.float64)
        lower = fn <= fu  # triangle (sw, se, ne), below the diagonal
        z = np.where(lower, sw + fu * (se - sw) + fn * (ne - se), sw + fn * (nw - sw) + fu * (ne - nw))
        return np.where(inside, z, outside)

    def blocks(self) -> tuple[np.ndarray, np.ndarray]:
        """Lowest and highest height (float32, m) of every BLOCK x BLOCK cells (blocks share their edge
        samples), for `cast` to skip blocks a ray passes above or below."""
        if self._blocks is None:
            h = self.heights
            nr, nc = -(-(self.rows - 1) // BLOCK), -(-(self.cols - 1) // BLOCK)
            low = np.empty((nr, nc), dtype=np.float32)
            high = np.empty((nr, nc), dtype=np.float32)
            pad = nc * BLOCK - (self.cols - 1)
            for i in range(nr):
                band = h[i * BLOCK:min((i + 1) * BLOCK, self.rows - 1) + 1]
                # each column pair's lowest and highest over the band, then BLOCK columns at a time
                lo = np.minimum(band[:, :-1].min(axis=0), band[:, 1:].min(axis=0))
                hi = np.maximum(band[:, :-1].max(axis=0), band[:, 1:].max(axis=0))
                low[i] = np.pad(lo, (0, pad), constant_values=np.inf).reshape(nc, BLOCK).min(axis=1)
                high[i] = np.pad(hi, (0, pad), constant_values=-np.inf).reshape(nc, BLOCK).max(axis=1)
            self._blocks = (low, high)
        return self._blocks

    def cast(self, starts: np.ndarray, direction: np.ndarray, fraction: np.ndarray, normal: np.ndarray) -> np.ndarray:
        """Rays from `starts` along `direction` ((N, 3) m, the full ray at t = 1) against the surface: where
        a ray meets it at t below fraction[i], fraction[i] and normal[i] (unit, facing the ray's start) are
        set. Returns the mask of the rays that met it."""
        low, high = self.blocks()
        hit = np.zeros(len(starts), dtype=np.bool_)
        cast_kernel()(self.heights, low, high, BLOCK, self.x0, self.y0, self.dx, self.dy,
                      np.ascontiguousarray(starts, dtype=np.float64), np.ascontiguousarray(direction, dtype=np.float64),
                      fraction, normal, hit)
        return hit


def grid_faces(rows: int, cols: int) -> np.ndarray:
    """(F, 3) int32 triangles of a rows x cols grid of vertices (row-major, row 0 north), wound to face up:
    each cell's (sw, se, ne) then (sw, ne, nw), as sear.models.meshfiles has always made them."""
    idx = np.arange(rows * cols, dtype=np.int32).reshape(rows, cols)
    sw, se = idx[1:, :-1].ravel(), idx[1:, 1:].ravel()
    ne, nw = idx[:-1, 1:].ravel(), idx[:-1, :-1].ravel()
    return np.concatenate([np.column_stack([sw, se, ne]), np.column_stack([sw, ne, nw])])


# --- the ray kernel --------------------------------------------------------------------------------

def _triangle(sx: float, sy: float, sz: float, ux: float, uy: float, uz: float,
              ax: float, ay: float, az: float, bx: float, by: float, bz: float, cx: float, cy: float, cz: float
              ) -> float:
    """t (fractions of the direction u) where the ray from s meets triangle abc (Möller-Trumbore), or -1."""
    e1x, e1y, e1z = bx - ax, by - ay, bz - az
    e2x, e2y, e2z = cx - ax, cy - ay, cz - az
    px, py, pz = uy * e2z - uz * e2y, uz * e2x - ux * e2z, ux * e2y - uy * e2x
    det = e1x * px + e1y * py + e1z * pz
    if det == 0.0:
        return -1.0
    inv = 1.0 / det
    tx, ty, tz = sx - ax, sy - ay, sz - az
    a = (tx * px + ty * py + tz * pz) * inv
    if a < -1e-12 or a > 1.0 + 1e-12:
        return -1.0
    qx, qy, qz = ty * e1z - tz * e1y, tz * e1x - tx * e1z, tx * e1y - ty * e1x
    b = (ux * qx + uy * qy + uz * qz) * inv
    if b < -1e-12 or a + b > 1.0 + 1e-12:
        return -1.0
    return (e2x * qx + e2y * qy + e2z * qz) * inv


def _cell(h: np.ndarray, r: int, c: int, x0: float, y0: float, dx: float, dy: float,
          sx: float, sy: float, sz: float, ux: float, uy: float, uz: float, best: float,
          out: np.ndarray) -> float:
    """The ray against cell (r, c)'s two triangles: the nearest t below `best` (its triangle's upward
    normal in out[0:3]), or `best`."""
    xw, xe = x0 + c * dx, x0 + (c + 1) * dx
    yn, ys = y0 - r * dy, y0 - (r + 1) * dy
    znw, zne = np.float64(h[r, c]), np.float64(h[r, c + 1])
    zsw, zse = np.float64(h[r + 1, c]), np.float64(h[r + 1, c + 1])
    t = _triangle(sx, sy, sz, ux, uy, uz, xw, ys, zsw, xe, ys, zse, xe, yn, zne)
    if 0.0 <= t < best:
        best = t
        out[0], out[1], out[2] = (zsw - zse) * dy, (zse - zne) * dx, dx * dy
    t = _triangle(sx, sy, sz, ux, uy, uz, xw, ys, zsw, xe, yn, zne, xw, yn, znw)
    if 0.0 <= t < best:
        best = t
        out[0], out[1], out[2] = (znw - zne) * dy, (zsw - znw) * dx, dx * dy
    return best


def cast_grid(h: np.ndarray, low: np.ndarray, high: np.ndarray, block: int, x0: float, y0: float, dx: float,
              dy: float, starts: np.ndarray, direction: np.ndarray, fraction: np.ndarray, normal: np.ndarray,
              hit: np.ndarray) -> None:
    """HeightGrid.cast's arithmetic, ray by ray: the ray clipped to the grid's x/y box, then walked block by
    block (a block the ray passes wholly above or below its heights is skipped) and, in the others, cell by
    cell in the order the ray crosses them (Amanatides-Woo); the first cell whose triangles it meets ends it."""
    rows, cols = h.shape
    nbr, nbc = low.shape
    out = np.zeros(3)
    bw, bh = block * dx, block * dy
    for i in range(len(starts)):
        sx, sy, sz = starts[i, 0], starts[i, 1], starts[i, 2]
        ux, uy, uz = direction[i, 0], direction[i, 1], direction[i, 2]
        t0, t1 = 0.0, fraction[i]
        # clip to the box x0..x0+(cols-1)dx, y0-(rows-1)dy..y0
        lo_x, hi_x = x0, x0 + (cols - 1) * dx
        lo_y, hi_y = y0 - (rows - 1) * dy, y0
        if ux != 0.0:
            ta, tb = (lo_x - sx) / ux, (hi_x - sx) / ux
            if ta > tb:
                ta, tb = tb, ta
            t0, t1 = max(t0, ta), min(t1, tb)
        elif sx < lo_x or sx > hi_x:
            continue
        if uy != 0.0:
            ta, tb = (lo_y - sy) / uy, (hi_y - sy) / uy
            if ta > tb:
                ta, tb = tb, ta
            t0, t1 = max(t0, ta), min(t1, tb)
        elif sy < lo_y or sy > hi_y:
            continue
        if t0 > t1:
            continue
        best = fraction[i]
        found = False
        # block walk
        tm = 0.5 * (t0 + t1) if t1 - t0 < 1e-12 else t0
        px, py = sx + ux * tm, sy + uy * tm
        bc = min(max(math.floor((px - x0) / bw), 0), nbc - 1)
        br = min(max(math.floor((y0 - py) / bh), 0), nbr - 1)
        step_c = 1 if ux > 0.0 else -1
        step_r = 1 if uy < 0.0 else -1
        if ux != 0.0:
            edge = x0 + (bc + (1 if ux > 0.0 else 0)) * bw
            next_c, delta_c = (edge - sx) / ux, bw / abs(ux)
        else:
            next_c, delta_c = math.inf, math.inf
        if uy != 0.0:
            edge = y0 - (br + (1 if uy < 0.0 else 0)) * bh
            next_r, delta_r = (edge - sy) / uy, bh / abs(uy)
        else:
            next_r, delta_r = math.inf, math.inf
        ta = t0
        while True:
            tb = min(next_c, next_r, t1)
            za, zb = sz + uz * ta, sz + uz * tb
            if not (min(za, zb) > high[br, bc] or max(za, zb) < low[br, bc]):
                # cell walk inside this block, from ta to tb
                qx, qy = sx + ux * ta, sy + uy * ta
                r_lo, r_hi = br * block, min((br + 1) * block, rows - 1) - 1
                c_lo, c_hi = bc * block, min((bc + 1) * block, cols - 1) - 1
                c = min(max(math.floor((qx - x0) / dx), c_lo), c_hi)
                r = min(max(math.floor((y0 - qy) / dy), r_lo), r_hi)
                if ux != 0.0:
                    ncx = ((x0 + (c + (1 if ux > 0.0 else 0)) * dx) - sx) / ux
                    dcx = dx / abs(ux)
                else:
                    ncx, dcx = math.inf, math.inf
                if uy != 0.0:
                    nry = ((y0 - (r + (1 if uy < 0.0 else 0)) * dy) - sy) / uy
                    dry = dy / abs(uy)
                else:
                    nry, dry = math.inf, math.inf
                while True:
                    got = _cell(h, r, c, x0, y0, dx, dy, sx, sy, sz, ux, uy, uz, best, out)
                    if got < best:
                        best = got
                        found = True
                    if found and best <= min(ncx, nry) + 1e-12:
                        break
                    if ncx < nry:
                        if ncx > tb:
                            break
                        c += step_c
                        ncx += dcx
                        if c < c_lo or c > c_hi:
                            break
                    else:
                        if nry > tb:
                            break
                        r += step_r
                        nry += dry
                        if r < r_lo or r > r_hi:
                            break
                if found:
                    break
            if tb >= t1:
                break
            ta = tb
            if next_c < next_r:
                bc += step_c
                next_c += delta_c
                if bc < 0 or bc >= nbc:
                    break
            else:
                br += step_r
                next_r += delta_r
                if br < 0 or br >= nbr:
                    break
        if found:
            nx, ny, nz = out[0], out[1], out[2]
            length = math.sqrt(nx * nx + ny * ny + nz * nz)
            if nx * ux + ny * uy + nz * uz > 0.0:
                length = -length
            fraction[i] = best
            normal[i, 0], normal[i, 1], normal[i, 2] = nx / length, ny / length, nz / length
            hit[i] = True


_kernel: Callable[..., None] | None = None


def cast_kernel() -> Callable[..., None]:
    """cast_grid compiled by numba (loaded from its cache after the first run), or the plain function where
    numba cannot be imported or `SEAR_NO_NUMBA` is set (the same hits, slower)."""
    global _kernel
    if _kernel is None:
        compiled = compiled_or_none(_compile, "the terrain's ray kernel", "it runs as plain Python") \
            if numba_wanted() else None
        _kernel = compiled if compiled is not None else cast_grid
    return _kernel


def _compile() -> Callable[..., None]:
    """cast_grid and its callees compiled with numba's cache (sear.jit): the callees replace this module's
    plain functions of the same names first, as numba compiles a call only to a compiled function."""
    global _triangle, _cell
    from sear.jit import compile_functions

    _triangle, = compile_functions(_triangle)
    _cell, = compile_functions(_cell)
    kernel, = compile_functions(cast_grid)
    h = np.zeros((2, 2), dtype=np.float32)
    blocks = np.zeros((1, 1), dtype=np.float32)
    kernel(h, blocks, blocks, BLOCK, 0.0, 0.0, 1.0, 1.0, np.zeros((1, 3)), np.array([[0.0, 0.0, -1.0]]),
           np.ones(1), np.zeros((1, 3)), np.zeros(1, dtype=np.bool_))
    return kernel
