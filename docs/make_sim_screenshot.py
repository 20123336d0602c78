"""Screenshot of the simulation window driving the demo, with sensor rays and plots visible.

    xvfb-run -a -s "-screen 0 1600x1000x24" python docs/make_sim_screenshot.py [OUT.png]
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
from sear.runtime import Simulation  # noqa: E402


def main(out: Path) -> int:
    from sear.gui.simwindow import SimulationWindow

    configure_qt()
    app = QApplication(sys.argv[:1])
    simulation = Simulation(Project.load(demo_project()), seed=1)
    window = SimulationWindow(simulation)
    window.resize(1500, 900)
    window.show()
    window.start()
    window.timer.stop()  # stepped by hand to the chosen moment below
    window.start_user_code()
    window.commands["rays"].setChecked(True)
    window.advance(19.0)  # on the second leg, passing the tree at (6, 16) on its right
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
