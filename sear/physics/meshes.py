"""Model import: mesh files and heightmap images to trimesh meshes, and meshes to pybullet shapes.

Reading (`load_mesh`, `load_terrain`) is pure (no pybullet), so the settings window's previews use the
same code as the simulation. Every failure a user can cause becomes a ProjectError naming the file and
the settings tab it came from.

Terrain collision uses static concave triangle meshes for both mesh files and heightmaps. pybullet's
GEOM_HEIGHTFIELD was rejected: it is centred on its height range, silently corrupts above ~1,450²
samples and ray casts against it are slower; a triangle mesh has none of those traps. A concave mesh
shape holds at most 131,072 vertices, so larger terrains are split into square tiles, each its own
static body, with no gaps (tiles share their border vertices).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import trimesh
from lxml import etree

from sear.errors import ProjectError
from sear.project import HEIGHTMAP_SUFFIXES, MESH_SUFFIXES, Terrain

MAX_MESH_VERTICES = 131_072
"""pybullet's limit of vertices in one concave mesh shape (past it: a misleading 'invalid mesh' error)."""

_TILE_VERTEX_BUDGET = 100_000


def _suffix(path: Path) -> str:
    name = path.name.lower()
    return ".mesh.xml" if name.endswith(".mesh.xml") else path.suffix.lower()


def _fail(path: Path, tab: str, sentence: str) -> ProjectError:
    return ProjectError(sentence, file=path, field=tab or None)


_cache: dict[tuple[str, float, float], trimesh.Trimesh] = {}


def load_mesh(path: str | Path, *, scale: float = 1.0, tab: str = "") -> trimesh.Trimesh:
    """Read a model file as one triangle mesh in metres (`scale` times the file's units).

    Reads what trimesh reads (OBJ, STL, PLY, glTF/GLB, OFF, COLLADA) with scene graphs flattened, and
    Ogre XML meshes (.mesh.xml). `tab` names the settings tab the file was chosen on, for messages.
    A fresh copy is returned each call (callers may transform it); reading is cached by file and mtime.
    """
    path = Path(path)
    if not path.exists():
        raise _fail(path, tab, "the model file does not exist; choose it again on that tab.")
    if path.is_dir():
        raise _fail(path, tab, "this is a folder, not a model file.")
    suffix = _suffix(path)
    if suffix not in MESH_SUFFIXES:
        raise _fail(path, tab, f"{suffix or 'this file type'} is not a model format SEAR reads; "
                               f"use one of {', '.join(MESH_SUFFIXES)}.")
    if not (scale > 0 and math.isfinite(scale)):
        raise _fail(path, tab, f"the scale must be a number greater than 0, not {scale}.")
    try:
        key = (str(path.resolve()), path.stat().st_mtime, float(scale))
    except OSError as exc:
        raise _fail(path, tab, f"the model file cannot be read ({exc.strerror}).") from None
    cached = _cache.get(key)
    if cached is not None:
        return cached.copy()
    mesh = _read_ogre(path, tab) if suffix == ".mesh.xml" else _read_trimesh(path, tab)
    mesh = _repair(mesh, path, tab)
    if scale != 1.0:
        mesh.apply_scale(scale)
    _cache[key] = mesh
    return mesh.copy()


def _read_trimesh(path: Path, tab: str) -> trimesh.Trimesh:
    try:
        with open(path, "rb"):
            pass
    except OSError as exc:
        raise _fail(path, tab, f"the model file cannot be read ({exc.strerror}).") from None
    if path.stat().st_size == 0:
        raise _fail(path, tab, "the model file is empty; export the model again.")
    try:
        loaded = trimesh.load(str(path), force="mesh", process=False)
    except Exception as exc:  # trimesh raises many types for damaged files
        raise _fail(path, tab, f"the model file could not be read as {_suffix(path)} ({_short(exc)}); it may be "
                               "damaged or in another format: export it again.") from None
    if isinstance(loaded, trimesh.Scene):  # force='mesh' gives an empty Scene for files without geometry
        loaded = loaded.to_mesh() if loaded.geometry else trimesh.Trimesh()
    if not isinstance(loaded, trimesh.Trimesh):
        raise _fail(path, tab, "the file holds no triangle mesh (only points or lines); export a mesh.")
    return loaded


