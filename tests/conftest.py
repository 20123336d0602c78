"""Test set-up shared by the whole suite.

GUI tests need a display with OpenGL: Qt's offscreen platform has none. When no DISPLAY is set, a
private Xvfb server is started for the session (from Debian's xvfb, installed by `make test`), and Qt
uses its xcb platform on it.

Tests never write into the repository or the user's settings: the demo is copied into tmp_path
(`demo_copy`), Qt's settings go to a temporary XDG_CONFIG_HOME (also for the processes tests start), and
hypothesis keeps its caches in the system's temporary folder.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
from hypothesis import settings as hypothesis_settings
from hypothesis.configuration import set_hypothesis_home_dir

from sear import resources

# Hypothesis keeps its caches (and would keep its example database) in ./.hypothesis: in the system's
# temporary folder instead, and no database, so a test run leaves the repository as it was.
set_hypothesis_home_dir(Path(tempfile.gettempdir()) / "sear-tests-hypothesis")
hypothesis_settings.register_profile("sear-tests", database=None)
hypothesis_settings.load_profile("sear-tests")


def _start_xvfb() -> None:
    """Start Xvfb on a free display for this test session.

    Xvfb must outlive the Qt application, which Python tears down only at interpreter exit (Qt aborts
    with status 1 when its X connection breaks first), so a small shell watcher stops Xvfb once this
    process has gone instead of pytest_unconfigure.
    """
    if os.environ.get("DISPLAY") or not shutil.which("Xvfb"):
        return
    for number in range(90, 140):
        if Path(f"/tmp/.X{number}-lock").exists():
            continue
        watcher = (f"Xvfb :{number} -screen 0 1600x1000x24 -nolisten tcp +extension GLX >/dev/null 2>&1 & x=$!; "
                   f"while kill -0 {os.getpid()} 2>/dev/null && kill -0 $x 2>/dev/null; do sleep 0.5; done; "
                   "kill $x 2>/dev/null")
        # The shell started here returns at once, leaving the watcher in the background (no child of this
        # process is left running, so none is reported as leaked).
        subprocess.run(["sh", "-c", f"( {watcher} ) >/dev/null 2>&1 &"], stdin=subprocess.DEVNULL,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True, check=True)
        for _ in range(100):
            if Path(f"/tmp/.X11-unix/X{number}").exists():
                os.environ["DISPLAY"] = f":{number}"
                return
            time.sleep(0.05)


def pytest_configure(config: pytest.Config) -> None:
    _start_xvfb()
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
