"""The files SEAR ships inside its package, found with importlib.resources (never through the source tree).

    sear/data/demo/         the demo project: demo.prj, sensors.xml, demo_code.py and its model files
                            (made by `python -m sear.demo DIR`; tests/test_demo.py checks they match)
    sear/data/templates/    user_code.py and simulator_script.py (Code Setup > Create New)
    sear/data/sensor_presets.json   datasheet presets of the sensor wizard

The repository's `assets/demo` and `templates` are links to these folders, so an installed SEAR and a
checkout read the same files.
"""

from __future__ import annotations

from fnmatch import fnmatch
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

from sear.errors import SearError

DEMO_PROJECT_FILE = "demo.prj"
_SKIPPED = ("__pycache__", "*.bak", "*.csv", "*.npz", ".*.tmp")
"""Never copied out: Python's caches, and the backups and logs a run of the demo in a checkout leaves."""


def packaged(*parts: str) -> Traversable:
    """The shipped file or folder sear/data/<parts...> (it may not exist: check before reading)."""
    return resources.files("sear").joinpath("data", *parts)


def demo_folder() -> Traversable:
    """The bundled demo project's folder (read it; `copy_demo` makes a copy to change)."""
    return packaged("demo")


def demo_project() -> Path:
    """The bundled demo project file, on disk, to open or run where it is installed (read-only).

    pip installs SEAR as files, so the package's data are files; a SEAR imported from a zip archive
    has no demo on disk to run in place (`sear new` still copies it out)."""
    project = demo_folder().joinpath(DEMO_PROJECT_FILE)
    if not isinstance(project, Path) or not project.is_file():
        raise SearError(f"the bundled demo project is not installed as a file ({project}); "
                        "reinstall SEAR with pip, or make a copy with `sear new DIR`.")
    return project


def copy_tree(source: Traversable, target: Path) -> list[Path]:
    """Copy the shipped folder `source` into `target` (created if needed), byte for byte and recursively,
    leaving out the _SKIPPED names; returns the files written."""
    target.mkdir(parents=True, exist_ok=True)
    written = []
    for entry in sorted(source.iterdir(), key=lambda e: e.name):
        if any(fnmatch(entry.name, pattern) for pattern in _SKIPPED):
            continue
        if entry.is_dir():
            written += copy_tree(entry, target / entry.name)
        else:
            (target / entry.name).write_bytes(entry.read_bytes())
            written.append(target / entry.name)
    return written


def copy_demo(target: Path) -> list[Path]:
    """Copy the bundled demo project into the folder `target`; returns the files written."""
    return copy_tree(demo_folder(), target)