def _short(exc: Exception) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return text[:160]


def _read_ogre(path: Path, tab: str) -> trimesh.Trimesh:
    """Ogre XML mesh (OgreXMLConverter format): shared geometry and/or per-submesh geometry."""
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False)
    try:
        root = etree.parse(str(path), parser).getroot()
    except (etree.XMLSyntaxError, OSError) as exc:
        raise _fail(path, tab, f"the Ogre mesh is not readable XML ({_short(exc)}).") from None
    if root.tag != "mesh":
        raise _fail(path, tab, f"not an Ogre XML mesh: the root element is <{root.tag}>, expected <mesh>.")

    def positions(geometry: etree._Element) -> np.ndarray:
        pts = []
        for vb in geometry.iter("vertexbuffer"):
            if vb.get("positions", "false") != "true":
                continue
            for v in vb.iter("vertex"):
                p = v.find("position")
                if p is None:
                    continue
                try:
                    pts.append([float(p.get("x")), float(p.get("y")), float(p.get("z"))])
                except (TypeError, ValueError):
                    raise _fail(path, tab, f"line {p.sourceline}: a vertex position is not three numbers.") from None
        return np.asarray(pts, dtype=float).reshape(-1, 3)

    shared = root.find("sharedgeometry")
    shared_pts = positions(shared) if shared is not None else np.zeros((0, 3))
    all_v, all_f, offset = [], [], 0
    for sub in root.iter("submesh"):
        if sub.get("operationtype", "triangle_list") != "triangle_list":
            continue
        geometry = sub.find("geometry")
        use_shared = sub.get("usesharedvertices", "false") == "true" or geometry is None
        pts = shared_pts if use_shared else positions(geometry)
        faces = []
        for f in sub.iter("face"):
            try:
                faces.append([int(f.get("v1")), int(f.get("v2")), int(f.get("v3"))])
            except (TypeError, ValueError):
                raise _fail(path, tab, f"line {f.sourceline}: a face is not three vertex numbers.") from None
        faces_arr = np.asarray(faces, dtype=np.int64).reshape(-1, 3)
        if len(faces_arr) and (faces_arr.max() >= len(pts) or faces_arr.min() < 0):
            raise _fail(path, tab, "a face refers to a vertex that does not exist; export the mesh again.")
        all_v.append(pts)
        all_f.append(faces_arr + offset)
        offset += len(pts)
    if not all_v:
        return trimesh.Trimesh()
    # Ogre is y-up like most game engines; SEAR is z-up.
    vertices = np.concatenate(all_v) @ np.array([[1, 0, 0], [0, 0, 1], [0, 1, 0]], float)
    faces = np.concatenate(all_f)
    return trimesh.Trimesh(vertices, faces[:, ::-1], process=False)


def _repair(mesh: trimesh.Trimesh, path: Path, tab: str) -> trimesh.Trimesh:
    if len(mesh.faces) == 0 or len(mesh.vertices) == 0:
        raise _fail(path, tab, "the model has no triangles (it is empty); export it again with its geometry.")
    if not np.all(np.isfinite(mesh.vertices)):
        raise _fail(path, tab, "the model has vertices that are not finite numbers (NaN or infinity).")
    mesh.merge_vertices()
    mesh.update_faces(mesh.nondegenerate_faces())
    mesh.remove_unreferenced_vertices()
    if len(mesh.faces) == 0:
        raise _fail(path, tab, "every triangle of the model is degenerate (zero area); the model is broken.")
    extents = mesh.extents
    if not np.all(np.isfinite(extents)) or float(np.max(extents)) <= 0:
        raise _fail(path, tab, "the model has no size (all its vertices are at one point).")
    return mesh


