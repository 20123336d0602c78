"""Controller process benchmark: a control tick's round trip to the user code process, and the demo's
headless real-time factor against the code before controllers were processes, measured in one run.

    python bench/bench_controller.py [--baseline 82c4f15] [--rounds 3] [--seconds 10] [--ticks 3000]

1. Round trip: the time of one control tick's turn (the turn message with the time and the fresh
   readings, the user's main_loop, the reply with its drive commands; the log row the simulation writes
   meanwhile is in it) for the demo's own user code, over
   `--ticks` control ticks of a demo run; median and 95th percentile, microseconds.
2. Real-time factor: `sear run demo.prj --headless --duration SECONDS --seed 3` of this checkout and of
   `--baseline` (checked out in a temporary git worktree, run through PYTHONPATH with the same
   interpreter), alternating, `--rounds` each; the factor is what the run's own summary line reports
   (simulated time over the wall time of the run). A shared machine slows both alike; the ratio of the
   medians is the result, and must not fall below 0.9.

Each control tick needs the user code process to be scheduled and then the simulation again: on an idle
core that is tens of microseconds, but on a machine whose cores are all busy a wake-up can wait for
another program's time slice (milliseconds), so run this on a quiet machine and read the percentiles.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sear.loading import load_project  # noqa: E402
from sear.resources import demo_project  # noqa: E402
from sear.runtime.simulation import Simulation  # noqa: E402

TARGET = 0.9
"""The real-time factor after over before must be at least this."""


def round_trips(ticks: int) -> list[float]:
    """Seconds per control tick's turn with the demo's user code, `ticks` of them."""
    simulation = Simulation(load_project(demo_project()), seed=3, output=lambda text: None)
    times: list[float] = []
    try:
        runner = simulation.runner
        assert runner is not None
        give, finish = runner.give_turn, runner.finish_turn
        started = [0.0]

        def give_turn(kind, fields):  # type: ignore[no-untyped-def]
            started[0] = time.perf_counter()
            return give(kind, fields)

        def finish_turn():  # type: ignore[no-untyped-def]
            finish()
            times.append(time.perf_counter() - started[0])

        simulation.start_user_code()
        runner.give_turn, runner.finish_turn = give_turn, finish_turn  # type: ignore[method-assign]
        simulation.advance(ticks * simulation.control_every)
        assert simulation.user_error is None, simulation.user_error
    finally:
        simulation.close()
    return times


def realtime_factor(pythonpath: str, seconds: float) -> float:
    """The real-time factor a headless demo run reports, with `pythonpath` first on the path."""
    env = dict(os.environ, PYTHONPATH=pythonpath)
    result = subprocess.run([sys.executable, "-m", "sear", "run", str(demo_project()), "--headless",
                             "--duration", str(seconds), "--seed", "3"], capture_output=True, text=True, env=env,
                            cwd=pythonpath, timeout=600, check=True)
    match = re.search(r"simulated ([\d.]+) s in ([\d.]+) s", result.stdout)
    assert match, result.stdout
    return float(match.group(1)) / float(match.group(2))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--baseline", default="82c4f15", help="the commit to compare with")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=10.0, help="simulated seconds of each demo run")
    parser.add_argument("--ticks", type=int, default=3000, help="control ticks timed for the round trip")
    args = parser.parse_args()

    times = sorted(round_trips(args.ticks))
    p95 = times[min(len(times) - 1, int(0.95 * len(times)))]
    print(f"control tick round trip to the user code process ({len(times)} ticks, demo user code): "
          f"median {statistics.median(times) * 1e6:.0f} us, 95th percentile {p95 * 1e6:.0f} us")

    with tempfile.TemporaryDirectory(prefix="sear-baseline-") as tmp:
        base = Path(tmp) / "base"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "--quiet", str(base), args.baseline],
                       check=True)
        try:
            before, after = [], []
            for i in range(args.rounds):
                before.append(realtime_factor(str(base), args.seconds))
                after.append(realtime_factor(str(ROOT), args.seconds))
                print(f"round {i + 1}: before {before[-1]:.2f}x, after {after[-1]:.2f}x real time", flush=True)
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(base)], check=False)
    ratio = statistics.median(after) / statistics.median(before)
    print(f"demo headless real-time factor: before {statistics.median(before):.2f}x, after "
          f"{statistics.median(after):.2f}x (medians of {args.rounds}); after/before = {ratio:.2f} "
          f"(target >= {TARGET})")
    return 0 if ratio >= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
