"""Test set-up shared by the whole suite.

GUI tests need a display with OpenGL: Qt's offscreen platform has none. When no DISPLAY is set, a
private Xvfb server is started for the session (from Debian's xvfb, installed by `make test`), and Qt
uses its xcb platform on it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest


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
        script = (f"Xvfb :{number} -screen 0 1600x1000x24 -nolisten tcp +extension GLX >/dev/null 2>&1 & x=$!; "
                  f"while kill -0 {os.getpid()} 2>/dev/null && kill -0 $x 2>/dev/null; do sleep 0.5; done; "
                  "kill $x 2>/dev/null")
        subprocess.Popen(["sh", "-c", script], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, start_new_session=True)
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
    # Keep QSettings written by GUI tests out of the user's real configuration.
    os.environ.setdefault("XDG_CONFIG_HOME", str(Path(config.rootpath) / ".pytest_cache" / "xdg-config"))
    from sear.gui.app import configure_qt

    configure_qt()


REPO = Path(__file__).resolve().parent.parent
DEMO_DIR = REPO / "assets" / "demo"


@pytest.fixture(scope="session")
def demo_dir() -> Path:
    """The bundled demo project folder, its generated models present (read-only: copy it first).

    The models are (re)made by sear.demo when any is missing or older than sear/demo.py, so a bare
    `pytest` after a pull tests the current models, as `make test` does."""
    from sear.demo import DEMO_MODEL_FILES, write_demo_models

    made_by = (REPO / "sear" / "demo.py").stat().st_mtime
    models = [DEMO_DIR / name for name in DEMO_MODEL_FILES]
    if not all(m.exists() and m.stat().st_mtime >= made_by for m in models):
        write_demo_models(DEMO_DIR)
    return DEMO_DIR
