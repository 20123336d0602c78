"""Reading model files: mesh files and heightmap images into trimesh meshes, in SEAR's frame and units.

Pure (no pybullet, no Qt) and self-contained (it knows files, not projects), so the settings window's
previews, `sear validate` and a run read models with the same code. Every failure a user can cause
becomes a ProjectError naming the file and the settings tab it came from, with a sentence saying what
to do. trimesh (and through it scipy and networkx, most of SEAR's start-up time) is imported only when a
model is actually read or made, not when this module is. sear.physics.meshes turns what is read here
into pybullet shapes.
"""

from __future__ import annotations

import logging
import math
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from stat import S_ISREG
from typing import TYPE_CHECKING, Any, Protocol, cast

import numpy as np
from lxml import etree

from sear.errors import ProjectError
from sear.models.heightgrid import MESH_UP_TO_SAMPLES, HeightGrid

if TYPE_CHECKING:
    import trimesh

MESH_SUFFIXES: tuple[str, ...] = (
    ".obj", ".stl", ".ply", ".glb", ".gltf", ".off", ".dae", ".mesh.xml",
)
"""Model file types SEAR reads (trimesh's formats plus Ogre XML meshes), as file_suffix names them."""

HEIGHTMAP_SUFFIXES: tuple[str, ...] = (".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff")
"""Grey-scale image types accepted as terrain heightmaps (a .tif/.tiff with GeoTIFF tags is read as an
elevation model: sear.models.dem)."""


def file_suffix(path: Path) -> str:
    """The type of a file by its name as SEAR's lists of types name it: its suffix in lower case, and
    '.mesh.xml' as one suffix (Ogre meshes)."""
    name = path.name.lower()
    return ".mesh.xml" if name.endswith(".mesh.xml") else path.suffix.lower()


MAX_HEIGHTMAP_SAMPLES = 8193 * 8193
"""Largest heightmap image or elevation model, samples (e.g. 8193 x 8193): 268 MB as the float32 grid a run
keeps. Grids of more than sear.models.heightgrid.MESH_UP_TO_SAMPLES samples are not made into one mesh:
the physics pages them in tiles around the robots (sear.physics.terrainpager), so memory and load time
follow the area in use (docs/terrain.md; one 2049² mesh took 4.65 GB and 65 s in pybullet)."""

MAX_CONVEX_VERTICES = 131_072
"""Corners a moving body's collision shape may have: pybullet builds a body model's convex hull as one
GEOM_MESH of its vertices, and refuses more than 131,072 ('createCollisionShape failed', measured: 131,072
points on a sphere build in 0.8 s of CPU and 190 MB, 131,073 fail)."""


def convex_hull_problem(mesh: trimesh.Trimesh) -> str | None:
    """Why pybullet cannot build `mesh`'s collision shape as a moving body (its convex hull, as
    sear.physics.meshes.convex_collision_shape builds it, has more than MAX_CONVEX_VERTICES corners), as a
    sentence; None when it can. The hull is computed only for a mesh of more vertices than that (a few
    seconds for a million triangles); trimesh keeps it with the mesh, so the run that follows reuses it."""
    if len(mesh.vertices) <= MAX_CONVEX_VERTICES:
        return None
    try:
        with np.errstate(all="ignore"):
            corners = len(mesh.convex_hull.vertices)
    except Exception:  # qhull refuses flat or degenerate point sets; the run then uses the points themselves
        corners = len(np.unique(np.asarray(mesh.vertices), axis=0))
    if corners <= MAX_CONVEX_VERTICES:
        return None
    return (f"the model has {len(mesh.faces):,} triangles and its convex hull, the body's collision shape, has "
            f"{corners:,} corners; pybullet builds one of at most {MAX_CONVEX_VERTICES:,}. Simplify the model "
            "(decimate it in a mesh editor) and choose it again.")


MAX_COORDINATE = 1e9
"""Largest distance of a vertex from the model's origin, in the file's units. A model of metres in UTM
coordinates is well within it; past ~1e10 trimesh's vertex merging (coordinates × 1e8 as 64-bit integers)
overflows, and such a number in a model file is damage (a flipped exponent bit), not a size."""

