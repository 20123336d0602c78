"""Meshes to pybullet shapes: terrain tiles (static concave meshes) and convex shapes for moving bodies.

The meshes come from sear.models.meshfiles, which reads model files without pybullet.

Terrain collision: static concave triangle meshes, for mesh files and heightmap images alike.
pybullet's GEOM_HEIGHTFIELD was weighed and rejected, because a triangle mesh is the robust choice:

- a heightfield above ~1,450² samples is corrupted silently, so large images need tiling anyway, and
  heightfield tiles are each centred on their own height range (a per-tile body offset) and must
  overlap by one sample row; a mistake there is silent too. A mesh past pybullet's limits fails
  loudly, and mesh tiles simply share their border vertices;
- the surface the wheels and rays touch is, by construction, the triangles the window draws (Bullet
  splits heightfield cells along its own diagonal, which a drawn mesh would have to copy);
- ray speed does not decide it: measured here on a 513² smooth terrain, horizontal 20 m rays (range
  sensors, LIDAR) ran at 224 k/s against the mesh and 181 k/s against the heightfield; vertical rays
  (only `World.terrain_height`, a few per obstacle) at 145 k/s and 493 k/s;
- one code path (mesh → tiles) serves every terrain, so the tiling is tested once.

A concave mesh shape holds at most 131,072 vertices and 524,288 indices (174,762 triangles); past
either limit pybullet fails (with "invalid mesh filename" or "Number of indices exceeds the maximum").
Larger terrains are split into tiles, each its own static body, no gaps (tiles share border vertices).
The price is memory: heightmap images are limited to sear.models.meshfiles.MAX_HEIGHTMAP_SAMPLES pixels.
"""

from __future__ import annotations

import math
import os
import tempfile
from typing import TYPE_CHECKING

import numpy as np

from sear.errors import ProjectError

if TYPE_CHECKING:
    import trimesh

    from sear.models.meshfiles import TerrainModel

MAX_MESH_VERTICES = 131_072
"""pybullet's limit of vertices in one concave mesh shape (past it: a misleading 'invalid mesh' error)."""
MAX_MESH_FACES = 524_288 // 3
"""pybullet's limit of triangles in one concave mesh shape (524,288 indices; measured: 174,762 works)."""


# --- pybullet shapes -----------------------------------------------------------------------------

def split_into_tiles(mesh: trimesh.Trimesh, max_vertices: int = MAX_MESH_VERTICES,
                     max_faces: int = MAX_MESH_FACES) -> list[trimesh.Trimesh]:
    """Split a mesh into pieces of at most `max_vertices` vertices and `max_faces` triangles.

    Faces go to the cell of an x/y grid holding their centroid (the grid sized so an even spread of
    faces fits); a cell still over a limit is halved at the median centroid along its longer side,
    and, should centroids coincide (a vertical wall of faces), by face order, so splitting always ends.
    Border vertices are copied into every tile that uses them, so the tiles join without gaps.
    """
    import trimesh

    faces = np.asarray(mesh.faces)
    if len(mesh.vertices) <= max_vertices and len(faces) <= max_faces:
        return [mesh]
    xy = np.asarray(mesh.vertices)[:, :2]
    centres = (xy[faces[:, 0]] + xy[faces[:, 1]] + xy[faces[:, 2]]) / 3.0  # not mesh.triangles: 9 floats a face
    lo, hi = centres.min(axis=0), centres.max(axis=0)
    n = max(2, math.ceil(math.sqrt(max(len(mesh.vertices) / max_vertices, len(faces) / max_faces) * 1.5)))
    cell = np.minimum(((centres - lo) / np.maximum(hi - lo, 1e-12) * n).astype(np.int64), n - 1)
    key = cell[:, 1] * n + cell[:, 0]
    order = np.argsort(key, kind="stable")
    bounds = np.flatnonzero(np.diff(key[order])) + 1
    pending = [g for g in np.split(order, bounds) if len(g)]
    groups: list[np.ndarray] = []
    while pending:
        group = pending.pop()
        if len(group) <= max_faces and len(np.unique(faces[group])) <= max_vertices:
            groups.append(group)
            continue
        c = centres[group]
        axis = int(np.argmax(c.max(axis=0) - c.min(axis=0)))
        ordered = group[np.argsort(c[:, axis], kind="stable")]
        half = len(ordered) // 2
        pending.extend([ordered[half:], ordered[:half]])
    groups.sort(key=lambda g: int(g.min()))
    tiles = []
    for group in groups:
        used, inverse = np.unique(faces[group], return_inverse=True)
        tiles.append(trimesh.Trimesh(mesh.vertices[used], inverse.reshape(-1, 3), process=False))
    return tiles


