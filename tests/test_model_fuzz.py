"""Fuzzing the model readers: a corrupt model file is a clear error naming the file and the tab, never a
traceback, and what does load is a mesh the physics can use.

Each format starts from a small valid file made here (trimesh's export of a box, an Ogre XML mesh written
by hand, a PNG heightmap made with PIL) and is damaged in VARIANTS ways drawn from a seeded RNG:
zero length, truncation at a random length, random byte flips, byte insertions and deletions, and in text
formats numbers swapped for one another or replaced by hostile ones (NaN, 1e400, -1, huge indices).
Each variant goes through sear.models.meshfiles's load functions (as `sear validate` and `sear run` read models);
a sample goes through `sear validate` and `sear run --headless` themselves, and everything that loads is
built into pybullet shapes the way a run builds them.

`make test-slow` (marker `slow`) runs every variant and the larger command-line sample. The default tier
(`make test`) runs COVERING, the fixed subset of each format's variants that reaches every branch of
SEAR's code that all of them reach (branch coverage of the `sear` package, computed by
`python -m tests.covering model`; rerun it when the model readers change), and SAMPLE variants of each
format through the command line.
"""

from __future__ import annotations

import io
import random
import re
import subprocess
import sys
import traceback
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import trimesh
from PIL import Image

from sear.errors import SearError
from sear.models.meshfiles import load_mesh, load_terrain
from sear.project import Terrain

VARIANTS = 200
"""Corrupt variants per format (the issue asks for at least 200)."""
SEED = 20261123
COVERING: dict[str, list[int]] = {
    "stl-binary": [0, 1, 2, 3, 13, 19, 41, 107],
    "stl-ascii": [0, 1, 2, 6, 7, 11, 31, 43, 99],
    "obj": [0, 1, 5, 6, 8, 26, 59, 100, 174],
    "ply-ascii": [0, 1, 2, 4, 6, 12, 15, 17, 95],
    "ply-binary": [0, 1, 2, 11, 27, 79],
    "glb": [0, 1, 2, 6, 10, 47, 182],
    "off": [0, 1, 6, 11, 55, 59, 100, 135],
    "dae": [0, 1, 2, 7, 20, 92, 197],
    "ogre-xml": [0, 4, 6, 7, 9, 12, 35, 60, 68, 70, 76, 105, 133, 164, 169],
    "heightmap-png": [0, 3, 7, 868],
}
"""By format: the variants the default tier checks. `python -m tests.covering model` chose them; the
zero-length file (0) is added to each, and PNG variant 868 (PIL's SyntaxError, which takes the same
branch of SEAR's code as its OSError and so is not told apart by branch coverage)."""
MORE_VARIANTS = {"heightmap-png": 1000}
"""Formats whose rarer failures need more variants, and cost little: the first PNG of this seed that
made PIL raise SyntaxError (not an OSError) is variant 868."""
TERRAIN_TAB, BODY_TAB = "Terrain Model", "Robot Body Model"
_TARGETS = [("<file>body.stl</file>", BODY_TAB), ("<file>wheel_lf.obj</file>", "Wheel Models"),
            ("<file>terrain.obj</file>", TERRAIN_TAB)]
"""Where the demo project names a model, and the tab a message about it must name."""


# --- the valid files each format starts from ----------------------------------------------------------

def _box() -> trimesh.Trimesh:
    return trimesh.creation.box(extents=(0.4, 0.3, 0.2))


def _ogre_xml() -> bytes:
    """A unit tetrahedron as Ogre XML (y up), with normals, colours and a triangle-list submesh."""
    verts = [(0, 0, 0), (1, 0, 0), (0, 1, 0), (0, 0, -1)]
    vertex = "".join(f'<vertex><position x="{x}" y="{y}" z="{z}"/><normal x="0" y="1" z="0"/>'
                     f'<colour_diffuse value="0.5 0.5 0.5 1"/></vertex>' for x, y, z in verts)
    faces = "".join(f'<face v1="{a}" v2="{b}" v3="{c}"/>' for a, b, c in [(0, 2, 1), (0, 1, 3), (0, 3, 2), (1, 2, 3)])
    return (f'<?xml version="1.0"?>\n<mesh><submeshes><submesh material="m" usesharedvertices="false" '
            f'operationtype="triangle_list"><faces count="4">{faces}</faces><geometry vertexcount="4">'
            f'<vertexbuffer positions="true" normals="true" colours_diffuse="true">{vertex}</vertexbuffer>'
            f'</geometry></submesh></submeshes></mesh>\n').encode()