# --- terrain -------------------------------------------------------------------------------------

@dataclass
class TerrainModel:
    """The terrain as loaded: a mesh in the world frame (x/y centred on the origin, z up, metres).

    `heightfield` holds the heightmap's heights (rows north to south, columns west to east) when the
    terrain came from an image; `vertex_colors` (N, 4) uint8 when the model file had colours.
    """

    mesh: trimesh.Trimesh
    heightfield: np.ndarray | None = None
    vertex_colors: np.ndarray | None = None
    source: Path | None = None


def load_terrain(terrain: Terrain, *, tab: str = "Terrain Model") -> TerrainModel:
    """Read the project's terrain (mesh file or heightmap image) centred on the world origin."""
    if terrain.file is None:
        raise ProjectError("no terrain file is chosen; choose one on the Terrain Model tab.", field=tab)
    path = Path(terrain.file)
    if _suffix(path) in HEIGHTMAP_SUFFIXES:
        return _load_heightmap(path, terrain, tab)
    mesh = load_mesh(path, scale=terrain.scale, tab=tab)
    centre = (mesh.bounds[0] + mesh.bounds[1]) / 2.0
    mesh.apply_translation((-centre[0], -centre[1], 0.0))
    colours = None
    if mesh.visual.kind == "vertex":
        colours = np.asarray(mesh.visual.vertex_colors, dtype=np.uint8)
    return TerrainModel(mesh=mesh, vertex_colors=colours, source=path)


def _load_heightmap(path: Path, terrain: Terrain, tab: str) -> TerrainModel:
    from PIL import Image, UnidentifiedImageError

    if not path.exists():
        raise _fail(path, tab, "the heightmap image does not exist; choose it again on that tab.")
    try:
        with Image.open(path) as image:
            image.load()
            if image.mode in ("I;16", "I;16B", "I;16L", "I"):
                grey = np.asarray(image, dtype=np.float64)
                top = 65535.0
            else:
                grey = np.asarray(image.convert("L"), dtype=np.float64)
                top = 255.0
    except (UnidentifiedImageError, OSError, ValueError) as exc:
        raise _fail(path, tab, f"the heightmap image cannot be read ({_short(exc)}).") from None
    rows, cols = grey.shape
    if rows < 2 or cols < 2:
        raise _fail(path, tab, "the heightmap image must be at least 2 x 2 pixels.")
    heights = grey / top * terrain.heightmap_height
    size = terrain.heightmap_size
    # Image row 0 is the north edge (a map), column 0 the west edge; the longer side spans `size` metres.
    step = size / (max(rows, cols) - 1)
    xs = (np.arange(cols) - (cols - 1) / 2.0) * step
    ys = ((rows - 1) / 2.0 - np.arange(rows)) * step
    gx, gy = np.meshgrid(xs, ys, indexing="xy")
    vertices = np.column_stack([gx.ravel(), gy.ravel(), heights.ravel()])
    idx = np.arange(rows * cols).reshape(rows, cols)
    a, b = idx[1:, :-1].ravel(), idx[1:, 1:].ravel()      # south-west, south-east
    c, d = idx[:-1, 1:].ravel(), idx[:-1, :-1].ravel()    # north-east, north-west
    faces = np.concatenate([np.column_stack([a, b, c]), np.column_stack([a, c, d])])
    mesh = trimesh.Trimesh(vertices, faces, process=False)
    return TerrainModel(mesh=mesh, heightfield=heights, source=path)


# --- pybullet shapes -----------------------------------------------------------------------------

