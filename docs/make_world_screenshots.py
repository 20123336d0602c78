"""Screenshots of the World tab (its 3-D editor, palette and property panel) and its scene tree.

    xvfb-run -a -s "-screen 0 1366x768x24" python docs/make_world_screenshots.py [OUT_DIR]

Copies the bundled demo into a temporary folder, builds a small room in it with the tab's own palette
(four walls, a table, a shelf, a box and a tree, placed and turned through the model as a user's drags
would), selects a wall and saves world-tab.png (the whole window) and world-scene-tree.png (the tree and
the property panel) into OUT_DIR (default docs/images). Nothing of the user's is touched: Qt's settings go
to a temporary folder.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from PySide6.QtWidgets import QApplication  # noqa: E402

from sear.gui.app import configure_qt  # noqa: E402
from sear.project import Project  # noqa: E402
from sear.resources import copy_demo  # noqa: E402

ROOM = [  # kind, x, y, yaw: a 10 m x 8 m room round the robot, furnished
    ("wall", 0.0, 4.0, 0.0), ("wall", 0.0, -4.0, 0.0), ("wall", 5.0, 0.0, math.pi / 2),
    ("wall", -5.0, 0.0, math.pi / 2), ("table", -3.0, 2.5, 0.0), ("shelf", 3.5, -3.2, 0.0),
    ("box", 2.0, 1.5, math.pi / 6), ("tree", -8.0, -6.0, 0.0),
]


def main(out: Path) -> int:
    from sear.gui.settings.window import SettingsWindow

    out.mkdir(parents=True, exist_ok=True)
    os.environ["XDG_CONFIG_HOME"] = tempfile.mkdtemp(prefix="sear-screenshots-")  # never the user's settings
    configure_qt()
    app = QApplication(sys.argv[:1])
    folder = Path(tempfile.mkdtemp(prefix="sear-world-shots-"))
    copy_demo(folder / "demo")
    project = Project.load(folder / "demo" / "demo.prj")
    window = SettingsWindow(project)
    window.show()
    window.tabs.setCurrentWidget(window.tabs.widget(window.tab_pages.index(window.world_tab)))
    tab = window.world_tab
    for _ in range(5):
        app.processEvents()
    for kind, x, y, yaw in ROOM:
        item = tab.add(kind)
        item.x, item.y = x, y
        if hasattr(item, "yaw"):
            item.yaw = yaw
        if kind == "wall":
            item.length = 10.0 if yaw == 0.0 else 8.0
    tab.refresh()
    tab.select(("obstacle", "wall1"))
    tab.view.look_at((0.0, 0.0, 0.0), 16.0)
    for _ in range(10):
        app.processEvents()
    saved = [out / "world-tab.png", out / "world-scene-tree.png"]
    window.grab().save(str(saved[0]))
    tab.tree.expandAll()
    side = tab.tree.parentWidget()  # the splitter of the tree and the property panel
    side.parentWidget().setSizes([420, 640])  # room for the tree's columns in this picture
    side.setSizes([470, 190])
    for _ in range(10):
        app.processEvents()
    side.grab().save(str(saved[1]))
    for path in saved:
        print(f"wrote {path}")
    window.dirty = False
    window.close()
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out", nargs="?", type=Path, default=ROOT / "docs" / "images")
    sys.exit(main(parser.parse_args().out))