def _png() -> bytes:
    heights = (np.add.outer(np.arange(12), np.arange(10)) * 9).astype(np.uint8)
    out = io.BytesIO()
    Image.fromarray(heights, mode="L").save(out, format="PNG")
    return out.getvalue()


FORMATS: dict[str, tuple[str, Callable[[], bytes], bool]] = {
    # name: (suffix, the valid file's bytes, text format)
    "stl-binary": (".stl", lambda: _box().export(file_type="stl"), False),
    "stl-ascii": (".stl", lambda: _box().export(file_type="stl_ascii").encode(), True),
    "obj": (".obj", lambda: _box().export(file_type="obj").encode(), True),
    "ply-ascii": (".ply", lambda: _box().export(file_type="ply", encoding="ascii"), True),
    "ply-binary": (".ply", lambda: _box().export(file_type="ply", encoding="binary"), False),
    "glb": (".glb", lambda: _box().export(file_type="glb"), False),
    "off": (".off", lambda: _box().export(file_type="off").encode(), True),
    "dae": (".dae", lambda: _box().export(file_type="dae"), True),
    "ogre-xml": (".mesh.xml", _ogre_xml, True),
    "heightmap-png": (".png", _png, False),
}

_NUMBER = re.compile(rb"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
_HOSTILE = [b"nan", b"inf", b"-inf", b"1e400", b"-1", b"0", b"99999", b"2147483648", b"-99999999999", b"x", b""]


def corrupt(data: bytes, rng: random.Random, text: bool) -> tuple[str, bytes]:
    """One damaged copy of `data` and what was done to it (for the failure message)."""
    kinds = ["truncate", "flip", "insert", "delete"] + (["swap", "hostile", "hostile"] if text else ["flip"])
    kind = rng.choice(kinds)
    buf = bytearray(data)
    if kind == "truncate":
        n = rng.randrange(len(data))
        return f"truncate to {n}", bytes(buf[:n])
    if kind in ("flip", "insert", "delete"):
        count = rng.choice([1, 1, 2, 4, 16])
        for _ in range(count):
            at = rng.randrange(len(buf) or 1)
            if kind == "flip" and buf:
                buf[at] ^= 1 << rng.randrange(8) if rng.random() < 0.5 else rng.randrange(1, 256)
            elif kind == "insert":
                buf[at:at] = bytes([rng.randrange(256)])
            elif buf:
                del buf[at]
        return f"{kind} {count}", bytes(buf)
    numbers = list(_NUMBER.finditer(data))
    if not numbers:
        return "no numbers", data
    if kind == "swap":
        if len(numbers) < 2:
            return "one number", data
        a, b = sorted(rng.sample(numbers, 2), key=lambda m: m.start())
        out = (data[:a.start()] + b.group() + data[a.end():b.start()] + a.group() + data[b.end():])
        return f"swap {a.group()!r}@{a.start()} with {b.group()!r}@{b.start()}", out
    m = rng.choice(numbers)
    token = rng.choice(_HOSTILE)
    return f"number {m.group()!r}@{m.start()} -> {token!r}", data[:m.start()] + token + data[m.end():]


def variants(name: str) -> list[tuple[str, bytes]]:
    """VARIANTS (or MORE_VARIANTS) damaged copies of the format's valid file, the first one empty; the same
    on every run."""
    _, make, text = FORMATS[name]
    data = make()
    rng = random.Random(f"{SEED}-{name}")
    out = [("zero length", b"")]
    while len(out) < MORE_VARIANTS.get(name, VARIANTS):
        out.append(corrupt(data, rng, text))
    return out


# --- what counts as a correct outcome ---------------------------------------------------------------

def check_mesh(mesh: trimesh.Trimesh) -> None:
    """A mesh a run can use: finite vertices, at least one face, every face indexing an existing vertex."""
    vertices, faces = np.asarray(mesh.vertices), np.asarray(mesh.faces)
    assert len(faces) >= 1 and faces.ndim == 2 and faces.shape[1] == 3
    assert np.all(np.isfinite(vertices)) and vertices.ndim == 2 and vertices.shape[1] == 3
    assert faces.min() >= 0 and faces.max() < len(vertices)


def read(path: Path, name: str) -> trimesh.Trimesh:
    """Read `path` as validate/run do: the terrain path for heightmaps, a body model for meshes."""
    if name == "heightmap-png":
        model = load_terrain(Terrain(file=path), tab=TERRAIN_TAB)
        assert model.heightfield is None or np.all(np.isfinite(model.heightfield))
        return model.mesh
    return load_mesh(path, tab=BODY_TAB)


def outcome(path: Path, name: str) -> trimesh.Trimesh | None:
    """The mesh, or None for a correct refusal; raises AssertionError for anything else."""
    tab = TERRAIN_TAB if name == "heightmap-png" else BODY_TAB
    try:
        mesh = read(path, name)
    except SearError as exc:
        assert exc.file == path and str(path) in str(exc), f"the error does not name the file: {exc}"
        assert exc.field == tab, f"the error does not name the tab: {exc}"
        return None
    check_mesh(mesh)
    return mesh


@pytest.mark.parametrize("name", list(FORMATS))
def test_the_valid_starting_files_load(tmp_path, name):
    # The positive control: undamaged, each file loads (so the refusals below are about the damage).
    suffix, make, _ = FORMATS[name]
    path = tmp_path / f"whole{suffix}"
    path.write_bytes(make())
    mesh = outcome(path, name)
    assert mesh is not None
    # A 12 x 10 pixel heightmap has 11 x 9 squares of 2 triangles; a box 12 triangles, a tetrahedron 4.
    assert len(mesh.faces) == {"heightmap-png": 11 * 9 * 2, "ogre-xml": 4}.get(name, 12)


@pytest.mark.slow
@pytest.mark.parametrize("name", list(FORMATS))
def test_corrupt_files_load_or_are_refused_naming_file_and_tab(tmp_path, name):
    suffix = FORMATS[name][0]
    failures = []
    loaded = refused = 0
    for i, (what, data) in enumerate(variants(name)):
        path = tmp_path / f"v{i}{suffix}"
        path.write_bytes(data)
        try:
            mesh = outcome(path, name)
        except Exception as exc:  # any other outcome is the failure being hunted
            failures.append(f"{name} seed {SEED} variant {i} ({what}): {type(exc).__name__}: {exc}\n"
                            + "".join(traceback.format_exception(exc)[-3:]))
            continue
        loaded += mesh is not None
        refused += mesh is None
    assert not failures, f"{len(failures)} variants failed:\n" + "\n".join(failures[:5])
    assert refused >= 1  # the fuzzer did damage some files (and the zero-length one is always refused)


# --- what loads is safe for the physics -------------------------------------------------------------

@pytest.fixture
def bullet():
    """A pybullet client of its own (no window), disconnected after the test."""
    import pybullet as p

    client = p.connect(p.DIRECT)
    yield client
    p.disconnect(client)


def build_shapes(client: int, path: Path, mesh: trimesh.Trimesh, name: str) -> None:
    """Build the pybullet shapes a run builds from a loaded model: a terrain's static meshes for
    heightmaps, a body's convex shape otherwise. A refusal must be a SearError naming the file."""
    from sear.models.meshfiles import TerrainModel
    from sear.physics.meshes import convex_collision_shape, create_terrain_bodies

    if name == "heightmap-png":
        assert len(create_terrain_bodies(client, TerrainModel(mesh=mesh, source=path))) >= 1
    else:
        assert convex_collision_shape(client, mesh) >= 0


@pytest.mark.slow
@pytest.mark.parametrize("name", list(FORMATS))
def test_what_loads_from_corrupt_files_builds_into_physics_shapes(tmp_path, bullet, name):
    suffix = FORMATS[name][0]
    for i, (what, data) in enumerate(variants(name)):
        path = tmp_path / f"v{i}{suffix}"
        path.write_bytes(data)
        mesh = outcome(path, name)
        if mesh is None:
            continue
        try:
            build_shapes(bullet, path, mesh, name)
        except Exception as exc:  # reported with the variant that caused it
            pytest.fail(f"{name} seed {SEED} variant {i} ({what}): {type(exc).__name__}: {exc}")
    # Not every format keeps any damaged file loadable (a flipped bit in a GLB's JSON header breaks it);
    # the undamaged file is built in the positive control below.
    whole = tmp_path / f"whole{suffix}"
    whole.write_bytes(FORMATS[name][1]())
    mesh = outcome(whole, name)
    assert mesh is not None
    build_shapes(bullet, whole, mesh, name)


def check_variant(folder: Path, name: str, i: int, variant: tuple[str, bytes], client: int) -> bool:
    """Check one variant as both tests above do: it loads (and builds into shapes) or is refused naming
    its file and tab. Whether it loaded."""
    what, data = variant
    path = folder / f"v{i}{FORMATS[name][0]}"
    path.write_bytes(data)
    try:
        mesh = outcome(path, name)
        if mesh is not None:
            build_shapes(client, path, mesh, name)
    except Exception as exc:  # reported with the variant that caused it
        pytest.fail(f"{name} seed {SEED} variant {i} ({what}): {type(exc).__name__}: {exc}\n"
                    + "".join(traceback.format_exception(exc)[-3:]))
    return mesh is not None


@pytest.mark.parametrize("name", list(FORMATS))
def test_the_covering_variants_load_and_build_or_are_refused_naming_file_and_tab(tmp_path, bullet, name):
    made = variants(name)
    loaded = [check_variant(tmp_path, name, i, made[i], bullet) for i in COVERING[name]]
    assert False in loaded  # the zero-length file at least is refused


DEGENERATE = {
    # name: (vertices, faces) of meshes that are valid files but barely shapes
    "one triangle": ([[0, 0, 0], [1, 0, 0], [0, 1, 0]], [[0, 1, 2]]),
    "flat square": ([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0]], [[0, 1, 2], [0, 2, 3]]),
    "upright square": ([[0, 0, 0], [1, 0, 0], [1, 0, 1], [0, 0, 1]], [[0, 1, 2], [0, 2, 3]]),
    "sliver": ([[0, 0, 0], [1, 0, 0], [0.5, 1e-6, 0]], [[0, 1, 2]]),
    "collinear": ([[0, 0, 0], [1, 1, 1], [2, 2, 2], [3, 3, 3]], [[0, 1, 2], [1, 2, 3]]),
    "one point": ([[1, 2, 3]] * 3, [[0, 1, 2]]),
}


