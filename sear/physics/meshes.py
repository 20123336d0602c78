"""Model import: mesh files and heightmap images to trimesh meshes, and meshes to pybullet shapes.

Reading (`load_mesh`, `load_terrain`) is pure (no pybullet), so the settings window's previews use the
same code as the simulation. Every failure a user can cause becomes a ProjectError naming the file and
the settings tab it came from, with a sentence saying what to do.

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
The price is memory: heightmap images are limited to MAX_HEIGHTMAP_SAMPLES pixels.
"""

from __future__ import annotations

import math
import os
import tempfile
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import trimesh
from lxml import etree

from sear.errors import ProjectError
from sear.project import HEIGHTMAP_SUFFIXES, MESH_SUFFIXES, Terrain, model_suffix

MAX_MESH_VERTICES = 131_072
"""pybullet's limit of vertices in one concave mesh shape (past it: a misleading 'invalid mesh' error)."""
MAX_MESH_FACES = 524_288 // 3
"""pybullet's limit of triangles in one concave mesh shape (524,288 indices; measured: 174,762 works)."""
MAX_HEIGHTMAP_SAMPLES = 2049 * 2049
"""Largest heightmap image, pixels (a 2049 x 2049 image). Measured here: 1025² loads into pybullet in
~7 s using 1.5 GB, 2049² in ~50 s using 5.3 GB (Bullet's triangle BVH); larger would not fit a desktop."""

_CACHE_SIZE = 16
_cache: OrderedDict[tuple, trimesh.Trimesh] = OrderedDict()
_cache_lock = threading.Lock()

# Ogre (like jMonkeyEngine, which the original SEAR used) is y-up with -z forward/north; SEAR is ENU.
# (x, y, z) Ogre -> (x, -z, y): a rotation (not a mirror), so windings and handedness are kept.
_OGRE_TO_ENU = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, -1.0, 0.0]])


def _fail(path: Path | None, tab: str, sentence: str) -> ProjectError:
    return ProjectError(sentence, file=path, field=tab or None)


def _short(exc: BaseException) -> str:
    text = str(exc).strip()
    return (text.splitlines()[0] if text else type(exc).__name__)[:160]


# --- reading models ------------------------------------------------------------------------------

def load_mesh(path: str | Path, *, scale: float = 1.0, tab: str = "") -> trimesh.Trimesh:
    """Read a model file as one triangle mesh in metres (`scale` × the file's units).

    Reads what trimesh reads (OBJ, STL, PLY, glTF/GLB, OFF, COLLADA through pycollada), scenes
    concatenated with their node transforms applied, and Ogre XML meshes (`.mesh.xml`, turned from
    Ogre's y-up into SEAR's z-up). The mesh is repaired where trimesh can (duplicate vertices merged,
    degenerate and duplicate triangles dropped, windings made consistent, small holes filled); an open
    (non-watertight) mesh is accepted, since moving bodies collide with its convex hull and terrain is
    an open surface anyway. `tab` names the settings tab the file was chosen on, for messages.

    Raises ProjectError (file = `path`, field = `tab`) for a missing, unreadable, empty or broken file.
    Results are cached by (resolved path, modification time, size, scale); each call returns a copy, so
    callers may transform it.
    """
    path = Path(path)
    try:
        scale = float(scale)
    except (TypeError, ValueError):
        scale = math.nan
    if not (math.isfinite(scale) and scale > 0):
        raise _fail(path, tab, f"the scale must be a number greater than 0, not {scale}; fix it on that tab.")
    if not path.exists():
        raise _fail(path, tab, "the model file does not exist; choose it again on that tab.")
    if path.is_dir():
        raise _fail(path, tab, "this is a folder, not a model file; choose a model file on that tab.")
    suffix = model_suffix(path)
    if suffix not in MESH_SUFFIXES:
        hint = (" Binary Ogre .mesh files must be converted to XML first: OgreXMLConverter NAME.mesh"
                if suffix == ".mesh" else "")
        raise _fail(path, tab, f"'{suffix or path.name}' is not a model format SEAR reads; use one of "
                               f"{', '.join(MESH_SUFFIXES)}.{hint}")
    try:
        stat = path.stat()
        with open(path, "rb"):
            pass
    except OSError as exc:
        raise _fail(path, tab, f"the model file cannot be read ({exc.strerror}); check its permissions.") from None
    if stat.st_size == 0:
        raise _fail(path, tab, "the model file is empty (0 bytes); export the model again.")
    key = (str(path.resolve()), stat.st_mtime_ns, stat.st_size, scale)
    with _cache_lock:
        cached = _cache.get(key)
        if cached is not None:
            _cache.move_to_end(key)
            return cached.copy()
    mesh = _read_ogre(path, tab) if suffix == ".mesh.xml" else _read_trimesh(path, tab)
    mesh = _repair(mesh, path, tab)
    if scale != 1.0:
        mesh.apply_scale(scale)
    with _cache_lock:  # the settings window may preview in a worker thread while the sim loads
        _cache[key] = mesh
        while len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    return mesh.copy()


