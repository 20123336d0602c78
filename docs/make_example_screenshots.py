"""Screenshots of the simulation window running the example programs (docs/examples.md).

    xvfb-run -a -s "-screen 0 1366x768x24" python docs/make_example_screenshots.py [NAME ...]

Each example's window at the size it opens at on that screen (Qt's settings in a temporary folder, so no
remembered layout is used or changed), its user code run for a chosen stretch of simulated time, the
camera looking down on the room; saved as docs/images/example-NAME.png.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pyqtgraph import Vector  # noqa: E402
from PySide6.QtCore import Qt, QTimer  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from sear.gui.app import configure_qt  # noqa: E402
from sear.loading import load_project  # noqa: E402
from sear.runtime.simulation import Simulation  # noqa: E402

SHOTS = {  # name: (project, simulated seconds, camera centre (x, y, z), distance, elevation, azimuth, plots)
    "occupancy_grid": ("occupancy_grid/occupancy_grid.prj", 24.0, (0.0, 0.0, 0.0), 11.0, 60, -90, ()),
    "range_ring": ("range_ring/range_ring.prj", 12.0, (0.0, 0.0, 0.0), 12.0, 60, -90, ()),
    "wall_following": ("wall_following/wall_following.prj", 30.0, (0.0, 0.0, 0.0), 13.0, 60, -90,
                       ("right_front.distance", "front.distance")),
    "gps_waypoints": ("gps_waypoints/gps_waypoints.prj", 40.0, (0.0, 5.0, 0.0), 18.0, 50, -90, ()),
}
"""`plots`: the fields ticked in the Plots dock; none: the dock is closed (the scan or grid gets its room)."""


def shoot(app: QApplication, name: str, out: Path) -> None:
    from sear.gui.simwindow import SimulationWindow

    project, seconds, centre, distance, elevation, azimuth, plots = SHOTS[name]
    simulation = Simulation(load_project(ROOT / "examples" / project), seed=1, output=lambda text: None)
    window = SimulationWindow(simulation)
    fields = window.plots.fields_list
    for i in range(fields.count()):
        fields.item(i).setCheckState(Qt.CheckState.Checked if fields.item(i).text() in plots
                                     else Qt.CheckState.Unchecked)
    if not plots:
        window.plots_dock.close()
    window.commands["rays"].setChecked(name in ("range_ring", "wall_following"))
    window.show()
    window.start()
    window.timer.stop()  # stepped by hand to the chosen moment
    window.start_user_code()
    window.advance(seconds)
    window.cameras.box.setCurrentIndex(window.cameras.box.findData("free"))
    window.view.setCameraPosition(pos=Vector(*centre), distance=distance, elevation=elevation, azimuth=azimuth)
    window.draw()
    window.set_paused(True)
    done = []

    def grab() -> None:
        window.draw()
        app.processEvents()
        out.parent.mkdir(parents=True, exist_ok=True)
        window.grab().save(str(out))
        print(out)
        window.close()
        simulation.close()
        done.append(True)
        app.quit()

    QTimer.singleShot(800, grab)
    app.exec()


def main(names: list[str]) -> int:
    names = names or list(SHOTS)
    if len(names) > 1:  # one process each: a window saves its layout on closing, and the next would open so
        return max(subprocess.call([sys.executable, __file__, name]) for name in names)
    os.environ["XDG_CONFIG_HOME"] = tempfile.mkdtemp(prefix="sear-screenshots-")  # never the user's settings
    configure_qt()
    app = QApplication(sys.argv[:1])
    shoot(app, names[0], ROOT / "docs" / "images" / f"example-{names[0]}.png")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