def _write_ply(path: Path, vertices: list, faces: list) -> None:
    path.write_text("ply\nformat ascii 1.0\n"
                    f"element vertex {len(vertices)}\nproperty float x\nproperty float y\nproperty float z\n"
                    f"element face {len(faces)}\nproperty list uchar int vertex_indices\nend_header\n"
                    + "".join(f"{x} {y} {z}\n" for x, y, z in vertices)
                    + "".join(f"3 {a} {b} {c}\n" for a, b, c in faces))


@pytest.mark.parametrize("case", list(DEGENERATE))
def test_degenerate_meshes_build_or_are_refused_naming_the_file(tmp_path, bullet, case):
    vertices, faces = DEGENERATE[case]
    path = tmp_path / "degenerate.ply"
    _write_ply(path, vertices, faces)
    # Zero-area triangles are what the reader refuses: the collinear and one-point meshes, by geometry.
    a, b, c = (np.asarray(vertices, float)[np.asarray(faces)[:, k]] for k in range(3))
    zero_area = bool(np.all(np.linalg.norm(np.cross(b - a, c - a), axis=1) == 0))
    mesh = outcome(path, "ply")
    assert (mesh is None) == zero_area
    if mesh is not None:
        build_shapes(bullet, path, mesh, "ply")
        from sear.models.meshfiles import TerrainModel
        from sear.physics.meshes import create_terrain_bodies

        assert len(create_terrain_bodies(bullet, TerrainModel(mesh=mesh, source=path))) == 1


