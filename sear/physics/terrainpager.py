"""Terrain paging: only the terrain near the moving bodies is in pybullet, as collision tiles loaded and
dropped as they move.

A large height grid (sear.models.heightgrid) as one pybullet mesh costs ~430 bytes and ~8 µs a triangle
(Bullet's triangle BVH): a 2049² heightmap's 8.4 M triangles took 4.65 GB and 65 s. Here the grid is cut
into square tiles of `tile_cells` cells (2·tile_cells² triangles, each tile a static concave mesh, the
grid's own triangles, border vertices shared so tiles join without a gap); a tile is in pybullet while a
moving body (a robot, a movable obstacle) is within `load_distance` of it, and leaves once every such body
is more than `drop_distance` from it (the gap between the two is the hysteresis: a robot driving along a
tile's edge does not load and drop it every step). Tiles are loaded before the physics step, within
`load_distance` (more than any robot's size) of the bodies, so a wheel never reaches a tile that is not
there. Load time follows the area in use, not the map; memory the area visited (pybullet keeps a dropped
tile's shape: TerrainPager.shapes).

The rest of the world sees the whole terrain without pybullet: World.terrain_heights reads the grid, and
the sensors' rays walk it (HeightGrid.cast) on the very triangles of the tiles.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pybullet as p

from sear.collision import STATIC_COLLISION_GROUP, TERRAIN_COLLISION_GROUP, TERRAIN_COLLISION_MASK
from sear.errors import ProjectError
from sear.models.heightgrid import HeightGrid


@dataclass(frozen=True)
class Paging:
    """How a height-grid terrain is paged (sear.physics.world.World pages the grids too large to be one mesh,
    sear.models.heightgrid.MESH_UP_TO_SAMPLES; tests force it on small ones)."""

    tile_cells: int = 128
    """Cells along a tile's side: 128 gives 32,768 triangles (~14 MB and ~0.15 s in pybullet) a tile."""
    load_distance: float = 10.0
    """m: a tile is loaded when a moving body's centre is this close to it: more than any robot's reach
    from its centre plus the way it covers between two looks (move_before_update), so no wheel or chassis
    ever reaches a tile that is not there. Small, so a fine DEM (0.1 m pixels: 12.8 m tiles) loads 4-9
    tiles around a robot, not dozens."""
    drop_distance: float = 20.0
    """m: a tile is dropped when every moving body's centre is farther than this from it."""
    move_before_update: float = 1.0
    """m: the tiles are looked at again once a body has moved this far since they last were."""