# trimesh's loaders log a traceback (at WARNING) for damage they work around, e.g. an ASCII STL they
# retry after the binary reader failed; with no logging set up Python prints that on stderr. SEAR reports
# a damaged file itself, as a sentence, so trimesh's log goes nowhere unless an application sets one up.
logging.getLogger("trimesh").addHandler(logging.NullHandler())

_CACHE_SIZE = 16
_cache: OrderedDict[tuple, trimesh.Trimesh] = OrderedDict()

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
    suffix = file_suffix(path)
    if suffix not in MESH_SUFFIXES:
        hint = (" Binary Ogre .mesh files must be converted to XML first: OgreXMLConverter NAME.mesh"
                if suffix == ".mesh" else "")
        raise _fail(path, tab, f"'{suffix or path.name}' is not a model format SEAR reads; use one of "
                               f"{', '.join(MESH_SUFFIXES)}.{hint}")
    try:
        stat = path.stat()
        if not S_ISREG(stat.st_mode):  # opening a FIFO would wait for a writer
            raise _fail(path, tab, "this is not a regular file (a named pipe, device or socket); choose a model "
                                   "file on that tab.")
        with open(path, "rb"):
            pass
    except OSError as exc:
        raise _fail(path, tab, f"the model file cannot be read ({exc.strerror}); check its permissions.") from None
    if stat.st_size == 0:
        raise _fail(path, tab, "the model file is empty (0 bytes); export the model again.")
    key = (str(path.resolve()), stat.st_mtime_ns, stat.st_size, scale)
    cached = _cache.get(key)
    if cached is not None:
        _cache.move_to_end(key)
        return cached.copy()
    if suffix == ".stl":
        _check_binary_stl(path, stat.st_size, tab)
    mesh = _read_ogre(path, tab) if suffix == ".mesh.xml" else _read_trimesh(path, tab)
    mesh = _repair(mesh, path, tab)
    if scale != 1.0:
        mesh.apply_scale(scale)
    _remember(key, mesh)
    return mesh.copy()


def _remember(key: tuple, mesh: trimesh.Trimesh) -> None:
    _cache[key] = mesh
    while len(_cache) > _CACHE_SIZE:
        _cache.popitem(last=False)


def _check_binary_stl(path: Path, size: int, tab: str) -> None:
    """A binary STL's header gives its triangle count, so a cut-off file is known by its size (trimesh
    would read it as an empty mesh). ASCII STL files begin with 'solid' and are left to trimesh."""
    with open(path, "rb") as file:
        head = file.read(84)
    count = int.from_bytes(head[80:84], "little") if len(head) == 84 else 0
    if (len(head) == 84 and size >= 84 + 50 * count) or head.lstrip()[:5].lower() == b"solid":
        return
    if len(head) < 84:
        raise _fail(path, tab, f"the binary STL is cut off: {size} bytes is shorter than its 84-byte header; "
                               "export the model again.")
    raise _fail(path, tab, f"the binary STL is cut off: its header promises {count:,} triangles "
                           f"({84 + 50 * count:,} bytes) but the file has {size:,} bytes; export the model again.")


def _read_trimesh(path: Path, tab: str) -> trimesh.Trimesh:
    import trimesh

    try:
        loaded = trimesh.load(str(path), force="mesh", process=False)
    except Exception as exc:  # trimesh and its loaders raise many types for damaged files
        raise _fail(path, tab, f"the file could not be read as {file_suffix(path)} ({_short(exc)}); it may be "
                               "damaged or in another format: export it again.") from None
    if isinstance(loaded, trimesh.Scene):  # force='mesh' leaves an empty Scene when there is no geometry
        meshes = [g for g in loaded.dump() if isinstance(g, trimesh.Trimesh)] if loaded.geometry else []
        loaded = trimesh.util.concatenate(meshes) if meshes else trimesh.Trimesh()
    if not isinstance(loaded, trimesh.Trimesh):
        raise _fail(path, tab, "the file holds no triangle mesh (only points or lines); export a mesh.")
    return loaded


