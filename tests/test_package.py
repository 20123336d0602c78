"""SEAR works when installed: the wheel carries its data, and `sear new/validate/run` work in a fresh venv
outside the repository. The demo in the repository needs no generated file to validate."""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest
from lxml import etree

from sear.demo import DEMO_MODEL_FILES

REPO = Path(__file__).resolve().parent.parent
DEMO_TEXT_FILES = ("demo.prj", "sensors.xml", "demo_code.py")
PACKAGE_DATA = (
    "sear/py.typed", "sear/data/sensor_presets.json", "sear/data/templates/user_code.py",
    "sear/data/templates/simulator_script.py", "sear/schemas/project.xsd", "sear/schemas/sensors.xsd",
    "sear/schemas/common.xsd",
    *(f"sear/data/demo/{name}" for name in DEMO_TEXT_FILES + DEMO_MODEL_FILES),
    *(f"sear/data/docs/{page.name}" for page in (REPO / "docs").glob("*.md")),  # the user guide (Help)
)


def _children_cpu_seconds() -> float:
    """CPU seconds (user and system) of the child processes this process has waited for."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _clean_env() -> dict[str, str]:
    """The environment without anything that would lead Python back to the repository or its venv."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep)
                                  if not p.startswith(str(REPO)) and not p.startswith(sys.prefix))
    return env


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The wheel, built offline (no build isolation) from a copy of the sources, so the build's own
    folders (build/, *.egg-info) are not written into the repository."""
    work = tmp_path_factory.mktemp("wheel")
    source = work / "src"
    source.mkdir()
    shutil.copytree(REPO / "sear", source / "sear", symlinks=True,
                    ignore=shutil.ignore_patterns("__pycache__", "*.bak", "*.csv", "*.npz"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, source / name)
    shutil.copytree(REPO / "docs", source / "docs")  # sear/data/docs links to its pages
    result = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
                             "--quiet", "-w", str(work / "dist"), str(source)],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    (built,) = (work / "dist").glob("sear-*.whl")
    return built


def test_every_page_of_docs_is_linked_into_the_package():
    """The user guide (Help > User Guide) reads sear/data/docs: each page of docs/ must be linked there."""
    pages = sorted(p.name for p in (REPO / "docs").glob("*.md"))
    shipped = REPO / "sear" / "data" / "docs"
    assert "index.md" in pages
    assert sorted(p.name for p in shipped.glob("*.md")) == pages
    assert all((shipped / name).resolve() == (REPO / "docs" / name).resolve() for name in pages)
    assert (shipped / "images").resolve() == (REPO / "docs" / "images").resolve()


def test_the_wheel_carries_the_templates_the_demo_the_presets_and_the_schemas(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    missing = [name for name in PACKAGE_DATA if name not in names]
    assert not missing, f"not in the wheel: {missing}"
    assert not [name for name in names if "__pycache__" in name or name.endswith((".bak", ".csv", ".npz"))]
    images = sorted(p.name for p in (REPO / "docs" / "images").glob("*.png"))
    assert images and all(f"sear/data/docs/images/{name}" in names for name in images)


def test_the_installed_wheel_makes_validates_and_runs_a_project_outside_the_repository(wheel, tmp_path):
    started = _children_cpu_seconds()
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    result = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps",
                             "--no-index", "--quiet", str(wheel)], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                               capture_output=True, text=True, check=True, timeout=60).stdout.strip())
    # The dependencies (numpy, pybullet, PySide6, ...) come from the test venv, listed after the new venv's
    # own site-packages; .pth files of that folder (the editable install of the repository) are not run.
    (site / "zz_test_dependencies.pth").write_text(sysconfig.get_path("purelib") + "\n")

    work = tmp_path / "elsewhere"
    work.mkdir()
    env = _clean_env()
    sear = str(venv / "bin" / "sear")

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(args, cwd=work, env=env, capture_output=True, text=True, timeout=180)

    where = run(str(python), "-c", "import sear, sear.resources as r; print(sear.__file__); print(r.demo_project())")
    assert where.returncode == 0, where.stderr
    module_file, demo = (Path(line) for line in where.stdout.split())
    assert module_file.is_relative_to(site) and demo.is_relative_to(site), where.stdout   # not the repository
    guide = run(str(python), "-c", "from sear.gui.help import docs_folder, guide_pages; folder = docs_folder(); "
                "print(folder); print(len(guide_pages(folder)))")
    assert guide.returncode == 0, guide.stderr
    folder, pages = guide.stdout.split()
    assert Path(folder).is_relative_to(site) and int(pages) == len(list((REPO / "docs").glob("*.md")))

    made = run(sear, "new", "x")
    assert made.returncode == 0, made.stderr
    assert "Created x" in made.stdout
    assert sorted(p.name for p in (work / "x").iterdir()) == sorted(DEMO_TEXT_FILES + DEMO_MODEL_FILES)

    checked = run(sear, "validate", "x/demo.prj")
    assert checked.returncode == 0, checked.stderr
    assert "x/demo.prj: OK" in checked.stdout

    ran = run(sear, "run", "x/demo.prj", "--headless", "--duration", "2")
    assert ran.returncode == 0, ran.stderr
    assert "simulated 2.00 s" in ran.stdout
    assert _children_cpu_seconds() - started < 120  # CPU time: a loaded machine's wall clock says nothing


def _files_referred_to(project: Path) -> set[str]:
    """The model, code and sensors files that a demo.prj names (its <file>, <user_code>, <sensors>)."""
    tree = etree.parse(str(project))
    return {element.text.strip() for element in tree.iter("file", "user_code", "sensors") if element.text}


@pytest.mark.skipif(shutil.which("git") is None or not (REPO / ".git").exists(), reason="not a git checkout")
def test_every_file_of_the_demo_is_in_git_so_a_fresh_clone_validates_without_make():
    listed = subprocess.run(["git", "ls-files", "-s", "assets", "sear/data/demo"], cwd=REPO, capture_output=True,
                            text=True, check=True, timeout=30).stdout.splitlines()
    entries = {line.split("\t", 1)[1]: line.split()[0] for line in listed}
    assert entries.get("assets/demo") == "120000"                     # a link to the package's demo folder
    assert os.readlink(REPO / "assets" / "demo") == "../sear/data/demo"
    referred = _files_referred_to(REPO / "sear" / "data" / "demo" / "demo.prj")
    assert {"terrain.obj", "body.stl", "demo_code.py", "sensors.xml"} <= referred   # the parse found them
    tracked = {Path(name).name for name in entries if name.startswith("sear/data/demo/")}
    assert referred | {"demo.prj"} <= tracked, referred - tracked
    assert set(DEMO_MODEL_FILES) <= tracked


def test_the_demo_in_assets_validates(capsys):
    from sear.cli import main

    assert main(["validate", str(REPO / "assets" / "demo" / "demo.prj")]) == 0, capsys.readouterr().err
    assert ": OK (" in capsys.readouterr().out


def test_sear_without_a_project_or_a_display_runs_the_bundled_demo_in_place_and_leaves_it_unchanged(tmp_path):
    shipped = REPO / "sear" / "data" / "demo"
    before = {p.name: p.read_bytes() for p in shipped.iterdir()}
    hidden = ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")
    env = {k: v for k, v in os.environ.items() if k not in hidden}
    result = subprocess.run([sys.executable, "-m", "sear"], cwd=tmp_path, env=env, capture_output=True, text=True,
                            timeout=180)
    assert result.returncode == 0, result.stderr
    assert f"running {shipped / 'demo.prj'} headless" in result.stderr and "simulated 20.00 s" in result.stdout
    assert {p.name: p.read_bytes() for p in shipped.iterdir()} == before
    assert list(tmp_path.iterdir()) == []