@pytest.mark.parametrize("case", list(DEGENERATE))
def test_a_run_with_a_degenerate_body_or_terrain_ends_cleanly(demo_copy, capsys, case):
    # The body becomes a convex hull (qhull refuses flat point sets), the terrain a concave mesh.
    from sear.cli import main

    prj = demo_copy / "demo.prj"
    original = prj.read_text()
    for element, tab in (_TARGETS[0], _TARGETS[2]):
        path = demo_copy / "degenerate.ply"
        _write_ply(path, *DEGENERATE[case])
        prj.write_text(original.replace(element, "<file>degenerate.ply</file>"))
        status = main(["run", str(prj), "--headless", "--duration", "0.2"])
        err = capsys.readouterr().err
        assert status in (0, 1) and "Traceback" not in err, err
        assert status == 0 or (str(path) in err and tab in err), err


# --- a sample through `sear validate` and `sear run` -------------------------------------------------

SAMPLE, SAMPLE_SLOW = 2, 5
"""Variants per format run through the command line (each `sear run` builds a whole simulation): the
first SAMPLE (the zero-length file and one damaged file) in the default tier, SAMPLE_SLOW under `slow`."""


@pytest.mark.parametrize("sample", [pytest.param(SAMPLE, id="sample"),
                                    pytest.param(SAMPLE_SLOW, id="larger sample", marks=pytest.mark.slow)])
