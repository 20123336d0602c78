"""Reading model files (sear.models.meshfiles): every format, every bad input, repair, the cache, heightmaps."""

from __future__ import annotations

import numpy as np
import pytest
import trimesh
from PIL import Image

from sear.errors import ProjectError
from sear.models.meshfiles import load_mesh, load_terrain
from sear.project import Terrain
from tests.physics.helpers import grid_mesh

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


def test_unreadable_heightmap_names_the_file(tmp_path):
    (tmp_path / "hm.png").write_bytes(b"not a png")
    with pytest.raises(ProjectError) as info:
        load_terrain(Terrain(file=tmp_path / "hm.png"))
    assert "hm.png" in str(info.value) and "Terrain Model" in str(info.value)


# --- more formats, repair and the cache -------------------------------------------------------------

GARBAGE = bytes(range(256)) * 8


@pytest.mark.parametrize("suffix", [".obj", ".stl", ".ply", ".glb", ".gltf", ".off", ".dae", ".mesh.xml"])
def test_garbage_in_every_format_is_a_project_error_naming_file_and_tab(tmp_path, suffix):
    path = tmp_path / f"body{suffix}"
    path.write_bytes(GARBAGE)
    with pytest.raises(ProjectError) as info:
        load_mesh(path, tab="Robot Body Model")
    assert info.value.file == path and info.value.field == "Robot Body Model"


@pytest.mark.parametrize(("text", "says"), [
    ("v 0 0 0\nv 1 0 0\nv 2 0 0\nf 1 2 3\n", "zero area"),          # a degenerate triangle only
    ("v 0 0 0\nv nan 0 0\nv 0 1 0\nf 1 2 3\n", "not finite"),
    ("# exported without geometry\n", "no triangles"),
])
def test_meshes_broken_beyond_repair_are_refused(tmp_path, text, says):
    path = tmp_path / "wheel.obj"
    path.write_text(text)
    with pytest.raises(ProjectError, match=says) as info:
        load_mesh(path, tab="Wheel Models")
    assert info.value.file == path and info.value.field == "Wheel Models"


def test_a_folder_a_bad_scale_and_binary_ogre_are_refused_with_advice(tmp_path):
    with pytest.raises(ProjectError, match="folder"):
        load_mesh(tmp_path, tab="Terrain Model")
    BOX.export(tmp_path / "box.stl")
    with pytest.raises(ProjectError, match="scale"):
        load_mesh(tmp_path / "box.stl", scale=0.0)
    (tmp_path / "robot.mesh").write_bytes(b"\x00\x10[MeshSerializer_v1.100]")
    with pytest.raises(ProjectError, match="OgreXMLConverter"):
        load_mesh(tmp_path / "robot.mesh")


def test_repair_merges_vertices_fixes_windings_and_fills_a_hole(tmp_path):
    faces = BOX.faces.copy()
    faces[:3] = faces[:3, ::-1]          # three triangles wound inwards
    broken = trimesh.Trimesh(BOX.vertices, faces[:-1], process=False)  # and one missing: a hole
    broken.export(tmp_path / "box.stl")  # STL repeats every vertex per triangle
    mesh = load_mesh(tmp_path / "box.stl")
    assert len(mesh.vertices) == 8
    assert mesh.is_watertight and mesh.is_winding_consistent
    assert mesh.volume == pytest.approx(2.0 * 1.0 * 0.5)   # positive: faces point outwards


def test_an_open_surface_loads_as_it_is(tmp_path):
    sheet = trimesh.Trimesh([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0]], [[0, 1, 2], [0, 2, 3]])
    sheet.export(tmp_path / "sheet.ply")
    mesh = load_mesh(tmp_path / "sheet.ply")
    assert len(mesh.faces) == 2 and not mesh.is_watertight


def test_cache_hands_out_copies_and_notices_a_changed_file(tmp_path):
    path = tmp_path / "box.obj"
    BOX.export(path)
    first = load_mesh(path)
    first.apply_translation((10, 0, 0))
    assert np.allclose(load_mesh(path).bounds.mean(axis=0), 0.0)
    trimesh.creation.box(extents=(4.0, 4.0, 4.0)).export(path)
    assert np.allclose(load_mesh(path).extents, 4.0)


# --- Ogre XML --------------------------------------------------------------------------------------

