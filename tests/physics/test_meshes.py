"""Model and terrain import: every format, every bad input, tiling, heightmaps."""

from __future__ import annotations

import numpy as np
import pybullet as p
import pytest
import trimesh
from PIL import Image

from sear.errors import ProjectError
from sear.physics.meshes import (
    MAX_MESH_VERTICES,
    create_terrain_bodies,
    load_mesh,
    load_terrain,
    split_into_tiles,
)
from sear.project import Terrain

BOX = trimesh.creation.box(extents=(2.0, 1.0, 0.5))


@pytest.mark.parametrize("suffix", [".obj", ".stl", ".ply", ".glb", ".off", ".dae"])
def test_reads_every_trimesh_format(tmp_path, suffix):
    path = tmp_path / f"box{suffix}"
    BOX.export(path)
    mesh = load_mesh(path, tab="Robot Body Model")
    assert np.allclose(mesh.extents, (2.0, 1.0, 0.5), atol=1e-5)


def test_scale_converts_model_units_to_metres(tmp_path):
    BOX.export(tmp_path / "box.stl")
    assert np.allclose(load_mesh(tmp_path / "box.stl", scale=0.01).extents, (0.02, 0.01, 0.005))


def test_scene_files_are_flattened_with_their_transforms(tmp_path):
    scene = trimesh.Scene()
    scene.add_geometry(BOX, transform=trimesh.transformations.translation_matrix((5, 0, 0)))
    scene.add_geometry(BOX.copy(), transform=trimesh.transformations.translation_matrix((-5, 0, 0)))
    scene.export(tmp_path / "two.glb")
    mesh = load_mesh(tmp_path / "two.glb")
    assert mesh.extents[0] == pytest.approx(12.0)


OGRE = """<?xml version="1.0"?>
<mesh>
  <sharedgeometry vertexcount="4">
    <vertexbuffer positions="true" normals="false">
      <vertex><position x="0" y="0" z="0"/></vertex>
      <vertex><position x="1" y="0" z="0"/></vertex>
      <vertex><position x="0" y="2" z="0"/></vertex>
      <vertex><position x="0" y="0" z="3"/></vertex>
    </vertexbuffer>
  </sharedgeometry>
  <submeshes>
    <submesh material="m" usesharedvertices="true" operationtype="triangle_list">
      <faces count="4">
        <face v1="0" v2="2" v3="1"/><face v1="0" v2="1" v3="3"/>
        <face v1="0" v2="3" v3="2"/><face v1="1" v2="2" v3="3"/>
      </faces>
    </submesh>
  </submeshes>
</mesh>
"""


def test_reads_ogre_xml_meshes_turning_y_up_into_z_up(tmp_path):
    path = tmp_path / "tetra.mesh.xml"
    path.write_text(OGRE)
    mesh = load_mesh(path)
    # Ogre's y (2 m) is SEAR's z; Ogre's z (3 m) is SEAR's y.
    assert np.allclose(mesh.extents, (1.0, 3.0, 2.0))
    assert len(mesh.faces) == 4


BAD = {
    "missing": None,
    "garbage": b"\x00\x01\x02 this is not a model \xff\xfe",
    "empty": b"",
    "no faces": b"v 0 0 0\nv 1 0 0\nv 0 1 0\n",
}


@pytest.mark.parametrize("case", BAD)
def test_bad_model_files_name_the_file_and_the_tab(tmp_path, case):
    path = tmp_path / "wheel.obj"
    if BAD[case] is not None:
        path.write_bytes(BAD[case])
    if case == "garbage":
        path = tmp_path / "wheel.stl"
        path.write_bytes(BAD[case])
    with pytest.raises(ProjectError) as info:
        load_mesh(path, tab="Wheel Models")
    text = str(info.value)
    assert str(path) in text and "Wheel Models" in text


def test_unsupported_type_and_broken_ogre_are_refused(tmp_path):
    (tmp_path / "a.xyz").write_text("1 2 3")
    with pytest.raises(ProjectError, match="not a model format"):
        load_mesh(tmp_path / "a.xyz", tab="Robot Body Model")
    (tmp_path / "b.mesh.xml").write_text(OGRE.replace('v3="1"', 'v3="9"'))
    with pytest.raises(ProjectError, match="does not exist"):
        load_mesh(tmp_path / "b.mesh.xml")


