"""The launcher sits between the command line and the window; the loop imports neither of them."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import sear

SEAR_DIR = Path(sear.__file__).resolve().parent
FRONT_ENDS = ("sear.cli", "sear.launcher", "sear.gui")


def _imported(path: Path) -> set[str]:
    """Every sear module `path` imports, at the top or inside a function (an import run only when a
    function is called is an import all the same)."""
    package = ".".join(path.relative_to(SEAR_DIR.parent).with_suffix("").parts[:-1])
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join([*package.split(".")[: len(package.split(".")) - node.level + 1], base]).strip(".")
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
    return {n for n in names if n == "sear" or n.startswith("sear.")}


def _up(names: set[str], above: tuple[str, ...]) -> set[str]:
    return {n for n in names if any(n == a or n.startswith(a + ".") for a in above)}


def test_the_scan_sees_imports_at_the_top_and_inside_functions():
    # Positive controls: the window imports the loop at the top, the command line the launcher in a function.
    assert "sear.runtime" in _imported(SEAR_DIR / "gui" / "simwindow.py")
    assert "sear.launcher" in _imported(SEAR_DIR / "cli.py")
    assert _up(_imported(SEAR_DIR / "launcher.py"), ("sear.gui",)) == {"sear.gui.simwindow",
                                                                       "sear.gui.simwindow.run_window"}


def test_the_loop_imports_no_front_end():
    assert _up(_imported(SEAR_DIR / "runtime.py"), FRONT_ENDS) == set()


def test_the_windows_import_neither_the_launcher_nor_the_command_line():
    modules = sorted((SEAR_DIR / "gui").glob("*.py"))
    assert len(modules) >= 5 and SEAR_DIR / "gui" / "simwindow.py" in modules
    for module in modules:
        assert _up(_imported(module), ("sear.cli", "sear.launcher")) == set(), module.name


def test_importing_the_loop_loads_no_front_end():
    code = ("import sys, sear.runtime; "
            "print(' '.join(sorted(m for m in sys.modules if m.startswith('sear.'))))")
    loaded = set(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                                timeout=120).stdout.split())
    assert {"sear.runtime", "sear.usercode", "sear.physics.world"} <= loaded  # the check sees what loads
    assert _up(loaded, FRONT_ENDS) == set()


def test_importing_the_launcher_loads_no_physics():
    # `sear` asks the launcher whether there is a display before opening the settings window.
    code = "import sys, sear.launcher; print(' '.join(sorted(sys.modules)))"
    loaded = set(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                                timeout=120).stdout.split())
    assert "sear.launcher" in loaded
    assert not {"pybullet", "numpy", "sear.runtime", "sear.gui"} & loaded
