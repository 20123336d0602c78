"""Meshes as pybullet shapes (sear.physics.meshes): terrain tiles without gaps, hulls, V-HACD."""

from __future__ import annotations

import numpy as np
import pybullet as p
import pytest
import trimesh
from PIL import Image

from sear.models.meshfiles import TerrainModel, load_terrain
from sear.physics.meshes import (
    MAX_MESH_VERTICES,
    convex_collision_shape,
    create_terrain_bodies,
    split_into_tiles,
)
from sear.project import Terrain

from .helpers import grid_mesh


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





def _ray_heights_at(model, xy):
    client = p.connect(p.DIRECT)
    try:
        create_terrain_bodies(client, model)
        return _ray_heights(client, xy)
    finally:
        p.disconnect(client)


def test_non_square_heightmap_keeps_square_pixels_north_up(tmp_path):
    pixels = np.zeros((3, 5), np.uint8)     # 3 rows (north to south) x 5 columns (west to east)
    pixels[0, 4] = 255                        # north-east corner white
    pixels[2, 0] = 51                         # south-west corner 20 % grey
    Image.fromarray(pixels, mode="L").save(tmp_path / "hm.bmp")
    model = load_terrain(Terrain(file=tmp_path / "hm.bmp", heightmap_size=40.0, heightmap_height=5.0))
    # The longer side (5 pixels, 4 steps) spans 40 m: 10 m pixels, so the 3 rows span 20 m.
    assert np.allclose(model.mesh.bounds[:, :2], [[-20, -10], [20, 10]])
    assert np.array_equal(model.heightfield, pixels / 255.0 * 5.0)
    heights = _ray_heights_at(model, [(19.99, 9.99), (-19.99, -9.99), (0.0, 0.0)])
    assert np.allclose(heights, [255 / 255 * 5.0, 51 / 255 * 5.0, 0.0], atol=0.01)
    assert np.all(model.mesh.face_normals[:, 2] > 0)


# --- tiling ----------------------------------------------------------------------------------------

def test_terrain_under_the_vertex_limit_but_over_the_triangle_limit_is_tiled(tmp_path):
    def surface(x, y):
        return 0.5 * np.sin(x / 6.0) * np.cos(y / 9.0)

    ground = grid_mesh(300, 30.0, surface)   # 90,000 vertices but 178,802 triangles (> 174,762)
    assert len(ground.vertices) < MAX_MESH_VERTICES and len(ground.faces) > 524_288 // 3
    model = load_terrain(Terrain(file=_export(ground, tmp_path / "g.ply")))
    rng = np.random.default_rng(2)
    xy = rng.uniform(-29.9, 29.9, (100, 2))
    heights = _ray_heights_at(model, xy)
    assert np.all(np.abs(heights - surface(xy[:, 0], xy[:, 1])) < 0.005)


def _export(mesh: trimesh.Trimesh, path):
    mesh.export(path)
    return path


def test_splitting_ends_even_when_faces_share_one_spot():
    # 2,000 triangles stacked at the same x/y (a vertical fan): no x/y grid can separate them.
    k = np.arange(2000)
    vertices = np.concatenate([np.column_stack([np.zeros(2000), np.zeros(2000), k]),
                               np.column_stack([np.ones(2000), np.zeros(2000), k]),
                               np.column_stack([np.zeros(2000), np.ones(2000), k])]).astype(float)
    faces = np.column_stack([k, k + 2000, k + 4000])
    tiles = split_into_tiles(trimesh.Trimesh(vertices, faces, process=False), max_vertices=300, max_faces=100)
    assert sum(len(t.faces) for t in tiles) == 2000
    assert all(len(t.vertices) <= 300 and len(t.faces) <= 100 for t in tiles)


# --- moving and static bodies ----------------------------------------------------------------------

def _with_ground(client):
    plane = p.createCollisionShape(p.GEOM_PLANE, physicsClientId=client)
    p.createMultiBody(0, plane, physicsClientId=client)
    p.setGravity(0, 0, -9.81, physicsClientId=client)


def test_a_convex_body_comes_to_rest_on_its_hull():
    # A 0.6 x 0.4 x 0.12 m box with a 0.3 x 0.3 x 0.06 m deck on top, off-centre: the body's origin is
    # the box centre, so at rest on the ground the origin is half the box height (0.06 m) up.
    box = trimesh.creation.box(extents=(0.6, 0.4, 0.12))
    deck = trimesh.creation.box(extents=(0.3, 0.3, 0.06))
    deck.apply_translation((-0.1, 0.0, 0.09))
    client = p.connect(p.DIRECT)
    try:
        _with_ground(client)
        shape = convex_collision_shape(client, trimesh.util.concatenate([box, deck]))
        body = p.createMultiBody(5.0, shape, basePosition=(0, 0, 0.3), physicsClientId=client)
        for _ in range(480):
            p.stepSimulation(physicsClientId=client)
        position, orientation = p.getBasePositionAndOrientation(body, physicsClientId=client)
        assert position[2] == pytest.approx(0.06, abs=0.003)
        assert abs(orientation[3]) == pytest.approx(1.0, abs=1e-4)    # still level
    finally:
        p.disconnect(client)


def _u_block() -> trimesh.Trimesh:
    """A 3 m wide U: two 1 m posts 2 m high on a 0.5 m base; the notch (|x| < 0.5) is open above z 0.5."""
    parts = [trimesh.creation.box(extents=(3.0, 1.0, 0.5)),
             trimesh.creation.box(extents=(1.0, 1.0, 1.5)), trimesh.creation.box(extents=(1.0, 1.0, 1.5))]
    parts[0].apply_translation((0, 0, 0.25))
    parts[1].apply_translation((-1.0, 0, 1.25))
    parts[2].apply_translation((1.0, 0, 1.25))
    return trimesh.util.concatenate(parts)


def test_hull_fills_a_notch_that_vhacd_and_a_static_concave_mesh_keep_open():
    client = p.connect(p.DIRECT)
    try:
        u = _u_block()
        hull = p.createMultiBody(1.0, convex_collision_shape(client, u), physicsClientId=client)
        shifted = u.copy()
        shifted.apply_translation((10, 0, 0))
        (concave,) = create_terrain_bodies(client, TerrainModel(mesh=shifted))
        parts = convex_collision_shape(client, u, vhacd=True)
        vhacd = p.createMultiBody(1.0, parts, basePosition=(20, 0, 0), physicsClientId=client)
        assert hull != concave != vhacd
        heights = _ray_heights(client, [(0, 0), (10, 0), (20, 0)])
        assert heights[0] == pytest.approx(2.0, abs=0.01)       # the hull spans the notch at the top
        assert heights[1] == pytest.approx(0.5, abs=0.01)       # the exact mesh: down to the base
        assert heights[2] < 1.0                                  # V-HACD's parts leave the notch open
    finally:
        p.disconnect(client)


def test_a_flat_model_still_gets_a_collision_shape():
    sheet = trimesh.Trimesh([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0]], [[0, 1, 2], [0, 2, 3]])
    client = p.connect(p.DIRECT)
    try:
        assert convex_collision_shape(client, sheet) >= 0
    finally:
        p.disconnect(client)
