"""Simulation window benchmark: frames per second drawn while simulating the demo in real time with the
sensor rays shown, and how much the window slows the simulation compared with the same run headless.

    xvfb-run -a -s "-screen 0 1600x1000x24" python bench/bench_window.py [--seconds 8] [--rounds 3] [--presets]

On software OpenGL (Mesa llvmpipe under Xvfb), at 1366×740 (a laptop screen). Each round runs, one after the
other so that a change in the machine's load hits them alike: (1) the demo headless as fast as possible (the
baseline, and a gauge of the load), (2) the window in real time with rays, (3) the same without rays, (4) the
window as fast as possible with rays. Printed per round and as medians: frames/s, the process's CPU time per
frame (all threads: Mesa's rasterizer threads too; less sensitive to other programs than frames/s), the part
of it spent simulating, and the simulated seconds per wall second. Target: ≥ 30 frames/s at 1.0× real time
with rays on an idle machine. With --presets the demo carries the wizard's Velodyne VLP-16 and RealSense D435
presets as well (built as bench/bench_core.py's `vlp16` and `d435` rows build them; issue 23's window line:
real time with >= 15 frames/s).
"""

from __future__ import annotations

import argparse
import atexit
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from PySide6.QtCore import QTimer  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from sear.gui.app import configure_qt  # noqa: E402
from sear.project import Project  # noqa: E402
from sear.resources import demo_project  # noqa: E402
from sear.runtime.simulation import Simulation  # noqa: E402

SIZE = (1366, 740)
"""The window's size in the benchmark (pixels): a 1366×768 laptop screen less a title bar."""


PROJECT = demo_project()
"""The project every run loads: the bundled demo, or (--presets) a copy of it with the 3-D sensor presets."""


def _simulation() -> Simulation:
    simulation = Simulation(Project.load(PROJECT), seed=0, output=lambda text: None)
    simulation.start_user_code()
    return simulation


def headless_rate(seconds: float) -> float:
    """Simulated seconds per wall second of the demo run headless for `seconds` simulated seconds."""
    simulation = _simulation()
    start = time.perf_counter()
    simulation.run(seconds)
    rate = simulation.world.time / (time.perf_counter() - start)
    simulation.close()
    return rate


def window_run(app: QApplication, seconds: float, *, realtime: bool, rays: bool) -> dict[str, float]:
    """Run the window as a user has it for `seconds` wall seconds: its own timer runs frame() (simulate,
    then draw once) inside Qt's event loop. Frames/s, CPU ms per frame (all threads), of which simulating,
    and simulated seconds per wall second."""
    from sear.gui.simwindow import SimulationWindow

    simulation = _simulation()
    window = SimulationWindow(simulation)
    window.resize(*SIZE)
    window.show()
    window.commands["rays"].setChecked(rays)
    window.commands["realtime"].setChecked(realtime)
    simulating = [0.0]
    advance = window._advance_ticks

    def timed_advance(*args, **kwargs) -> None:
        start = time.thread_time()
        advance(*args, **kwargs)
        simulating[0] += time.thread_time() - start

    window._advance_ticks = timed_advance  # type: ignore[method-assign]
    frames = [0]
    window.timer.timeout.connect(lambda: frames.__setitem__(0, frames[0] + 1))
    window.start()
    for _ in range(20):  # let the window settle (first paint, shader compiles) before measuring
        app.processEvents()
    frames[0], simulating[0] = 0, 0.0
    start, cpu, sim0 = time.perf_counter(), time.process_time(), simulation.world.time
    QTimer.singleShot(int(seconds * 1000), app.quit)
    app.exec()
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    count = max(frames[0], 1)
    result = {"fps": frames[0] / wall, "cpu_ms": 1000 * cpu / count, "sim_ms": 1000 * simulating[0] / count,
              "rate": (simulation.world.time - sim0) / wall}
    window.timer.stop()
    window.close()
    simulation.close()
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=8.0, help="wall seconds per window measurement")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of the four measurements, alternated")
    parser.add_argument("--project", type=Path,
                        help="run this project instead of the demo (e.g. a big terrain: bench/bench_terrain.py --keep)")
    parser.add_argument("--presets", action="store_true",
                        help="add the wizard's VLP-16 and D435 presets to the demo (issue 23's window line)")
    args = parser.parse_args()
    global PROJECT
    if args.project is not None:
        PROJECT = args.project.resolve()
    if args.presets:
        sys.path.insert(0, str(ROOT / "bench"))
        from bench_core import _demo_copy, _preset_fields, _sensor

        vlp_kind, vlp = _preset_fields("Velodyne VLP-16")
        d435_kind, d435 = _preset_fields("Intel RealSense D435")
        folder = Path(tempfile.mkdtemp(prefix="sear-bench-window-"))
        atexit.register(shutil.rmtree, folder, True)
        PROJECT = _demo_copy(folder / "demo", [_sensor(vlp_kind, "vlp16", vlp, 0.25),
                                               _sensor(d435_kind, "d435", d435, 0.2)])
    configure_qt()
    app = QApplication(sys.argv[:1])
    runs: dict[str, list] = {"headless": [], "rays": [], "no rays": [], "fast": []}
    extra = " + VLP-16 + D435 presets" if args.presets else ""
    print(f"{PROJECT.name}{extra}, user code running, window {SIZE[0]}x{SIZE[1]}, {args.seconds:g} wall seconds per "
          f"measurement, {os.cpu_count()} CPUs")
    for round_ in range(1, args.rounds + 1):
        load = os.getloadavg()[0]
        runs["headless"].append(headless_rate(2 * args.seconds))
        runs["rays"].append(window_run(app, args.seconds, realtime=True, rays=True))
        runs["no rays"].append(window_run(app, args.seconds, realtime=True, rays=False))
        runs["fast"].append(window_run(app, args.seconds, realtime=False, rays=True))
        rays, plain, fast = runs["rays"][-1], runs["no rays"][-1], runs["fast"][-1]
        print(f"round {round_} (load average {load:4.1f}): headless {runs['headless'][-1]:5.2f} sim s/s | "
              f"real time + rays {rays['fps']:5.1f} frames/s, {rays['cpu_ms']:5.1f} ms CPU/frame "
              f"({rays['sim_ms']:4.1f} simulating), {rays['rate']:4.2f}x | no rays {plain['fps']:5.1f} frames/s, "
              f"{plain['cpu_ms']:5.1f} ms | fast {fast['fps']:5.1f} frames/s, {fast['rate']:5.2f} sim s/s",
              flush=True)

    def median(name: str, key: str) -> float:
        return statistics.median(run[key] for run in runs[name])

    headless = statistics.median(runs["headless"])
    print(f"medians (load average now {os.getloadavg()[0]:.1f}):")
    print(f"  headless (no window), as fast as possible: {headless:6.2f} simulated s per wall s")
    for name in ("rays", "no rays"):
        print(f"  window, real time, {name + ':':8s} {median(name, 'fps'):5.1f} frames/s (target >= 30), "
              f"{median(name, 'cpu_ms'):5.1f} ms CPU per frame ({median(name, 'sim_ms'):4.1f} simulating); "
              f"physics at {median(name, 'rate'):4.2f}x real time (target 1.0)")
    fast = median("fast", "rate")
    print(f"  window, as fast as possible, rays: {median('fast', 'fps'):5.1f} frames/s, {fast:6.2f} simulated s "
          f"per wall s = {fast / headless:4.2f} of the headless rate (the window's slow-down: "
          f"{headless / fast:4.2f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
