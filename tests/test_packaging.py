"""The desktop entry and icon in packaging/ (issue 13 item 12): the entry starts the `sear` command, names
the icon that is there, and its StartupWMClass is the class the windows really have (read back with xprop)."""

from __future__ import annotations

import configparser
import os
import shutil
import subprocess
import sys
import time
import tomllib
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGING = ROOT / "packaging"


def _entry() -> configparser.SectionProxy:
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]  # keys are case-sensitive
    parser.read(PACKAGING / "sear.desktop", encoding="utf-8")
    return parser["Desktop Entry"]


def test_desktop_entry_starts_the_sear_command_with_its_icon():
    entry = _entry()
    assert entry["Type"] == "Application"
    assert entry["Name"] == "SEAR"
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert entry["Exec"].split()[0] in scripts
    assert entry["Icon"] == "sear" and entry["StartupWMClass"] == "sear"
    assert entry["Categories"].endswith(";")
    svg = ET.parse(PACKAGING / "sear.svg").getroot()
    assert svg.tag.endswith("svg") and svg.get("viewBox") == "0 0 256 256"


def test_icons_are_square_pngs():
    from PySide6.QtGui import QImage

    for path, size in ((PACKAGING / "sear.png", 256), (ROOT / "sear" / "data" / "sear.png", 128)):
        image = QImage(str(path))
        assert (image.width(), image.height()) == (size, size), path
        assert image.hasAlphaChannel()
        corner, centre = image.pixelColor(0, 0), image.pixelColor(size // 2, size // 2)
        assert corner.alpha() == 0 and centre.alpha() == 255  # a rounded tile, drawn


@pytest.mark.skipif(shutil.which("xprop") is None or shutil.which("xdotool") is None
                    or os.environ.get("QT_QPA_PLATFORM") != "xcb", reason="needs X11 (xprop, xdotool)")
def test_the_sear_commands_window_has_the_desktop_entrys_class(tmp_path, demo_copy):
    """Starts the real `sear PROJECT` (the settings window), finds its window by the entry's class and reads
    the window's WM_CLASS and icon back from the X server."""
    wm_class = _entry()["StartupWMClass"]
    env = {k: v for k, v in os.environ.items() if k != "RESOURCE_NAME"}
    process = subprocess.Popen([sys.executable, "-c", "import sys; from sear.cli import main; sys.exit(main())",
                                str(demo_copy / "demo.prj")], env=env, cwd=tmp_path,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        found = ""
        deadline = time.monotonic() + 60
        while not found and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.5)
            found = subprocess.run(["xdotool", "search", "--onlyvisible", "--class", wm_class],
                                   capture_output=True, text=True, timeout=30, check=False).stdout.split()
            found = found[0] if found else ""
        assert found, "no window of class sear appeared"
        props = subprocess.run(["xprop", "-id", found, "WM_CLASS", "_NET_WM_ICON"], capture_output=True, text=True,
                               check=True, timeout=30).stdout
        assert f'WM_CLASS(STRING) = "{wm_class}", "{wm_class}"' in props
        assert "_NET_WM_ICON(CARDINAL) = " in props and "not found" not in props  # the icon is set
    finally:
        process.terminate()
        process.wait(timeout=30)
