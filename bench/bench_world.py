"""World benchmark: the demo's headless real-time factor against a checkout of an older main, and what
many fixed obstacles cost.

    python bench/bench_world.py [--rounds 5] [--seconds 10] [--baseline 82c4f15] [--baseline-obstacles]

Each measurement is one child process (this file with --child) that loads the demo project as `sear run
--headless` does (its sensors, its user code, a CSV log to a temporary folder), optionally adds fixed
obstacles well away from the robot's route (walls 4 m long, or 1 m boxes of mass 0), and times
`Simulation.run` over the simulated seconds (loading and building the world are not timed). The baseline
runs the same child with PYTHONPATH pointing at a temporary `git worktree` of the baseline commit (made
here and removed afterwards), so both run the same script on the same machine. The kinds alternate in
every round, so load from other work slows all alike; medians over the rounds, with their range.

Targets (issue 15): the plain demo >= 1.5x the baseline's real-time factor; 100 walls cost <= 1.5x the
plain demo, 1,000 fixed boxes <= 3x (cost = wall-clock time per simulated second, same code).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _obstacle_positions(count: int, seed: int = 7) -> list[tuple[float, float]]:
    """Seeded points on the demo terrain (±50 m) outside the robot's square route (0..12 m) and its
    obstacles, with 6 m to spare."""
    import numpy as np

    rng = np.random.default_rng(seed)
    points: list[tuple[float, float]] = []
    while len(points) < count:
        x, y = rng.uniform(-46.0, 46.0, 2)
        if not (-16.0 < x < 26.0 and -12.0 < y < 24.0):
            points.append((float(x), float(y)))
    return points


def child(walls: int, boxes: int, seconds: float) -> None:
    """One measurement, printed as JSON: simulated seconds per wall-clock second."""
    import time

    from sear.resources import demo_project

    try:
        from sear.loading import load_project
        from sear.runtime.simulation import Simulation
    except ImportError:  # the baseline is older than the split of sear.runtime and sear.validate (issue 22)
        from sear.validate import load_project  # type: ignore[no-redef]

        from sear.runtime import Simulation  # type: ignore[no-redef]

    with tempfile.TemporaryDirectory() as folder:
        sim = Simulation(load_project(demo_project()), seed=3, log_path=Path(folder) / "a.csv")
        try:
            for x, y in _obstacle_positions(walls):
                sim.sim.add_wall(x, y - 2.0, x, y + 2.0, height=1.0)
            for x, y in _obstacle_positions(boxes, seed=8):
                sim.sim.add_box(x, y, size=1.0, mass=0.0)
            sim.run(0.5)  # user code's init, first samples, caches
            start = time.perf_counter()
            sim.run(seconds)
            elapsed = time.perf_counter() - start
        finally:
            sim.close()
    print(json.dumps({"rtf": seconds / elapsed}))


def _measure(tree: Path, walls: int, boxes: int, seconds: float) -> float:
    env = dict(os.environ, PYTHONPATH=str(tree), QT_QPA_PLATFORM="offscreen")
    out = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--child", "--walls", str(walls),
                          "--boxes", str(boxes), "--seconds", str(seconds)], cwd=tree, env=env,
                         capture_output=True, text=True, check=True)
    return float(json.loads(out.stdout.strip().splitlines()[-1])["rtf"])


def _spread(values: list[float]) -> str:
    return f"median {statistics.median(values):6.2f} (range {min(values):.2f}..{max(values):.2f})"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--walls", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--boxes", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--seconds", type=float, default=10.0, help="simulated seconds per measurement")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--baseline", default="82c4f15", help="commit to compare the plain demo with")
    parser.add_argument("--baseline-obstacles", action="store_true",
                        help="also time the baseline with the obstacles (slow: 10-20x the plain demo there)")
    args = parser.parse_args()
    if args.child:
        child(args.walls, args.boxes, args.seconds)
        return 0
    kinds = [("plain", 0, 0), ("100 walls", 100, 0), ("1,000 fixed boxes", 0, 1000)]
    with tempfile.TemporaryDirectory() as folder:
        base = Path(folder) / "baseline"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(base), args.baseline],
                       check=True)
        try:
            rtf: dict[str, list[float]] = {}
            for r in range(args.rounds):
                runs = [(f"{name} ({tree_name})", tree, walls, boxes)
                        for name, walls, boxes in kinds
                        for tree_name, tree in (("this", ROOT), ("baseline", base))
                        if tree_name == "this" or name == "plain" or args.baseline_obstacles]
                for label, tree, walls, boxes in runs[r % len(runs):] + runs[:r % len(runs)]:
                    rtf.setdefault(label, []).append(_measure(tree, walls, boxes, args.seconds))
                print(f"round {r + 1}/{args.rounds} done", file=sys.stderr)
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(base)], check=False)
    load = os.getloadavg()
    print(f"demo headless, {args.seconds:g} simulated s per run, {args.rounds} rounds alternating; "
          f"load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f} on {os.cpu_count()} cores")
    for label, values in rtf.items():
        print(f"  real-time factor {label:34s} {_spread(values)}")
    plain = statistics.median(rtf["plain (this)"])
    speed_up = [a / b for a, b in zip(rtf["plain (this)"], rtf["plain (baseline)"], strict=True)]
    print(f"plain demo vs {args.baseline}: {_spread(speed_up)} x  (target >= 1.5; per-round ratios)")
    for name, target in (("100 walls", 1.5), ("1,000 fixed boxes", 3.0)):
        cost = [plain / v for v in rtf[f"{name} (this)"]]
        print(f"{name} cost vs the plain demo: {_spread(cost)} x  (target <= {target})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