def _read_trimesh(path: Path, tab: str) -> trimesh.Trimesh:
    try:
        loaded = trimesh.load(str(path), force="mesh", process=False)
    except Exception as exc:  # trimesh and its loaders raise many types for damaged files
        raise _fail(path, tab, f"the file could not be read as {model_suffix(path)} ({_short(exc)}); it may be "
                               "damaged or in another format: export it again.") from None
    if isinstance(loaded, trimesh.Scene):  # force='mesh' leaves an empty Scene when there is no geometry
        meshes = [g for g in loaded.dump() if isinstance(g, trimesh.Trimesh)] if loaded.geometry else []
        loaded = trimesh.util.concatenate(meshes) if meshes else trimesh.Trimesh()
    if not isinstance(loaded, trimesh.Trimesh):
        raise _fail(path, tab, "the file holds no triangle mesh (only points or lines); export a mesh.")
    return loaded


def _repair(mesh: trimesh.Trimesh, path: Path, tab: str) -> trimesh.Trimesh:
    if len(mesh.faces) == 0 or len(mesh.vertices) == 0:
        raise _fail(path, tab, "the model has no triangles (it is empty); export it again with its geometry.")
    if not np.all(np.isfinite(mesh.vertices)):
        raise _fail(path, tab, "the model has vertices that are not finite numbers (NaN or infinity); "
                               "export it again.")
    mesh.merge_vertices()
    mesh.update_faces(mesh.nondegenerate_faces())
    mesh.update_faces(mesh.unique_faces())
    mesh.remove_unreferenced_vertices()
    if len(mesh.faces) == 0:
        raise _fail(path, tab, "every triangle of the model has zero area; the model is broken beyond "
                               "repair: export it again.")
    if float(np.max(mesh.extents)) <= 0:
        raise _fail(path, tab, "the model has no size (all its vertices are at one point).")
    with np.errstate(all="ignore"):
        try:
            if not mesh.is_watertight:
                # Close small (3- or 4-edge) holes only when that makes a solid: open surfaces (terrain,
                # a sign) stay open rather than being doubled into zero-volume shells.
                filled = mesh.copy()
                trimesh.repair.fill_holes(filled)
                trimesh.repair.fix_normals(filled)
                if filled.is_watertight and filled.volume > 1e-6 * float(np.prod(filled.extents)) > 0:
                    mesh = filled
            trimesh.repair.fix_normals(mesh)
        except Exception:  # repair is best effort: an unrepaired but readable mesh is still usable
            pass
    return mesh