def test_terrain_is_recentred_on_the_world_origin(tmp_path):
    ground = trimesh.creation.box(extents=(10, 20, 1))
    ground.apply_translation((100, 50, -0.5))
    ground.export(tmp_path / "t.obj")
    model = load_terrain(Terrain(file=tmp_path / "t.obj"))
    lo, hi = model.mesh.bounds
    assert np.allclose((lo[:2] + hi[:2]) / 2, 0.0)
    assert hi[2] == pytest.approx(0.0) and lo[2] == pytest.approx(-1.0)


def _ray_heights(client, xy):
    hits = p.rayTestBatch([[x, y, 100] for x, y in xy], [[x, y, -100] for x, y in xy], physicsClientId=client)
    return np.array([h[3][2] if h[0] >= 0 else np.nan for h in hits])


def test_large_terrain_is_tiled_below_the_vertex_limit_without_gaps(tmp_path):
    n = 400  # 160,000 vertices: over pybullet's 131,072 per concave mesh
    xs = np.linspace(-50, 50, n)
    gx, gy = np.meshgrid(xs, xs)
    gz = np.sin(gx / 7.0) + np.cos(gy / 5.0)
    idx = np.arange(n * n).reshape(n, n)
    a, b, c, d = idx[:-1, :-1].ravel(), idx[:-1, 1:].ravel(), idx[1:, 1:].ravel(), idx[1:, :-1].ravel()
    faces = np.concatenate([np.column_stack([a, b, c]), np.column_stack([a, c, d])])
    mesh = trimesh.Trimesh(np.column_stack([gx.ravel(), gy.ravel(), gz.ravel()]), faces, process=False)
    assert len(mesh.vertices) > MAX_MESH_VERTICES
    tiles = split_into_tiles(mesh)
    assert len(tiles) > 1 and all(len(t.vertices) <= MAX_MESH_VERTICES for t in tiles)
    mesh.export(tmp_path / "big.ply")
    client = p.connect(p.DIRECT)
    try:
        model = load_terrain(Terrain(file=tmp_path / "big.ply"))
        assert len(create_terrain_bodies(client, model)) == len(tiles)
        rng = np.random.default_rng(1)
        xy = rng.uniform(-49, 49, (200, 2))
        xy = np.vstack([xy, [[0.0, 0.0], [0.0, 13.3], [-0.01, 0.01]]])  # on and beside tile borders
        heights = _ray_heights(client, xy)
        expected = np.sin(xy[:, 0] / 7.0) + np.cos(xy[:, 1] / 5.0)
        # Linear interpolation on a 0.25 m grid of a smooth surface: within a few mm.
        assert np.all(np.abs(heights - expected) < 0.01)
    finally:
        p.disconnect(client)


def test_heightmap_heights_match_the_pixels(tmp_path):
    rng = np.random.default_rng(0)
    pixels = rng.integers(0, 256, (33, 33), dtype=np.uint8)
    Image.fromarray(pixels, mode="L").save(tmp_path / "hm.png")
    terrain = Terrain(file=tmp_path / "hm.png", heightmap_size=64.0, heightmap_height=8.0)
    model = load_terrain(terrain)
    client = p.connect(p.DIRECT)
    try:
        create_terrain_bodies(client, model)
        # Pixel (row r, col c) lies at x = (c - 16)·2 m east, y = (16 - r)·2 m north (row 0 = north edge).
        rows, cols = np.meshgrid(np.arange(1, 32, 5), np.arange(1, 32, 5), indexing="ij")
        xy = np.column_stack([(cols.ravel() - 16) * 2.0, (16 - rows.ravel()) * 2.0])
        expected = pixels[rows.ravel(), cols.ravel()] / 255.0 * 8.0
        assert np.allclose(_ray_heights(client, xy), expected, atol=1e-4)
    finally:
        p.disconnect(client)


def test_unreadable_heightmap_names_the_file(tmp_path):
    (tmp_path / "hm.png").write_bytes(b"not a png")
    with pytest.raises(ProjectError) as info:
        load_terrain(Terrain(file=tmp_path / "hm.png"))
    assert "hm.png" in str(info.value) and "Terrain Model" in str(info.value)
