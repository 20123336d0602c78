"""Screenshot of the replay window on a recording of the demo (docs/replay.md).

    xvfb-run -a -s "-screen 0 1366x768x24" python docs/make_replay_screenshot.py [OUT.png]

The demo is run for 20 simulated seconds with its user code and recorded (MCAP) into a temporary folder;
the replay window opens on it at the size it opens at on that screen (Qt's settings in a temporary
folder), at t = 12.5 s, 4x chosen, the Follow camera behind the robot.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from PySide6.QtCore import QTimer  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from sear import resources  # noqa: E402
from sear.gui.app import configure_qt  # noqa: E402
from sear.project import Project  # noqa: E402
from sear.recording.writer import Recorder  # noqa: E402
from sear.runtime.simulation import Simulation  # noqa: E402


def record(folder: Path) -> Path:
    """The demo run for 20 s, recorded into folder/demo-run.mcap."""
    resources.copy_demo(folder / "demo")
    path = folder / "demo-run.mcap"
    simulation = Simulation(Project.load(folder / "demo" / "demo.prj"), seed=1, observer=Recorder(path))
    try:
        simulation.start_user_code()
        simulation.run(20.0)
    finally:
        simulation.close()
    return path


def main(out: Path) -> int:
    from sear.gui.replay import open_replay

    os.environ["XDG_CONFIG_HOME"] = tempfile.mkdtemp(prefix="sear-screenshots-")  # never the user's settings
    configure_qt()
    app = QApplication(sys.argv[:1])
    folder = Path(tempfile.mkdtemp(prefix="sear-replay-shot-"))
    window = open_replay(record(folder))
    window.show()
    window.start()
    window.set_speed(4.0)
    window.seek(12.5)

    def shoot() -> None:
        window.timer.stop()
        window.draw()
        window.refresh_docks()
        app.processEvents()
        out.parent.mkdir(parents=True, exist_ok=True)
        window.grab().save(str(out))
        print(out)
        app.quit()

    QTimer.singleShot(1500, shoot)
    app.exec()
    window.simulation.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs" / "images" / "replay.png"))