def _read_ogre(path: Path, tab: str) -> trimesh.Trimesh:
    """Ogre XML mesh (the OgreXMLConverter format the original SEAR imported).

    <mesh> holds an optional <sharedgeometry> and <submeshes>/<submesh> elements, each either using the
    shared vertices or carrying its own <geometry>; a geometry holds <vertexbuffer>s whose <vertex>
    elements carry <position>, <normal> and <colour_diffuse value="r g b a"> (0..1) by index. Faces
    are <face v1 v2 v3>; for triangle_strip and triangle_fan submeshes only the first face has all
    three indices and each further face adds one (v1). Line and point submeshes are skipped.
    """
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False)
    try:
        root = etree.parse(str(path), parser).getroot()
    except (etree.XMLSyntaxError, OSError) as exc:
        raise _fail(path, tab, f"the Ogre mesh is not readable XML ({_short(exc)}); export it again.") from None
    if root.tag != "mesh":
        raise _fail(path, tab, f"not an Ogre XML mesh: the root element is <{root.tag}>, expected <mesh>.")

    shared_el = root.find("sharedgeometry")
    shared = _ogre_geometry(shared_el, path, tab) if shared_el is not None else None
    parts: list[tuple[np.ndarray, np.ndarray | None, np.ndarray | None]] = []
    all_faces: list[np.ndarray] = []
    offset = 0
    shared_offset: int | None = None
    for sub in root.iter("submesh"):
        operation = sub.get("operationtype", "triangle_list")
        if operation not in ("triangle_list", "triangle_strip", "triangle_fan"):
            continue
        own = sub.find("geometry")
        if own is not None and sub.get("usesharedvertices", "false") != "true":
            geometry = _ogre_geometry(own, path, tab)
            base = offset
            parts.append(geometry)
            offset += len(geometry[0])
        else:
            if shared is None:
                raise _fail(path, tab, f"line {sub.sourceline}: the submesh uses shared vertices but the "
                                       "mesh has no <sharedgeometry>; export it again.")
            geometry = shared
            if shared_offset is None:
                shared_offset = offset
                parts.append(shared)
                offset += len(shared[0])
            base = shared_offset
        faces = _ogre_faces(sub, operation, path, tab)
        if len(faces) and (faces.max() >= len(geometry[0]) or faces.min() < 0):
            raise _fail(path, tab, f"line {sub.sourceline}: a face refers to a vertex that does not exist; "
                                   "export the mesh again.")
        all_faces.append(faces + base)
    if not parts:
        return trimesh.Trimesh()
    vertices = np.concatenate([p[0] for p in parts]) @ _OGRE_TO_ENU
    faces = np.concatenate(all_faces) if all_faces else np.zeros((0, 3), np.int64)
    kwargs: dict = {}
    if all(p[1] is not None for p in parts):
        kwargs["vertex_normals"] = np.concatenate([p[1] for p in parts]) @ _OGRE_TO_ENU
    if all(p[2] is not None for p in parts):
        kwargs["vertex_colors"] = np.concatenate([p[2] for p in parts])
    return trimesh.Trimesh(vertices, faces, process=False, **kwargs)


def _ogre_numbers(elements: list, names: tuple[str, ...], path: Path, tab: str, what: str) -> np.ndarray:
    try:
        return np.array([[float(e.get(n)) for n in names] for e in elements], dtype=float).reshape(-1, len(names))
    except (TypeError, ValueError):
        bad = next(e for e in elements if not all(_is_number(e.get(n)) for n in names))
        raise _fail(path, tab, f"line {bad.sourceline}: a vertex {what} is not {len(names)} numbers.") from None


def _is_number(text: str | None) -> bool:
    try:
        float(text)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return False
    return True


def _ogre_geometry(geometry, path: Path, tab: str) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
    positions = normals = colours = None
    for vb in geometry.findall("vertexbuffer"):
        count = len(vb.findall("vertex"))
        if vb.get("positions") == "true":
            elements = vb.xpath("vertex/position")
            if len(elements) != count:
                raise _fail(path, tab, f"line {vb.sourceline}: a vertex has no <position>; export it again.")
            positions = _ogre_numbers(elements, ("x", "y", "z"), path, tab, "position")
        if vb.get("normals") == "true":
            elements = vb.xpath("vertex/normal")
            if len(elements) == count:
                normals = _ogre_numbers(elements, ("x", "y", "z"), path, tab, "normal")
        if vb.get("colours_diffuse") == "true":
            elements = vb.xpath("vertex/colour_diffuse")
            try:
                rgba = np.array([[float(x) for x in e.get("value", "").split()] for e in elements], dtype=float)
                if len(elements) == count and rgba.ndim == 2 and rgba.shape[1] in (3, 4):
                    if rgba.shape[1] == 3:
                        rgba = np.hstack([rgba, np.ones((len(rgba), 1))])
                    colours = np.clip(np.round(rgba * 255.0), 0, 255).astype(np.uint8)
            except ValueError:
                colours = None  # colours only tint the drawing; a model with odd ones still loads
    if positions is None:
        raise _fail(path, tab, f"line {geometry.sourceline}: the geometry has no vertex positions; export it again.")
    n = len(positions)
    normals = normals if normals is not None and len(normals) == n else None
    colours = colours if colours is not None and len(colours) == n else None
    return positions, normals, colours