OGRE_PARTS = """<?xml version="1.0"?>
<mesh>
  <sharedgeometry vertexcount="3">
    <vertexbuffer positions="true" normals="true" colours_diffuse="true">
      <vertex><position x="0" y="0" z="0"/><normal x="0" y="1" z="0"/><colour_diffuse value="1 0 0 1"/></vertex>
      <vertex><position x="1" y="0" z="0"/><normal x="0" y="1" z="0"/><colour_diffuse value="1 0 0 1"/></vertex>
      <vertex><position x="0" y="0" z="-1"/><normal x="0" y="1" z="0"/><colour_diffuse value="1 0 0 1"/></vertex>
    </vertexbuffer>
  </sharedgeometry>
  <submeshes>
    <submesh material="ground" usesharedvertices="true" operationtype="triangle_list">
      <faces count="1"><face v1="0" v2="1" v3="2"/></faces>
    </submesh>
    <submesh material="strip" usesharedvertices="false" operationtype="triangle_strip">
      <faces count="2"><face v1="0" v2="1" v3="2"/><face v1="3"/></faces>
      <geometry vertexcount="4">
        <vertexbuffer positions="true">
          <vertex><position x="10" y="0" z="0"/></vertex>
          <vertex><position x="11" y="0" z="0"/></vertex>
          <vertex><position x="10" y="0" z="-1"/></vertex>
          <vertex><position x="11" y="0" z="-1"/></vertex>
        </vertexbuffer>
      </geometry>
    </submesh>
    <submesh material="fan" usesharedvertices="false" operationtype="triangle_fan">
      <faces count="2"><face v1="0" v2="1" v3="2"/><face v1="3"/></faces>
      <geometry vertexcount="4">
        <vertexbuffer positions="true">
          <vertex><position x="20" y="0" z="0"/></vertex>
          <vertex><position x="21" y="0" z="0"/></vertex>
          <vertex><position x="21" y="0" z="-1"/></vertex>
          <vertex><position x="20" y="0" z="-1"/></vertex>
        </vertexbuffer>
      </geometry>
    </submesh>
    <submesh material="wire" usesharedvertices="true" operationtype="line_list">
      <faces count="1"><face v1="0" v2="1"/></faces>
    </submesh>
  </submeshes>
</mesh>
"""


def test_ogre_submeshes_strips_fans_normals_and_colours(tmp_path):
    path = tmp_path / "parts.mesh.xml"
    path.write_text(OGRE_PARTS)
    mesh = load_mesh(path, tab="Terrain Model")
    # 1 list triangle + 2 strip triangles + 2 fan triangles (the line list is skipped).
    assert len(mesh.faces) == 5
    assert mesh.area == pytest.approx(0.5 + 1.0 + 1.0)
    # Ogre is y-up with -z north: the point at Ogre z = -1 lies 1 m north (ENU y = +1), all at z = 0.
    assert np.allclose(mesh.vertices[:, 2], 0.0)
    assert mesh.bounds[0][1] == pytest.approx(0.0) and mesh.bounds[1][1] == pytest.approx(1.0)
    # Every triangle (strip and fan too) faces Ogre's +y, which is up in SEAR: a rotation, no mirror.
    assert np.allclose(mesh.face_normals, [0.0, 0.0, 1.0])


def test_ogre_terrain_keeps_its_vertex_colours_and_normals(tmp_path):
    path = tmp_path / "ground.mesh.xml"
    path.write_text(OGRE_PARTS[:OGRE_PARTS.index('<submesh material="strip"')] + "</submeshes></mesh>")
    model = load_terrain(Terrain(file=path))
    assert model.vertex_colors is not None
    assert np.all(model.vertex_colors == [255, 0, 0, 255])
    assert np.allclose(model.mesh.vertex_normals, [0.0, 0.0, 1.0])   # Ogre's +y normal is SEAR's up


def test_ogre_geometry_errors_give_the_line(tmp_path):
    path = tmp_path / "bad.mesh.xml"
    path.write_text(OGRE.replace('<position x="1" y="0" z="0"/>', '<position x="one" y="0" z="0"/>'))
    with pytest.raises(ProjectError, match="line 6"):
        load_mesh(path, tab="Robot Body Model")
    path.write_text(OGRE.replace("<sharedgeometry", "<unused").replace("</sharedgeometry>", "</unused>"))
    with pytest.raises(ProjectError, match="shared vertices"):
        load_mesh(path)
    path.write_text('<!DOCTYPE m [<!ENTITY e SYSTEM "file:///etc/passwd">]><notmesh>&e;</notmesh>')
    with pytest.raises(ProjectError, match="root element"):
        load_mesh(path)


