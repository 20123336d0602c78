"""Screenshot of the simulation window driving the demo, with sensor rays and plots visible.

    xvfb-run -a -s "-screen 0 1366x768x24" python docs/make_sim_screenshot.py [OUT.png]

The window at the size it opens at on that screen (fitted to it; Qt's settings go to a temporary folder, so
no remembered layout is used or changed); the camera looks at the robot from behind its right shoulder.
"""

from __future__ import annotations

import math
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pyqtgraph import Vector  # noqa: E402
from PySide6.QtCore import QTimer  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from sear.gui.app import configure_qt  # noqa: E402
from sear.project import Project  # noqa: E402
from sear.resources import demo_project  # noqa: E402
from sear.runtime.simulation import Simulation  # noqa: E402
from sear.state import quaternion_to_euler  # noqa: E402


def main(out: Path) -> int:
    from sear.gui.simwindow import SimulationWindow

    os.environ["XDG_CONFIG_HOME"] = tempfile.mkdtemp(prefix="sear-screenshots-")  # never the user's settings
    configure_qt()
    app = QApplication(sys.argv[:1])
    simulation = Simulation(Project.load(demo_project()), seed=1)
    window = SimulationWindow(simulation)
    window.show()
    window.start()
    window.timer.stop()  # stepped by hand to the chosen moment below
    window.start_user_code()
    window.commands["rays"].setChecked(True)
    window.advance(19.0)  # on the second leg, passing the tree at (6, 16) on its right
    window.cameras.box.setCurrentIndex(window.cameras.box.findData("free"))
    state = simulation.state
    yaw = math.degrees(quaternion_to_euler(state.orientation)[2])
    window.view.setCameraPosition(pos=Vector(*state.position), distance=8.5, elevation=28, azimuth=yaw - 150)
    window.timer.start(15)  # then a moment in real time, so the status bar shows measured frames/s

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
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs" / "images" / "simulation.png"))
