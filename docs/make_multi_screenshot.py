"""Screenshot of the simulation window with two robots (examples/two_robots_avoid) as they pass each other,
the second robot chosen with Tab (the status bar says so) and its sensor rays shown.

    xvfb-run -a -s "-screen 0 1366x768x24" python docs/make_multi_screenshot.py [OUT.png]
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pyqtgraph import Vector  # noqa: E402
from PySide6.QtCore import Qt, QTimer  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from sear.gui.app import configure_qt  # noqa: E402
from sear.project import Project  # noqa: E402
from sear.runtime.simulation import Simulation  # noqa: E402


def main(out: Path) -> int:
    from sear.gui.simwindow import SimulationWindow

    os.environ["XDG_CONFIG_HOME"] = tempfile.mkdtemp(prefix="sear-screenshots-")  # never the user's settings
    configure_qt()
    app = QApplication(sys.argv[:1])
    folder = Path(tempfile.mkdtemp(prefix="sear-example-")) / "two_robots_avoid"
    shutil.copytree(ROOT / "examples" / "two_robots_avoid", folder)
    simulation = Simulation(Project.load(folder / "two_robots.prj"), seed=1)
    window = SimulationWindow(simulation)
    window.show()
    window.start()
    window.timer.stop()  # stepped by hand to the chosen moment below
    window.start_user_code()
    window.commands["rays"].setChecked(True)
    for index in range(window.plots.fields_list.count()):  # both robots' sonar: the plot shows them meet
        item = window.plots.fields_list.item(index)
        item.setCheckState(Qt.CheckState.Checked if item.text().endswith("front_sonar.distance")
                           else Qt.CheckState.Unchecked)
    window.advance(4.9)  # both swerving to their right, about to pass
    window.next_robot()
    window.cameras.box.setCurrentIndex(window.cameras.box.findData("free"))
    middle = sum(run.state.position for run in simulation.robots) / len(simulation.robots)
    window.view.setCameraPosition(pos=Vector(*middle), distance=6.5, elevation=35, azimuth=-115)
    window.timer.start(15)

    def shoot() -> None:
        window.timer.stop()
        window.draw()
        app.processEvents()
        out.parent.mkdir(parents=True, exist_ok=True)
        window.grab().save(str(out))
        print(out)
        app.quit()

    QTimer.singleShot(1500, shoot)
    app.exec()
    simulation.close()
    shutil.rmtree(folder.parent, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs" / "images" / "multi-robot-window.png"))