# --- terrain: colours, orientation, heightmaps -----------------------------------------------------



@pytest.mark.parametrize("suffix", [".obj", ".ply"])
def test_terrain_keeps_vertex_colours(tmp_path, suffix):
    ground = grid_mesh(5, 2.0, lambda x, y: 0.1 * x)
    colours = np.zeros((25, 4), np.uint8)
    colours[:, 3] = 255
    colours[:, 1] = np.arange(25) * 10                 # a green ramp, one value per vertex
    ground.visual.vertex_colors = colours
    ground.export(tmp_path / f"g{suffix}")
    model = load_terrain(Terrain(file=tmp_path / f"g{suffix}"))
    # Match by position: loading may reorder vertices.
    for vertex, colour in zip(model.mesh.vertices, model.vertex_colors, strict=True):
        i = int(np.argmin(np.linalg.norm(ground.vertices - vertex, axis=1)))
        assert np.array_equal(colour, colours[i])


def test_terrain_exported_upside_down_is_turned_to_face_the_sky(tmp_path):
    ground = grid_mesh(4, 5.0, lambda x, y: 0 * x)
    ground.invert()
    ground.export(tmp_path / "down.obj")
    model = load_terrain(Terrain(file=tmp_path / "down.obj"))
    assert np.all(model.mesh.face_normals[:, 2] > 0.99)


def test_sixteen_bit_and_colour_heightmaps(tmp_path):
    deep = np.array([[0, 65535], [32768, 13107]], np.uint16)
    Image.fromarray(deep).save(tmp_path / "deep.png")
    model = load_terrain(Terrain(file=tmp_path / "deep.png", heightmap_size=2.0, heightmap_height=100.0))
    assert np.allclose(model.heightfield, deep / 65535.0 * 100.0)
    rgb = np.zeros((2, 2, 3), np.uint8)
    rgb[0, 0] = (255, 255, 255)
    rgb[1, 1] = (128, 128, 128)
    Image.fromarray(rgb, mode="RGB").save(tmp_path / "rgb.jpg", quality=100)
    model = load_terrain(Terrain(file=tmp_path / "rgb.jpg", heightmap_size=2.0, heightmap_height=10.0))
    assert model.heightfield[0, 0] == pytest.approx(10.0, abs=0.1)
    assert model.heightfield[1, 1] == pytest.approx(128 / 255 * 10.0, abs=0.1)


def test_heightmaps_that_cannot_be_used_are_refused_with_a_reason(tmp_path):
    Image.new("L", (8194, 8193)).save(tmp_path / "huge.png")  # past the 8193² maximum
    with pytest.raises(ProjectError, match="scale the image down"):
        load_terrain(Terrain(file=tmp_path / "huge.png"))
    Image.fromarray(np.ones((4, 4), np.float32)).save(tmp_path / "float.tif")
    with pytest.raises(ProjectError, match="8 or 16 bit"):
        load_terrain(Terrain(file=tmp_path / "float.tif"))
    Image.new("L", (1, 7)).save(tmp_path / "line.png")
    with pytest.raises(ProjectError, match="2 x 2"):
        load_terrain(Terrain(file=tmp_path / "line.png"))
    with pytest.raises(ProjectError, match="does not exist") as info:
        load_terrain(Terrain(file=tmp_path / "gone.png"))
    assert info.value.field == "Terrain Model"
    with pytest.raises(ProjectError, match="no terrain file"):
        load_terrain(Terrain(file=None))


def test_ascii_stl_with_a_latin1_name_loads(tmp_path):
    # CAD programs in Europe write e.g. "solid Gehäuse" in Latin-1, which is not UTF-8.
    text = trimesh.exchange.stl.export_stl_ascii(BOX).replace("solid", "solid Geh\xe4use", 1)
    (tmp_path / "body.stl").write_bytes(text.encode("latin-1"))
    assert np.allclose(load_mesh(tmp_path / "body.stl").extents, (2.0, 1.0, 0.5))
