"""Screenshots of the Project Settings window (every tab) and the Sensor Wizard, for the user guide.

    xvfb-run -a -s "-screen 0 1600x1000x24" python docs/make_screenshots.py [OUT_DIR]

Opens the bundled demo project and saves settings-<tab>.png and wizard-<tab>.png (default docs/images).
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from PySide6.QtCore import QTimer  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from sear.gui.app import configure_qt  # noqa: E402
from sear.project import Project  # noqa: E402
from sear.resources import demo_project  # noqa: E402


def main(out: Path) -> int:
    from sear.gui.settings import SettingsWindow
    from sear.gui.wizard import SensorWizard

    out.mkdir(parents=True, exist_ok=True)
    configure_qt()
    app = QApplication(sys.argv[:1])
    project = Project.load(demo_project())
    window = SettingsWindow(project)
    window.resize(1280, 820)
    window.show()
    saved: list[Path] = []

    def settle() -> None:
        for _ in range(5):
            app.processEvents()

    def shoot() -> None:
        for i in range(window.tabs.count()):
            window.tabs.setCurrentIndex(i)
            settle()
            name = window.tabs.tabText(i).lower().replace(" ", "-")
            path = out / f"settings-{name}.png"
            window.grab().save(str(path))
            saved.append(path)
        wizard = SensorWizard(project, window)
        wizard.show()
        for i in range(wizard.tabs.count()):
            wizard.tabs.blockSignals(True)
            wizard.tabs.setCurrentIndex(i)
            wizard.tabs.blockSignals(False)
            form = wizard.forms[i]
            if form.presets:  # show a part's datasheet figures, as a user picking it would see them
                form.model_combo.setCurrentIndex(1)
                form._preset_chosen(1)
                form.name_edit.setText(f"my_{form.cls.TYPE}")
            settle()
            path = out / f"wizard-{wizard.tabs.tabText(i).lower()}.png"
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
    sys.exit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs" / "images"))