@pytest.mark.parametrize("name", list(FORMATS))
def test_validate_and_run_refuse_corrupt_models_without_a_traceback(demo_copy, capsys, name, sample):
    from sear.cli import main

    suffix = FORMATS[name][0]
    prj = demo_copy / "demo.prj"
    original = prj.read_text()
    statuses = []
    for i, (what, data) in enumerate(variants(name)[:sample]):
        path = demo_copy / f"v{i}{suffix}"
        path.write_bytes(data)
        element, tab = _TARGETS[2] if name == "heightmap-png" else _TARGETS[i % len(_TARGETS)]
        assert element in original
        prj.write_text(original.replace(element, f"<file>{path.name}</file>"))
        for argv in (["validate", str(prj)], ["run", str(prj), "--headless", "--duration", "0.2"]):
            status = main(argv)
            err = capsys.readouterr().err
            case = f"{name} variant {i} ({what}), sear {argv[0]}: status {status}\n{err}"
            assert status in (0, 1), case
            assert "Traceback" not in err, case
            if status == 1:
                assert str(path) in err and tab in err, case
            statuses.append(status)
    assert 1 in statuses  # the zero-length file at least was refused


def test_a_damage_trimesh_works_around_prints_no_traceback(demo_copy):
    # trimesh logs a traceback when an ASCII STL's normal is not a number (it reads the file anyway);
    # with no logging set up, a separate process would print that on stderr. pytest captures logging,
    # so only a process of its own shows it.
    text = _box().export(file_type="stl_ascii")
    at = text.index("facet normal ") + len("facet normal ")
    (demo_copy / "body.stl").write_text(text[:at] + "x" + text[at:])
    checked = subprocess.run([sys.executable, "-m", "sear", "validate", str(demo_copy / "demo.prj")],
                             capture_output=True, text=True, timeout=120)
    assert checked.returncode == 0, checked.stderr
    assert "Traceback" not in checked.stderr and checked.stderr.strip() == ""