def _repair(mesh: trimesh.Trimesh, path: Path, tab: str) -> trimesh.Trimesh:
    import trimesh

    if len(mesh.faces) == 0 or len(mesh.vertices) == 0:
        raise _fail(path, tab, "the model has no triangles (it is empty); export it again with its geometry.")
    vertices, faces = np.asarray(mesh.vertices), np.asarray(mesh.faces)
    if vertices.ndim != 2 or vertices.shape[1] != 3 or faces.ndim != 2 or faces.shape[1] != 3:
        what = "vertices" if vertices.ndim != 2 or vertices.shape[1] != 3 else "triangles"
        raise _fail(path, tab, f"the model's {what} do not have 3 numbers each; the file is damaged: export "
                               "it again.")
    if faces.min() < 0 or faces.max() >= len(mesh.vertices):
        bad = int(faces.max()) if faces.max() >= len(mesh.vertices) else int(faces.min())
        raise _fail(path, tab, f"a triangle refers to vertex {bad} (counting from 0) but the model has only "
                               f"{len(mesh.vertices)} vertices; the file is damaged: export it again.")
    if not np.all(np.isfinite(mesh.vertices)):
        raise _fail(path, tab, "the model has vertices that are not finite numbers (NaN or infinity); "
                               "export it again.")
    largest = float(np.max(np.abs(mesh.vertices)))
    if largest > MAX_COORDINATE:
        raise _fail(path, tab, f"the model has a vertex {largest:.3g} units from its origin (at most "
                               f"{MAX_COORDINATE:.0e} are usable); the file is damaged: export it again.")
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
    import trimesh

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
            if not np.all(np.isfinite(positions)):
                bad = elements[int(np.flatnonzero(~np.isfinite(positions).all(axis=1))[0])]
                raise _fail(path, tab, f"line {bad.sourceline}: a vertex position is not a finite number (NaN "
                                       "or infinity); export the mesh again.")
        if vb.get("normals") == "true":
            elements = vb.xpath("vertex/normal")
            if len(elements) == count:
                normals = _ogre_numbers(elements, ("x", "y", "z"), path, tab, "normal")
                if not np.all(np.isfinite(normals)):
                    normals = None  # normals only shade the drawing; trimesh computes them again
        if vb.get("colours_diffuse") == "true":
            elements = vb.xpath("vertex/colour_diffuse")
            try:
                rgba = np.array([[float(x) for x in e.get("value", "").split()] for e in elements], dtype=float)
                if (len(elements) == count and rgba.ndim == 2 and rgba.shape[1] in (3, 4)
                        and np.all(np.isfinite(rgba))):
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

class TerrainFields(Protocol):
    """What load_terrain reads of a project's terrain (sear.project.Terrain has these fields)."""

    file: Path | None
    scale: float
    heightmap_size: float
    heightmap_height: float