def _ogre_faces(sub, operation: str, path: Path, tab: str) -> np.ndarray:
    indices: list[int] = []
    for i, face in enumerate(sub.xpath("faces/face")):
        names = ("v1", "v2", "v3") if operation == "triangle_list" or i == 0 else ("v1",)
        try:
            indices.extend(int(face.get(n)) for n in names)
        except (TypeError, ValueError):
            raise _fail(path, tab, f"line {face.sourceline}: a face is not {len(names)} vertex "
                                   "numbers; export the mesh again.") from None
    idx = np.asarray(indices, dtype=np.int64)
    if operation == "triangle_list":
        return idx.reshape(-1, 3)
    if len(idx) < 3:
        return np.zeros((0, 3), np.int64)
    k = np.arange(len(idx) - 2)
    if operation == "triangle_fan":
        return np.column_stack([np.full_like(k, idx[0]), idx[k + 1], idx[k + 2]])
    faces = np.column_stack([idx[k], idx[k + 1], idx[k + 2]])
    odd = k % 2 == 1  # every second strip triangle is wound the other way
    faces[odd] = faces[odd][:, [1, 0, 2]]
    return faces


# --- terrain -------------------------------------------------------------------------------------

@dataclass
class TerrainModel:
    """The terrain as loaded: a mesh in the world frame (x east, y north, z up, metres).

    `mesh` is centred so the middle of its x/y bounding box is the origin (z as in the model; for
    heightmaps 0..heightmap_height). `heightfield` holds a heightmap's heights in metres (rows north to
    south, columns west to east, as the image) or None for mesh files; `vertex_colors` (N, 4) uint8 per
    mesh vertex when the model had colours (vertex, face or texture colours), else None.
    """

    mesh: trimesh.Trimesh
    heightfield: np.ndarray | None = None
    vertex_colors: np.ndarray | None = None
    source: Path | None = None


def load_terrain(terrain: Terrain, *, tab: str = "Terrain Model") -> TerrainModel:
    """Read the project's terrain (a mesh file or a grey-scale heightmap image) centred on the origin.

    Mesh files are scaled by `terrain.scale` and shifted in x and y so their bounding-box centre is the
    world origin (z unchanged). Heightmap images (PNG, JPG, BMP, TIFF; 8 or 16 bit grey, colour images
    are converted to grey) have one vertex per pixel, centred on the origin, row 0 the north edge and
    column 0 the west edge; pixels are square and the longer image side spans `heightmap_size` metres
    (a square image covers that square). Heights are pixel / max × `heightmap_height` metres (black
    0, white the full height).
    """
    if terrain.file is None:
        raise ProjectError("no terrain file is chosen; choose one on the Terrain Model tab.", field=tab or None)
    path = Path(terrain.file)
    if model_suffix(path) in HEIGHTMAP_SUFFIXES:
        return _load_heightmap(path, terrain, tab)
    mesh = load_mesh(path, scale=terrain.scale, tab=tab)
    centre = (mesh.bounds[0] + mesh.bounds[1]) / 2.0
    mesh.apply_translation((-centre[0], -centre[1], 0.0))
    if len(mesh.faces) and float(mesh.area_faces @ mesh.face_normals[:, 2]) < 0:
        # A ground exported upside down: faces should look up at the sky to be drawn. (Setting the
        # faces drops the cached normals; trimesh 5.2's invert() keeps them stale.)
        mesh.faces = np.ascontiguousarray(mesh.faces[:, ::-1])
    return TerrainModel(mesh=mesh, vertex_colors=_vertex_colours(mesh), source=path)


def _vertex_colours(mesh: trimesh.Trimesh) -> np.ndarray | None:
    visual = mesh.visual
    try:
        if visual.kind == "texture":
            visual = visual.to_color()
        if visual.kind in ("vertex", "face"):
            colours = np.asarray(visual.vertex_colors, dtype=np.uint8)
            if colours.shape == (len(mesh.vertices), 4):
                return colours
    except Exception:  # a texture that cannot be sampled: draw the terrain in a plain colour
        return None
    return None


