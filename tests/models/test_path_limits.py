"""Paths no file system can hold (a name of more than 255 bytes, a path of more than 4,095) in any path field
of a project, a URDF or a sweep file: a clear problem naming the field, never `OSError: File name too long`;
a name of exactly 255 bytes still works."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from sear.batch.sweep import SweepError, load_sweep
from sear.cli import main
from sear.errors import ProjectError
from sear.loading import load_project
from sear.models.filecheck import NAME_MAX, PATH_MAX, path_too_long
from sear.models.robotdesc.parse import load_urdf
from sear.project import Project
from sear.starter import create_new_project

LONG = "y" * 300


@pytest.fixture
def project(tmp_path: Path) -> Path:
    prj = tmp_path / "p.prj"
    create_new_project(prj)
    return prj


def _set(prj: Path, field: str, value: str) -> None:
    project = Project.load(prj)
    section, _, name = field.partition(".")
    if section == "wheels":
        wheel, _, name = name.partition(".")
        setattr(project.wheels[wheel], name, Path(value))
    else:
        setattr(getattr(project, section), name, Path(value))
    project.save(prj)


@pytest.mark.parametrize(("field", "suffix"), [
    ("terrain.file", ".obj"), ("body.file", ".obj"), ("wheels.left_front.file", ".obj"),
    ("code.user_code", ".py"), ("code.sensors", ".xml"),
])
def test_a_name_too_long_for_any_file_system_is_a_problem_of_its_field(project, capsys, field, suffix):
    _set(project, field, str(project.parent / (LONG + suffix)))
    loaded = load_project(project)
    assert [p.field for p in loaded.problems] == [field]
    assert f"{300 + len(suffix)} bytes long" in str(loaded.problems[0])
    assert f"at most {NAME_MAX} bytes" in str(loaded.problems[0])
    assert main(["validate", str(project)]) == 1
    assert main(["run", str(project), "--headless", "--duration", "0.1"]) == 1
    err = capsys.readouterr()
    assert "Traceback" not in err.out + err.err and "Errno 36" not in err.out + err.err


def test_a_name_of_the_most_bytes_loads(project):
    """The positive control: a terrain file whose name has NAME_MAX bytes (multi-byte letters count as
    their bytes: 'é' is two)."""
    name = "é" * ((NAME_MAX - 4) // 2) + "t" * ((NAME_MAX - 4) % 2) + ".obj"
    assert len(name.encode()) == NAME_MAX
    shutil.copy(project.parent / "terrain.obj", project.parent / name)
    _set(project, "terrain.file", str(project.parent / name))
    assert load_project(project).problems == []
    one_more = "é" + name
    assert path_too_long(project.parent / one_more) is not None


def test_a_path_too_long_in_all_is_refused_and_one_within_the_limit_is_not(tmp_path):
    folder = "f" * 200
    parts = (PATH_MAX - len(str(tmp_path.absolute()))) // 201 + 1
    too_long = tmp_path.joinpath(*[folder] * parts)
    assert len(str(too_long)) > PATH_MAX
    assert f"at most {PATH_MAX:,} bytes" in (path_too_long(too_long) or "")
    assert path_too_long(tmp_path.joinpath(*[folder] * (parts - 1))) is None


MESH_URDF = '''<?xml version="1.0"?>
<robot name="r">
  <link name="a">
    <inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1"/></inertial>
    <collision><geometry><mesh filename="NAME"/></geometry></collision>
  </link>
</robot>
'''


def test_a_urdf_mesh_path_too_long_is_refused_with_its_line(tmp_path):
    path = tmp_path / "r.urdf"
    path.write_text(MESH_URDF.replace("NAME", LONG + ".stl"))
    with pytest.raises(ProjectError) as caught:
        load_urdf(path)
    assert caught.value.line == 5 and "304 bytes long" in caught.value.message
    path.write_text(MESH_URDF.replace("NAME", "package://pkg/m.stl"))
    with pytest.raises(ProjectError, match="300 bytes long"):
        load_urdf(path, package_roots=[tmp_path / LONG])
    # Positive control: a mesh of a 255-byte name is found and read.
    import trimesh

    name = "m" * (NAME_MAX - 4) + ".stl"
    trimesh.creation.box(extents=(1, 1, 1)).export(tmp_path / name)
    path.write_text(MESH_URDF.replace("NAME", name))
    assert load_urdf(path).links["a"].collisions[0].mesh == tmp_path / name


def test_a_sweep_path_too_long_is_refused_with_its_line(tmp_path):
    create_new_project(tmp_path / "p.prj")
    head = 'project = "p.prj"\nduration = 1.0\n'
    sweep = tmp_path / "s.toml"
    sweep.write_text(head + f'[set]\nterrain.file = "{LONG}.obj"\n')
    with pytest.raises(SweepError, match=r"line 4, field 'set.terrain.file'.*304 bytes long"):
        load_sweep(sweep)
    sweep.write_text(head + f'output = "{LONG}"\n')
    with pytest.raises(SweepError, match=r"line 3, field 'output'.*300 bytes long"):
        load_sweep(sweep)
    sweep.write_text(head)
    assert main(["batch", str(sweep), "-o", str(tmp_path / LONG)]) == 1
    assert not (tmp_path / "s-results").exists()
