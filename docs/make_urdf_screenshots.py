"""Screenshots of the Robot Body Model tab with a URDF, for docs/urdf.md.

    xvfb-run -a -s "-screen 0 1366x768x24" python docs/make_urdf_screenshots.py [OUT_DIR]

Builds a project in a temporary folder with copies of pybullet_data's Husky and racecar and of the diffbot
of docs/urdf.md (its wheels moved forward into the bumper), and saves, from the Project Settings window at
the size it opens at on that screen (Qt's settings go to a temporary folder):

- urdf-husky-tree.png: the Husky's links and joints, its top plate chosen (highlighted in the preview);
- urdf-racecar-wheels.png: the racecar's wheels and steering joints as proposed, the left front wheel chosen;
- urdf-report.png: the collision report of the diffbot whose wheels overlap its bumper.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from PySide6.QtWidgets import QApplication  # noqa: E402

from sear.gui.app import configure_qt  # noqa: E402


def diffbot_overlapping() -> str:
    """docs/urdf.md's diffbot with its wheels moved forward to x = 0.17 m, into the bumper."""
    text = (ROOT / "docs" / "urdf.md").read_text(encoding="utf-8")
    block = re.findall(r"```xml\n(.*?)```", text, flags=re.S)[0]
    return block.replace('xyz="0.08 0.18 -0.02"', 'xyz="0.17 0.18 -0.02"').replace(
        'xyz="0.08 -0.18 -0.02"', 'xyz="0.17 -0.18 -0.02"')


def main(out: Path) -> int:
    import pybullet_data

    from sear.gui.settings.window import SettingsWindow
    from sear.starter import create_new_project

    out.mkdir(parents=True, exist_ok=True)
    os.environ["XDG_CONFIG_HOME"] = tempfile.mkdtemp(prefix="sear-screenshots-")  # never the user's settings
    configure_qt()
    app = QApplication(sys.argv[:1])
    folder = Path(tempfile.mkdtemp(prefix="sear-urdf-")) / "robots"
    project = create_new_project(folder / "robots.prj")
    data = Path(pybullet_data.getDataPath())
    for robot in ("husky", "racecar"):
        shutil.copytree(data / robot, folder / robot)
    (folder / "diffbot").mkdir()
    (folder / "diffbot" / "diffbot.urdf").write_text(diffbot_overlapping(), encoding="utf-8")
    window = SettingsWindow(project)
    window.show()
    window.tabs.setCurrentIndex(1)

    def settle() -> None:
        for _ in range(10):
            app.processEvents()

    def shoot(urdf: str, page: int, name: str, choose: Callable[[], object]) -> None:
        window.body_tab.body_file.edit.setText(urdf)
        window.body_tab.body_file.edit.editingFinished.emit()
        window.body_tab.urdf_panel.pages.setCurrentIndex(page)
        choose()
        settle()
        window.grab().save(str(out / name))
        print(out / name)

    panel = window.body_tab.urdf_panel
    shoot("husky/husky.urdf", 0, "urdf-husky-tree.png", lambda: panel.select_link("top_plate_link"))

    def choose_wheel() -> None:
        table = panel.wheel_table
        table.selectRow(next(r for r in range(table.rowCount()) if table.item(r, 0).text() == "left_front_wheel_joint"))

    shoot("racecar/racecar.urdf", 1, "urdf-racecar-wheels.png", choose_wheel)
    shoot("diffbot/diffbot.urdf", 3, "urdf-report.png", lambda: panel.report_list.setCurrentRow(0))
    window.dirty = False
    window.close()
    shutil.rmtree(folder.parent, ignore_errors=True)
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", type=Path, default=ROOT / "docs" / "images")
    sys.exit(main(parser.parse_args().out))
