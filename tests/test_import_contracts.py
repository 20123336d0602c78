"""The import-linter contracts in pyproject.toml (docs/ARCHITECTURE.md, "The layers") hold, and they can fail;
and the package has no import cycle at all.

`make test` runs `lint-imports` on the package itself; these tests run it on a copy of the package in a
temporary folder, unchanged (it passes) and with one import that runs up a layer or closes a loop (it
fails, naming the contract and the import), so a contract that checks nothing cannot pass unnoticed. The
cycle check below reads the import graph with grimp (the library import-linter reads it with) module by
module, independently of the contracts.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")

pytestmark = pytest.mark.skipif(not LINT_IMPORTS.exists(), reason="import-linter is not installed (.[test])")


def _copy_of_the_package(folder: Path) -> Path:
    shutil.copytree(REPO / "sear", folder / "sear", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "pyproject.toml", folder / "pyproject.toml")
    return folder


def _lint_imports(folder: Path) -> subprocess.CompletedProcess[str]:
    """lint-imports on the package in `folder` (first on the path, ahead of the editable install)."""
    env = {**os.environ, "PYTHONPATH": str(folder)}
    return subprocess.run([str(LINT_IMPORTS), "--no-cache", "--no-logo", "--config", str(folder / "pyproject.toml")],
                          cwd=folder, env=env, capture_output=True, text=True, timeout=300)


def test_the_unchanged_package_keeps_every_contract(tmp_path):
    result = _lint_imports(_copy_of_the_package(tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "BROKEN" not in result.stdout and "Contracts: 6 kept, 0 broken." in result.stdout


@pytest.mark.parametrize(("module", "line", "contract", "chain"), [
    ("project.py", "import sear.gui.app", "SEAR layers", "sear.project -> sear.gui.app"),
    ("sensors/lidar.py", "import sear.physics.vehicle", "SEAR layers", "sear.sensors.lidar -> sear.physics.vehicle"),
    ("runtime/simulation.py", "import PySide6.QtCore", "Qt (PySide6, pyqtgraph, OpenGL) is imported only under "
     "sear.gui", "sear.runtime.simulation -> PySide6"),
    ("geo.py", "import pybullet", "pybullet is imported only under sear.physics", "sear.geo -> pybullet"),
    ("gui/wizard.py", "import sear.runtime.simulation", "The settings window, the wizard and their widgets load no "
     "physics", "sear.gui.wizard -> sear.runtime.simulation"),
    ("gui/settings/dynamics_tab.py", "import sear.physics.vehicle",
     "The settings window, the wizard and their widgets load no physics",
     "sear.gui.settings.dynamics_tab -> sear.physics.vehicle"),
    ("drives/car.py", "import sear.project", "SEAR layers", "sear.drives.car -> sear.project"),
    ("models/meshfiles.py", "import sear.models.robotdesc.parse", "No import cycles",
     "No cycles are allowed in sear.models."),
])
def test_an_import_that_breaks_a_contract_fails_the_check(tmp_path, module, line, contract, chain):
    folder = _copy_of_the_package(tmp_path)
    with (folder / "sear" / module).open("a", encoding="utf-8") as file:
        file.write(f"\n{line}  # added by the test\n")
    result = _lint_imports(folder)
    assert result.returncode != 0
    broken = result.stdout.split("Broken contracts", 1)[-1]
    assert contract in broken, result.stdout
    assert chain in broken, result.stdout


# --- no import cycle, module by module ------------------------------------------------------------

def _cycles(graph) -> list[set[str]]:
    """The import cycles of `graph` (a grimp ImportGraph): its strongly connected components of more than
    one module, and the modules that import themselves (Tarjan's algorithm, without recursion)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []
    for root in sorted(graph.modules):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            module, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.find_modules_directly_imported_by(child)))))
                elif child in on_stack:
                    low[module] = min(low[module], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[module])
            if low[module] == index[module]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == module:
                        break
                if len(component) > 1 or module in graph.find_modules_directly_imported_by(module):
                    found.append(component)
    return found


def test_no_module_of_the_package_imports_itself_through_others():
    grimp = pytest.importorskip("grimp", reason="grimp comes with import-linter (.[test])")
    graph = grimp.build_graph("sear", cache_dir=None)
    assert _cycles(graph) == []
    # Positive control: one import back from the mesh reader to the URDF reader closes a loop through
    # sear.models.robotdesc.model (which reads meshes), and the check names the modules in it.
    graph.add_import(importer="sear.models.meshfiles", imported="sear.models.robotdesc.parse")
    (cycle,) = _cycles(graph)
    assert {"sear.models.meshfiles", "sear.models.robotdesc.parse", "sear.models.robotdesc.model"} <= cycle
