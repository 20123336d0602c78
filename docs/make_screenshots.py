"""Screenshots of the Project Settings window (every tab) and the Sensor Wizard, for the user guide.

    xvfb-run -a -s "-screen 0 1366x768x24" python docs/make_screenshots.py [OUT_DIR] [--suffix S] [--first]

Opens the bundled demo project and saves settings-<tab>S.png and wizard-<tab>S.png (default docs/images),
each window at the size it opens at on that screen (fitted to it, nothing remembered: Qt's settings go to a
temporary folder). --first: only the first tab of each window. docs/make_all_screenshots.sh takes them all,
on a 1366×768 screen and on 1920×1080 at QT_SCALE_FACTOR=1.5.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from PySide6.QtCore import QTimer  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from sear.gui.app import configure_qt  # noqa: E402
from sear.project import Project  # noqa: E402
from sear.resources import demo_project  # noqa: E402


def main(out: Path, suffix: str = "", first: bool = False) -> int:
    from sear.gui.settings.window import SettingsWindow
    from sear.gui.wizard import SensorWizard

    out.mkdir(parents=True, exist_ok=True)
    os.environ["XDG_CONFIG_HOME"] = tempfile.mkdtemp(prefix="sear-screenshots-")  # never the user's settings
    configure_qt()
    app = QApplication(sys.argv[:1])
    project = Project.load(demo_project())
    window = SettingsWindow(project)
    window.show()
    saved: list[Path] = []

    def settle() -> None:
        for _ in range(5):
            app.processEvents()

    def shoot() -> None:
        for i in range(1 if first else window.tabs.count()):
            window.tabs.setCurrentIndex(i)
            settle()
            name = window.tabs.tabText(i).lower().replace(" ", "-")
            path = out / f"settings-{name}{suffix}.png"
            window.grab().save(str(path))
            saved.append(path)
        wizard = SensorWizard(project, window)
        wizard.show()
        for i in range(1 if first else wizard.tabs.count()):
            wizard.tabs.blockSignals(True)
            wizard.tabs.setCurrentIndex(i)
            wizard.tabs.blockSignals(False)
            form = wizard.forms[i]
            if form.presets:  # show a part's datasheet figures, as a user picking it would see them
                form.model_combo.setCurrentIndex(1)
                form._preset_chosen(1)
                form.name_edit.setText(f"my_{form.cls.TYPE}")
            settle()
            path = out / f"wizard-{wizard.tabs.tabText(i).lower().replace(' ', '-')}{suffix}.png"
            wizard.grab().save(str(path))
            saved.append(path)
        wizard.done(0)  # not close(): that would ask whether to discard the filled-in fields
        window.dirty = False
        window.close()
        app.quit()

    QTimer.singleShot(1500, shoot)
    app.exec()
    for path in saved:
        print(path)
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", type=Path, default=ROOT / "docs" / "images")
    parser.add_argument("--suffix", default="", help="added to each file name, e.g. -1.5x")
    parser.add_argument("--first", action="store_true", help="only the first tab of each window")
    args = parser.parse_args()
    sys.exit(main(args.out, args.suffix, args.first))