class TerrainPager:
    """The collision tiles of a height grid in a pybullet client, kept around a set of points."""

    def __init__(self, client: int, grid: HeightGrid, paging: Paging, source: object = None) -> None:
        self.client = client
        self.grid = grid
        self.paging = paging
        self.source = source
        n = paging.tile_cells
        self.tile_rows = -(-(grid.rows - 1) // n)
        self.tile_cols = -(-(grid.cols - 1) // n)
        self.loaded: dict[tuple[int, int], tuple[int, int]] = {}
        """(tile row, tile column) -> (pybullet body, collision shape) of every tile in pybullet now."""
        self.loads = 0
        """Tiles loaded so far (a tile loaded again after it was dropped counts again)."""
        self.drops = 0
        """Tiles dropped so far."""
        self.shapes: dict[tuple[int, int], int] = {}
        """Collision shapes of dropped tiles, kept for when the tile comes back: pybullet frees a mesh shape
        only when the world is reset (removeCollisionShape of a shape a removed body had is refused; bullet3
        issues 2086, 3319, 4326; measured: ~13 MB a 128² tile for each load otherwise), so a tile's shape is
        made once and the memory grows with the area the robots have visited, not with the loads."""
        self._last: np.ndarray | None = None

    def tile_box(self, key: tuple[int, int]) -> tuple[float, float, float, float]:
        """x min, x max, y min, y max (m) of tile `key`."""
        g, n = self.grid, self.paging.tile_cells
        i, j = key
        c0, c1 = j * n, min((j + 1) * n, g.cols - 1)
        r0, r1 = i * n, min((i + 1) * n, g.rows - 1)
        return g.x0 + c0 * g.dx, g.x0 + c1 * g.dx, g.y0 - r1 * g.dy, g.y0 - r0 * g.dy

    def _near(self, points: np.ndarray, distance: float) -> set[tuple[int, int]]:
        """The tiles within `distance` m (x/y) of any of `points` (N, 2)."""
        g, n = self.grid, self.paging.tile_cells
        found: set[tuple[int, int]] = set()
        for x, y in points:
            c_lo = math.floor((x - distance - g.x0) / (g.dx * n))
            c_hi = math.floor((x + distance - g.x0) / (g.dx * n))
            r_lo = math.floor((g.y0 - (y + distance)) / (g.dy * n))
            r_hi = math.floor((g.y0 - (y - distance)) / (g.dy * n))
            for i in range(max(r_lo, 0), min(r_hi, self.tile_rows - 1) + 1):
                for j in range(max(c_lo, 0), min(c_hi, self.tile_cols - 1) + 1):
                    x0, x1, y0, y1 = self.tile_box((i, j))
                    if math.hypot(max(x0 - x, 0.0, x - x1), max(y0 - y, 0.0, y - y1)) <= distance:
                        found.add((i, j))
        return found

    def update(self, points: np.ndarray, force: bool = False) -> bool:
        """Load the tiles within load_distance of `points` ((N, 2) or (N, 3) m, the moving bodies'
        centres) and drop those farther than drop_distance from all of them. Nothing is looked at unless a
        point moved move_before_update m since the last look (or their number changed, or `force`).
        True when a tile was loaded or dropped."""
        xy = np.asarray(points, dtype=np.float64).reshape(-1, np.shape(points)[-1] if len(points) else 2)[:, :2]
        last = self._last
        if (not force and last is not None and last.shape == xy.shape
                and float(np.max(np.abs(xy - last), initial=0.0)) < self.paging.move_before_update):
            return False
        self._last = xy.copy()
        wanted = self._near(xy, self.paging.load_distance)
        kept = self._near(xy, self.paging.drop_distance)
        changed = False
        for key in sorted(set(self.loaded) - kept):
            body, shape = self.loaded.pop(key)
            p.removeBody(body, physicsClientId=self.client)
            self.shapes[key] = shape
            self.drops += 1
            changed = True
        for key in sorted(wanted - set(self.loaded)):
            self.loaded[key] = self._load(key)
            self.loads += 1
            changed = True
        return changed

    def _load(self, key: tuple[int, int]) -> tuple[int, int]:
        g, n = self.grid, self.paging.tile_cells
        i, j = key
        shape = self.shapes.pop(key, -1)
        if shape < 0:
            vertices, faces = g.patch(i * n, min((i + 1) * n, g.rows - 1), j * n, min((j + 1) * n, g.cols - 1))
            try:
                shape = p.createCollisionShape(p.GEOM_MESH, vertices=vertices.tolist(),
                                               indices=faces.ravel().tolist(), flags=p.GEOM_FORCE_CONCAVE_TRIMESH,
                                               physicsClientId=self.client)
            except (p.error, SystemError):
                shape = -1
        if shape < 0:
            raise ProjectError(f"pybullet could not build the terrain's collision tile {key}.",
                               file=self.source if isinstance(self.source, str) else None, field="Terrain Model")
        body = p.createMultiBody(baseMass=0, baseCollisionShapeIndex=shape, useMaximalCoordinates=True,
                                 physicsClientId=self.client)
        p.setCollisionFilterGroupMask(body, -1, STATIC_COLLISION_GROUP | TERRAIN_COLLISION_GROUP,
                                      TERRAIN_COLLISION_MASK, physicsClientId=self.client)
        return body, shape

    @property
    def bodies(self) -> list[int]:
        """pybullet ids of the tiles in pybullet now."""
        return [body for body, _ in self.loaded.values()]