def _load_heightmap(path: Path, terrain: Terrain, tab: str) -> TerrainModel:
    from PIL import Image, UnidentifiedImageError

    if not path.exists():
        raise _fail(path, tab, "the heightmap image does not exist; choose it again on that tab.")
    if path.is_dir():
        raise _fail(path, tab, "this is a folder, not a heightmap image; choose an image on that tab.")
    size, top_height = float(terrain.heightmap_size), float(terrain.heightmap_height)
    if not (math.isfinite(size) and size > 0):
        raise _fail(path, tab, f"the heightmap size must be greater than 0 m, not {size}.")
    if not (math.isfinite(top_height) and top_height >= 0):
        raise _fail(path, tab, f"the heightmap height must be 0 m or more, not {top_height}.")
    try:
        with Image.open(path) as image:
            cols, rows = image.size
            if rows * cols > MAX_HEIGHTMAP_SAMPLES:
                raise _fail(path, tab, f"the heightmap is {cols} x {rows} pixels; SEAR takes at most "
                                       f"{MAX_HEIGHTMAP_SAMPLES:,} pixels (e.g. 2049 x 2049): scale the image "
                                       "down in an image editor.")
            image.load()
            if image.mode.startswith("I;16") or image.mode == "I":
                grey = np.asarray(image, dtype=np.float64)
                if image.mode == "I" and (grey.min() < 0 or grey.max() > 65535):
                    raise _fail(path, tab, "the heightmap holds 32-bit values; save it as 8 or 16 bit grey.")
                full = 65535.0
            elif image.mode == "F":
                raise _fail(path, tab, "the heightmap holds floating-point values; save it as 8 or 16 bit "
                                       "grey (black = lowest, white = highest).")
            else:
                grey = np.asarray(image.convert("L"), dtype=np.float64)
                full = 255.0
    except ProjectError:
        raise
    except (UnidentifiedImageError, OSError, ValueError, Image.DecompressionBombError) as exc:
        raise _fail(path, tab, f"the heightmap image cannot be read ({_short(exc)}); save it again as "
                               "PNG.") from None
    if rows < 2 or cols < 2:
        raise _fail(path, tab, "the heightmap image must be at least 2 x 2 pixels.")
    heights = grey / full * top_height
    # Pixel centres are the grid's vertices, north at the top; pixels stay square, so the longer image
    # side spans `size` metres (docs/project-format.md) and a non-square image covers a rectangle.
    step = size / (max(rows, cols) - 1)
    xs = (np.arange(cols) - (cols - 1) / 2.0) * step
    ys = ((rows - 1) / 2.0 - np.arange(rows)) * step
    gx, gy = np.meshgrid(xs, ys, indexing="xy")
    vertices = np.column_stack([gx.ravel(), gy.ravel(), heights.ravel()])
    idx = np.arange(rows * cols).reshape(rows, cols)
    sw, se = idx[1:, :-1].ravel(), idx[1:, 1:].ravel()
    ne, nw = idx[:-1, 1:].ravel(), idx[:-1, :-1].ravel()
    faces = np.concatenate([np.column_stack([sw, se, ne]), np.column_stack([sw, ne, nw])])  # facing up
    mesh = trimesh.Trimesh(vertices, faces, process=False)
    return TerrainModel(mesh=mesh, heightfield=heights, source=path)


# --- pybullet shapes -----------------------------------------------------------------------------

def split_into_tiles(mesh: trimesh.Trimesh, max_vertices: int = MAX_MESH_VERTICES,
                     max_faces: int = MAX_MESH_FACES) -> list[trimesh.Trimesh]:
    """Split a mesh into pieces of at most `max_vertices` vertices and `max_faces` triangles.

    Faces go to the cell of an x/y grid holding their centroid (the grid sized so an even spread of
    faces fits); a cell still over a limit is halved at the median centroid along its longer side,
    and, should centroids coincide (a vertical wall of faces), by face order, so splitting always ends.
    Border vertices are copied into every tile that uses them, so the tiles join without gaps.
    """
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


def create_mesh_body(client: int, mesh: trimesh.Trimesh, *, mass: float,
                     position: tuple[float, float, float] = (0.0, 0.0, 0.0),
                     orientation: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 1.0),
                     convex: bool = True) -> int:
    """A pybullet body (mass kg, position m, orientation quaternion x y z w) shaped like `mesh`.

    Moving bodies (mass > 0) always collide with the convex hull; a static body (mass 0) with
    `convex=False` keeps the exact concave triangles (pybullet allows those for static bodies only).
    The visual mesh is not given to pybullet: the window draws trimesh meshes itself.
    """
    import pybullet as p

    if convex or mass > 0:
        shape = convex_collision_shape(client, mesh)
    else:
        if len(mesh.vertices) > MAX_MESH_VERTICES or len(mesh.faces) > MAX_MESH_FACES:
            raise ProjectError(f"a static concave model may have at most {MAX_MESH_VERTICES:,} vertices and "
                               f"{MAX_MESH_FACES:,} triangles (this one has {len(mesh.vertices):,} and "
                               f"{len(mesh.faces):,}); simplify it or load it as terrain.")
        shape = _concave_shape(client, mesh)
        if shape < 0:
            raise ProjectError("pybullet could not build a collision mesh from this model; export it again.")
    return p.createMultiBody(baseMass=mass, baseCollisionShapeIndex=shape, basePosition=position,
                             baseOrientation=orientation, physicsClientId=client)
