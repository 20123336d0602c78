"""Simulation window benchmark: frames per second drawn while simulating the demo in real time, and how
much the window slows the simulation compared with the same run headless, measured in one run.

    xvfb-run -a -s "-screen 0 1600x1000x24" python bench/bench_window.py [--seconds 10]

Three measurements on the demo with its user code running: (1) headless ticks as fast as possible
(the baseline), (2) the window in real-time mode for the given wall seconds (frames per second, and
whether the physics kept real time), (3) the window as fast as possible (simulated seconds per wall
second, as a ratio of the headless baseline). On software OpenGL (Mesa llvmpipe under Xvfb).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from PySide6.QtCore import QTimer  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from sear.gui.app import configure_qt  # noqa: E402
from sear.project import Project  # noqa: E402
from sear.resources import demo_project  # noqa: E402
from sear.runtime import Simulation  # noqa: E402


def _simulation() -> Simulation:
    simulation = Simulation(Project.load(demo_project()), seed=0, output=lambda text: None)
    simulation.start_user_code()
    return simulation


def main() -> int:
    from sear.gui.simwindow import SimulationWindow

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0, help="wall seconds per window measurement")
    args = parser.parse_args()
    configure_qt()
    app = QApplication(sys.argv[:1])

    headless = _simulation()
    start = time.perf_counter()
    headless.run(args.seconds * 2)
    headless_rate = headless.world.time / (time.perf_counter() - start)
    headless.close()

    results = {}
    for mode in ("real time", "fast"):
        simulation = _simulation()
        window = SimulationWindow(simulation)
        window.resize(1400, 880)
        window.show()
        window.commands["rays"].setChecked(True)
        window.commands["realtime"].setChecked(mode == "real time")
        # The window as a user has it: its own 15 ms timer runs frame() (simulate, then draw once) inside
        # Qt's event loop; count those frames.
        frames_done = []
        window.timer.timeout.connect(lambda done=frames_done: done.append(1))
        window.start()
        start = time.perf_counter()
        sim0 = simulation.world.time
        QTimer.singleShot(int(args.seconds * 1000), app.quit)
        app.exec()
        wall = time.perf_counter() - start
        frames = len(frames_done)
        results[mode] = (frames / wall, (simulation.world.time - sim0) / wall)
        window.timer.stop()
        window.close()
        simulation.close()
    fps_rt, rtf_rt = results["real time"]
    fps_fast, rtf_fast = results["fast"]
    print(f"demo, user code running, sensor rays drawn, {args.seconds:g} wall seconds per measurement")
    print(f"  headless (no window), as fast as possible: {headless_rate:6.2f} simulated s per wall s")
    print(f"  window, real time:   {fps_rt:5.1f} frames/s (target >= 30); physics at {rtf_rt:4.2f}x real time "
          f"(target 1.0)")
    print(f"  window, as fast as possible: {fps_fast:5.1f} frames/s, {rtf_fast:6.2f} simulated s per wall s = "
          f"{rtf_fast / headless_rate:4.2f} of the headless rate (the window's slow-down: "
          f"{headless_rate / rtf_fast:4.2f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