@dataclass
class TerrainModel:
    """The terrain as loaded: a mesh in the world frame (x east, y north, z up, metres).

    `mesh` is centred so the middle of its x/y bounding box is the origin (z as in the model; for
    heightmaps 0..heightmap_height, for elevation models the file's heights in metres); None for a height
    grid too large to be one mesh (more than MESH_UP_TO_SAMPLES samples), which only `grid` holds.
    `heightfield` holds a heightmap's heights in metres (rows north to south, columns west to east, as the
    image) or None for mesh files and large grids; `grid` the same heights as a HeightGrid (heightmaps and
    elevation models; None for mesh files); `vertex_colors` (N, 4) uint8 per mesh vertex when the model
    had colours (vertex, face or texture colours), else None. `geo_origin` is the latitude, longitude
    (degrees) and height (m) of the grid's centre when an elevation model says where it lies, `info` a
    sentence about the file (size, resolution, memory) for the Terrain tab.
    """

    mesh: trimesh.Trimesh | None
    heightfield: np.ndarray | None = None
    vertex_colors: np.ndarray | None = None
    source: Path | None = None
    grid: HeightGrid | None = None
    geo_origin: tuple[float, float, float] | None = None
    info: str = ""

    def preview_mesh(self, max_cells: int = 256 * 256) -> trimesh.Trimesh:
        """The terrain as one mesh for a preview: `mesh`, or a large grid's surface with every k-th sample
        (k the smallest that leaves at most `max_cells` cells), for drawing only."""
        if self.mesh is not None:
            return self.mesh
        import trimesh

        grid = self.grid
        assert grid is not None
        k = max(1, math.ceil(math.sqrt((grid.rows - 1) * (grid.cols - 1) / max_cells)))
        vertices, faces = grid.patch(0, (grid.rows - 1) // k * k, 0, (grid.cols - 1) // k * k, k)
        return trimesh.Trimesh(vertices, faces.astype(np.int64), process=False)

    @property
    def bounds(self) -> np.ndarray:
        """(2, 3) lowest and highest corner of the terrain's bounding box, m."""
        if self.mesh is not None:
            return np.asarray(self.mesh.bounds)
        assert self.grid is not None
        return self.grid.bounds


def load_terrain(terrain: TerrainFields, *, tab: str = "Terrain Model") -> TerrainModel:
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
    if file_suffix(path) in (".tif", ".tiff") and path.is_file():
        from sear.models.dem import is_geotiff

        if is_geotiff(path):
            return _load_dem(path, tab)
    if file_suffix(path) in HEIGHTMAP_SUFFIXES:
        return _load_heightmap(path, terrain, tab)
    try:
        stat = path.stat()
        key: tuple | None = (str(path.resolve()), stat.st_mtime_ns, stat.st_size, float(terrain.scale), "terrain")
    except (OSError, ValueError):
        key = None  # load_mesh says what is wrong with the file
    cached = _cache.get(key) if key is not None else None
    if key is not None and cached is not None:  # read before (validated, then run): centred and turned already
        _cache.move_to_end(key)
        mesh = cached.copy()
    else:
        mesh = load_mesh(path, scale=terrain.scale, tab=tab)
        centre = (mesh.bounds[0] + mesh.bounds[1]) / 2.0
        mesh.apply_translation((-centre[0], -centre[1], 0.0))
        if len(mesh.faces) and float(mesh.area_faces @ mesh.face_normals[:, 2]) < 0:
            # A ground exported upside down: faces should look up at the sky to be drawn. (Setting the
            # faces drops the cached normals; trimesh 5.2's invert() keeps them stale.)
            mesh.faces = np.ascontiguousarray(mesh.faces[:, ::-1])
        if key is not None:  # keep the centred terrain only (a big terrain is big)
            _cache.pop(key[:4], None)
            _remember(key, mesh.copy())
    return TerrainModel(mesh=mesh, vertex_colors=_vertex_colours(mesh), source=path)


def _vertex_colours(mesh: trimesh.Trimesh) -> np.ndarray | None:
    visual: Any = mesh.visual  # trimesh's ColorVisuals or TextureVisuals
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


def _load_heightmap(path: Path, terrain: TerrainFields, tab: str) -> TerrainModel:
    import trimesh
    from PIL import Image

    if not path.exists():
        raise _fail(path, tab, "the heightmap image does not exist; choose it again on that tab.")
    if path.is_dir():
        raise _fail(path, tab, "this is a folder, not a heightmap image; choose an image on that tab.")
    if not S_ISREG(path.stat().st_mode):  # opening a FIFO would wait for a writer
        raise _fail(path, tab, "this is not a regular file (a named pipe, device or socket); choose an image on "
                               "that tab.")
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
                                       f"{MAX_HEIGHTMAP_SAMPLES:,} pixels (e.g. 8193 x 8193): scale the image "
                                       "down in an image editor.")
            image.load()
            large = rows * cols > MESH_UP_TO_SAMPLES
            kind: Any = np.float32 if large else np.float64  # a large grid is kept as float32 (its memory)
            if image.mode.startswith("I;16") or image.mode == "I":
                grey = np.asarray(image, dtype=kind)
                if image.mode == "I" and (grey.min() < 0 or grey.max() > 65535):
                    raise _fail(path, tab, "the heightmap holds 32-bit values; save it as 8 or 16 bit grey.")
                full = 65535.0
            elif image.mode == "F":
                raise _fail(path, tab, "the heightmap holds floating-point values; save it as 8 or 16 bit "
                                       "grey (black = lowest, white = highest).")
            else:
                grey = np.asarray(image.convert("L"), dtype=kind)
                full = 255.0
    except ProjectError:
        raise
    except Exception as exc:  # PIL's decoders raise many types for damaged files (SyntaxError for a PNG chunk)
        raise _fail(path, tab, f"the heightmap image cannot be read ({_short(exc)}); save it again as "
                               "PNG.") from None
    if rows < 2 or cols < 2:
        raise _fail(path, tab, "the heightmap image must be at least 2 x 2 pixels.")
    # Pixel centres are the grid's vertices, north at the top; pixels stay square, so the longer image
    # side spans `size` metres (docs/project-format.md) and a non-square image covers a rectangle.
    step = size / (max(rows, cols) - 1)
    if large:
        grey *= np.float32(top_height / full)
        grid = HeightGrid.centred(grey, step, step)
        return TerrainModel(mesh=None, source=path, grid=grid, info=_grid_info(
            f"Heightmap image, {cols} x {rows} pixels", grid))
    heights = grey / full * top_height
    xs = (np.arange(cols) - (cols - 1) / 2.0) * step
    ys = ((rows - 1) / 2.0 - np.arange(rows)) * step
    gx, gy = np.meshgrid(xs, ys, indexing="xy")
    vertices = np.column_stack([gx.ravel(), gy.ravel(), heights.ravel()])
    idx = np.arange(rows * cols).reshape(rows, cols)
    sw, se = idx[1:, :-1].ravel(), idx[1:, 1:].ravel()
    ne, nw = idx[:-1, 1:].ravel(), idx[:-1, :-1].ravel()
    faces = np.concatenate([np.column_stack([sw, se, ne]), np.column_stack([sw, ne, nw])])  # facing up
    mesh = trimesh.Trimesh(vertices, faces, process=False)
    grid = HeightGrid.centred(heights, step, step)
    return TerrainModel(mesh=mesh, heightfield=heights, source=path, grid=grid,
                        info=_grid_info(f"Heightmap image, {cols} x {rows} pixels", grid))