def _concave_shape(client: int, mesh: trimesh.Trimesh) -> int:
    import pybullet as p

    try:
        shape = p.createCollisionShape(
            p.GEOM_MESH,
            vertices=np.asarray(mesh.vertices, dtype=np.float64).tolist(),
            indices=np.asarray(mesh.faces, dtype=np.int32).ravel().tolist(),
            flags=p.GEOM_FORCE_CONCAVE_TRIMESH,
            physicsClientId=client,
        )
    except (p.error, SystemError):
        shape = -1
    return shape


def create_terrain_bodies(client: int, model: TerrainModel) -> list[int]:
    """Static pybullet bodies for the terrain at the world origin: one concave mesh per tile.

    Returns the body ids (one for terrains within pybullet's per-shape limits, more for larger ones).
    """
    import pybullet as p

    if model.mesh is None:
        raise ValueError("a terrain without a mesh (a large height grid) is paged: sear.physics.terrainpager")
    ids = []
    for tile in split_into_tiles(model.mesh):
        shape = _concave_shape(client, tile)
        if shape < 0:
            raise ProjectError("pybullet could not build the terrain's collision mesh; the model may be "
                               "damaged: export it again.", file=model.source, field="Terrain Model")
        ids.append(p.createMultiBody(baseMass=0, baseCollisionShapeIndex=shape, physicsClientId=client))
    return ids


def convex_collision_shape(client: int, mesh: trimesh.Trimesh, *,
                           offset: tuple[float, float, float] = (0.0, 0.0, 0.0), vhacd: bool = False) -> int:
    """A convex collision shape for a moving body, in the mesh's own frame (metres).

    By default the mesh's convex hull (trimesh/qhull) as a pybullet GEOM_MESH of its vertices. With
    `vhacd`, pybullet's V-HACD splits a clearly concave model (a U-shaped bracket, a chair) into
    several convex parts, loaded as one compound shape; it costs a second or more per model. `offset`
    shifts the shape in its body frame (e.g. to put the centre of mass elsewhere).
    """
    import pybullet as p
    import trimesh

    if vhacd:
        with tempfile.TemporaryDirectory(prefix="sear-vhacd-") as tmp:
            src, out = os.path.join(tmp, "in.obj"), os.path.join(tmp, "out.obj")
            trimesh.Trimesh(mesh.vertices, mesh.faces, process=False).export(src)
            p.vhacd(src, out, os.path.join(tmp, "log.txt"), physicsClientId=client)
            shape = p.createCollisionShape(p.GEOM_MESH, fileName=out, collisionFramePosition=offset,
                                           physicsClientId=client)
    else:
        try:
            with np.errstate(all="ignore"):
                points = np.asarray(mesh.convex_hull.vertices, dtype=np.float64)
        except Exception:  # qhull refuses flat or degenerate point sets: the points themselves still bound it
            points = np.unique(np.asarray(mesh.vertices, dtype=np.float64), axis=0)
        shape = p.createCollisionShape(p.GEOM_MESH, vertices=points.tolist(),
                                       collisionFramePosition=offset, physicsClientId=client)
    if shape < 0:
        raise ProjectError("pybullet could not build a collision shape from this model; export it again.")
    return shape
