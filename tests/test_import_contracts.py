"""The import-linter contracts in pyproject.toml (docs ARCHITECTURE "Layers") hold, and they can fail.

`make test` runs `lint-imports` on the package itself; these tests run it on a copy of the package in a
temporary folder, unchanged (it passes) and with one import that runs up a layer or closes a loop (it
fails, naming the contract and the import), so a contract that checks nothing cannot pass unnoticed.
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
    assert "BROKEN" not in result.stdout and "Contracts: 5 kept, 0 broken." in result.stdout


@pytest.mark.parametrize(("module", "line", "contract", "chain"), [
    ("project.py", "import sear.gui.app", "SEAR layers", "sear.project -> sear.gui.app"),
    ("sensors/lidar.py", "import sear.physics.vehicle", "SEAR layers", "sear.sensors.lidar -> sear.physics.vehicle"),
    ("runtime.py", "import PySide6.QtCore", "Qt (PySide6, pyqtgraph, OpenGL) is imported only under sear.gui",
     "sear.runtime -> PySide6"),
    ("geo.py", "import pybullet", "pybullet is imported only under sear.physics", "sear.geo -> pybullet"),
    ("gui/wizard.py", "import sear.runtime", "The settings window, the wizard and their widgets load no physics",
     "sear.gui.wizard -> sear.runtime"),
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