def split_into_tiles(mesh: trimesh.Trimesh, max_vertices: int = _TILE_VERTEX_BUDGET) -> list[trimesh.Trimesh]:
    """Split a mesh into x/y grid tiles of at most `max_vertices` vertices each (faces go to the tile
    holding their centroid; border vertices are duplicated, so the tiles join without gaps)."""
    if len(mesh.vertices) <= max_vertices:
        return [mesh]
    n = 2
    while True:
        lo, hi = mesh.bounds[0][:2], mesh.bounds[1][:2]
        span = np.maximum(hi - lo, 1e-9)
        cell = np.minimum(((mesh.triangles_center[:, :2] - lo) / span * n).astype(int), n - 1)
        tile_of_face = cell[:, 0] * n + cell[:, 1]
        tiles = []
        for tile in np.unique(tile_of_face):
            part = mesh.submesh([np.nonzero(tile_of_face == tile)[0]], append=True, repair=False)
            tiles.append(part)
        if max(len(t.vertices) for t in tiles) <= max_vertices:
            return tiles
        n *= 2


def create_terrain_bodies(client: int, model: TerrainModel) -> list[int]:
    """Static pybullet bodies for the terrain (one per tile), at the world origin."""
    import pybullet as p

    ids = []
    for tile in split_into_tiles(model.mesh):
        if len(tile.vertices) > MAX_MESH_VERTICES:  # cannot happen after splitting; a guard, not a path
            raise ProjectError("the terrain could not be split below pybullet's vertex limit.", file=model.source)
        shape = p.createCollisionShape(
            p.GEOM_MESH,
            vertices=np.asarray(tile.vertices, dtype=np.float64).tolist(),
            indices=np.asarray(tile.faces, dtype=np.int32).ravel().tolist(),
            flags=p.GEOM_FORCE_CONCAVE_TRIMESH,
            physicsClientId=client,
        )
        if shape < 0:
            raise ProjectError("pybullet refused the terrain mesh; it may be damaged.", file=model.source)
        body = p.createMultiBody(baseMass=0, baseCollisionShapeIndex=shape, physicsClientId=client)
        ids.append(body)
    return ids


def convex_collision_shape(client: int, mesh: trimesh.Trimesh, *, offset: tuple[float, float, float] = (0, 0, 0),
                           vhacd: bool = False) -> int:
    """A convex collision shape for a moving body: the mesh's convex hull (or, with `vhacd`, pybullet's
    V-HACD decomposition written next to a temporary OBJ). `offset` shifts the shape in its body frame."""
    import tempfile

    import pybullet as p

    if vhacd:
        with tempfile.TemporaryDirectory() as tmp:
            src, out = os.path.join(tmp, "in.obj"), os.path.join(tmp, "out.obj")
            mesh.export(src)
            p.vhacd(src, out, os.path.join(tmp, "log.txt"), physicsClientId=client)
            return p.createCollisionShape(p.GEOM_MESH, fileName=out, collisionFramePosition=offset,
                                          physicsClientId=client)
    hull = mesh.convex_hull
    return p.createCollisionShape(
        p.GEOM_MESH, vertices=np.asarray(hull.vertices, dtype=np.float64).tolist(),
        collisionFramePosition=offset, physicsClientId=client,
    )


def create_mesh_body(client: int, mesh: trimesh.Trimesh, *, mass: float,
                     position: tuple[float, float, float] = (0, 0, 0),
                     orientation: tuple[float, float, float, float] = (0, 0, 0, 1), convex: bool = True) -> int:
    """A pybullet body with the mesh's collision shape (convex hull when `convex` or when it moves)."""
    import pybullet as p

    if convex or mass > 0:
        shape = convex_collision_shape(client, mesh)
    else:
        shape = p.createCollisionShape(
            p.GEOM_MESH, vertices=np.asarray(mesh.vertices, dtype=np.float64).tolist(),
            indices=np.asarray(mesh.faces, dtype=np.int32).ravel().tolist(),
            flags=p.GEOM_FORCE_CONCAVE_TRIMESH, physicsClientId=client,
        )
    return p.createMultiBody(baseMass=mass, baseCollisionShapeIndex=shape, basePosition=position,
                             baseOrientation=orientation, physicsClientId=client)