def _grid_info(what: str, grid: HeightGrid) -> str:
    """A sentence on a height grid for the Terrain tab: size, resolution and the memory a run needs."""
    from sear.models.dem import memory_estimate

    width, height = (grid.cols - 1) * grid.dx, (grid.rows - 1) * grid.dy
    return (f"{what}; pixels {grid.dx:.3g} x {grid.dy:.3g} m, {width:,.0f} x {height:,.0f} m. A run needs about "
            f"{memory_estimate(grid.rows, grid.cols, max(grid.dx, grid.dy)) / 1e6:,.0f} MB for it.")


def _load_dem(path: Path, tab: str) -> TerrainModel:
    """An elevation model (GeoTIFF, sear.models.dem) as a terrain: its heights in metres on its own pixel
    size, centred on the origin; one mesh when small, else the grid alone (paged by the physics)."""
    from sear.models.dem import read_dem

    info, heights = read_dem(path, tab, max_samples=MAX_HEIGHTMAP_SAMPLES)
    grid = HeightGrid.centred(heights, info.dx, info.dy)
    origin = None
    if info.origin is not None:
        origin = (info.origin[0], info.origin[1], float(grid.heights_at(np.zeros((1, 2)))[0]))
    mesh = None
    if info.rows * info.cols <= MESH_UP_TO_SAMPLES:
        import trimesh

        vertices, faces = grid.patch(0, grid.rows - 1, 0, grid.cols - 1)
        mesh = trimesh.Trimesh(vertices, faces.astype(np.int64), process=False)
    return TerrainModel(mesh=mesh, source=path, grid=grid, geo_origin=origin, info=info.summary())


# --- shapes SEAR makes itself ----------------------------------------------------------------------

def make_tree() -> trimesh.Trimesh:
    """A tree about 4.5 m high standing on the origin: a trunk and a conical crown (the obstacle
    `sim.add_tree` adds, and the demo's tree model)."""
    import trimesh

    trunk = trimesh.creation.cylinder(radius=0.15, height=2.0, sections=16)
    trunk.apply_translation((0, 0, 1.0))
    crown = trimesh.creation.cone(radius=1.2, height=3.0, sections=24)
    crown.apply_translation((0, 0, 1.5))
    return cast("trimesh.Trimesh", trimesh.util.concatenate([trunk, crown]))
