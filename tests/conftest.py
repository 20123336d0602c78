"""Test set-up shared by the whole suite.

GUI tests need a display with OpenGL: Qt's offscreen platform has none. Every process that runs tests (the
one pytest process, or each pytest-xdist worker) starts a private Xvfb server (tests/xserver.py; Debian's
xvfb, installed by `make test`) and Qt uses its xcb platform on it, so tests that press real keys in
parallel workers never share a display or its focus. Without Xvfb, a DISPLAY that is set is used.

Tests never write into the repository or the user's settings: the demo is copied into tmp_path
(`demo_copy`), Qt's settings go to a temporary XDG_CONFIG_HOME (also for the processes tests start), and
hypothesis keeps its caches in the system's temporary folder.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import settings as hypothesis_settings
from hypothesis.configuration import set_hypothesis_home_dir

from sear import resources
from tests import xserver

# Hypothesis keeps its caches (and would keep its example database) in ./.hypothesis: in the system's
# temporary folder instead, and no database, so a test run leaves the repository as it was.
set_hypothesis_home_dir(Path(tempfile.gettempdir()) / "sear-tests-hypothesis")
hypothesis_settings.register_profile("sear-tests", database=None)
hypothesis_settings.load_profile("sear-tests")
# numba caches the compiled tyre and ray kernels (sear/jit.py) under Python's bytecode prefix when one is
# set (make sets it to the venv), else beside sear/physics/tyre.py: in the system's temporary folder instead,
# shared by the test processes and the runs they start, so a test run leaves the repository as it was and
# compiles the kernels once per machine, not once per test.
if not sys.pycache_prefix:
    os.environ.setdefault("NUMBA_CACHE_DIR", str(Path(tempfile.gettempdir()) / "sear-tests-numba"))


def _runs_tests_here(config: pytest.Config) -> bool:
    """False in pytest-xdist's controller, which hands the tests to its workers and runs none itself."""
    return hasattr(config, "workerinput") or getattr(config.option, "dist", "no") == "no"


def pytest_configure(config: pytest.Config) -> None:
    if not _runs_tests_here(config):
        return  # the workers, started with this process's environment, set up their own
    if xserver.available():
        # Each process that runs tests has an X server of its own, also when a DISPLAY is set (xvfb-run,
        # a desktop): tests that press real keys or take the focus never share a display.
        os.environ["DISPLAY"] = xserver.start_for_this_process()
    if os.environ.get("DISPLAY"):
        os.environ.setdefault("QT_QPA_PLATFORM", "xcb")
    else:
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    os.environ.setdefault("LIBGL_ALWAYS_SOFTWARE", "1")
    # QSettings written by GUI tests (recent projects, window geometry) go to a folder of this session,
    # never to the user's configuration nor into the repository; removed when the session ends.
    config_home = tempfile.mkdtemp(prefix="sear-tests-config-")
    config.add_cleanup(lambda: shutil.rmtree(config_home, ignore_errors=True))
    os.environ["XDG_CONFIG_HOME"] = config_home
    from sear.gui.app import configure_qt

    configure_qt()


@pytest.fixture(autouse=True)
def own_config_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Each test's own XDG_CONFIG_HOME (for the processes it starts; Qt in this process may keep the
    session's): a window's geometry or docks saved by one test (the replay window's, say) must not open
    the next test's window at that size, which hid the Camera box in the toolbar's overflow."""
    folder = tmp_path_factory.mktemp("config")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(folder))
    return folder


@pytest.fixture(scope="session")
def demo_dir() -> Path:
    """The bundled demo project folder (sear/data/demo): read it only; `demo_copy` gives one to change."""
    return resources.demo_project().parent


@pytest.fixture
def demo_copy(tmp_path: Path) -> Path:
    """A copy of the bundled demo project in tmp_path/demo, made the way `sear new` makes one."""
    folder = tmp_path / "demo"
    resources.copy_demo(folder)
    return folder
