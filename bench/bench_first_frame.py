"""Start-up benchmark (issue 24 item 5): wall seconds from starting `sear run PROJECT` to the simulation
window's first 3-D frame drawn, and the CPU seconds the process spent until then.

    xvfb-run -a -s "-screen 0 1366x768x24" python bench/bench_first_frame.py [--rounds 5] [PROJECT.prj]

Each round starts a fresh process (`python bench/bench_first_frame.py --child ...`) that runs `sear run` as
the command does, with one hook: when the 3-D view has painted its first frame the child prints the wall
time since the parent started it (passed in SEAR_BENCH_T0, a CLOCK_REALTIME stamp) and its own CPU time
(user + system, getrusage of the process and of its finished children), then closes the window. Printed per
round and as medians. Target: <= 3 s wall on an idle machine.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def child(project: str) -> int:
    """`sear run PROJECT` whose window reports its first frame, then closes."""
    import resource

    sys.path.insert(0, str(ROOT))
    from PySide6.QtCore import QTimer

    from sear.cli import main
    from sear.gui import simview

    t0 = float(os.environ["SEAR_BENCH_T0"])
    paint = simview.SimView.paintGL
    done: list[bool] = []

    def painted(self: simview.SimView, *args, **kwargs) -> None:
        paint(self, *args, **kwargs)
        if not done:
            done.append(True)
            wall = time.time() - t0
            own = resource.getrusage(resource.RUSAGE_SELF)
            print(f"FIRST_FRAME wall={wall:.3f} cpu={own.ru_utime + own.ru_stime:.3f}", flush=True)
            QTimer.singleShot(0, self.window().close)

    simview.SimView.paintGL = painted  # type: ignore[method-assign]
    return main(["run", project])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("project", nargs="?", default=str(ROOT / "sear" / "data" / "demo" / "demo.prj"))
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        sys.exit(child(args.project))
    walls, cpus = [], []
    for round_ in range(args.rounds):
        env = dict(os.environ, SEAR_BENCH_T0=repr(time.time()))
        out = subprocess.run([sys.executable, __file__, "--child", args.project], env=env, capture_output=True,
                             text=True, timeout=300)
        line = next((x for x in out.stdout.splitlines() if x.startswith("FIRST_FRAME")), None)
        if line is None:
            print(f"round {round_ + 1}: no frame (exit {out.returncode})\n{out.stderr[-2000:]}")
            continue
        fields = dict(part.split("=") for part in line.split()[1:])
        walls.append(float(fields["wall"]))
        cpus.append(float(fields["cpu"]))
        print(f"round {round_ + 1}: first frame after {walls[-1]:.2f} s wall, {cpus[-1]:.2f} s CPU", flush=True)
    if walls:
        print(f"median of {len(walls)}: {statistics.median(walls):.2f} s wall, {statistics.median(cpus):.2f} s CPU "
              f"(load average {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
