"""Memory soak: a long headless run with a log (LIDAR scans streamed to disk) keeps its memory flat.

    python bench/bench_soak.py [--minutes 60] [--project PATH.prj]

Runs the demo project (or PATH.prj) headless with its user code and a CSV log into a temporary folder
for `--minutes` simulated minutes (default 60: the issue's one-hour soak), and prints the process's
resident memory (VmRSS, MB) every five simulated minutes. The result is the growth from the first sample
after the warm-up (5 simulated minutes: pybullet's contact caches, numpy's and Python's pools filled) to
the end; target <= 10 MB. The log's size on disk and what the scans would have taken held in memory (as
before they were streamed) are printed beside it.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sear import resources  # noqa: E402
from sear.loading import load_project  # noqa: E402
from sear.runtime.logs import load_arrays  # noqa: E402
from sear.runtime.simulation import Simulation  # noqa: E402

WARM_UP_MIN = 5


def rss_mb() -> float:
    """Resident memory of this process, MB (Linux /proc)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minutes", type=float, default=60.0, help="simulated minutes (default 60)")
    parser.add_argument("--project", type=Path, default=None, help="project file (default: the demo)")
    args = parser.parse_args()
    loaded = load_project(args.project or resources.demo_project())
    if not loaded.ok:
        print(f"cannot simulate: {loaded.problems[0]}", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory() as folder:
        log = Path(folder) / "soak.csv"
        simulation = Simulation(loaded, seed=1, log_path=log, output=lambda text: None)
        try:
            simulation.start_user_code()
            samples: list[tuple[float, float]] = [(0.0, rss_mb())]
            wall0 = time.perf_counter()
            for minute in range(5, int(args.minutes) + 1, 5):
                simulation.run(minute * 60.0 - simulation.world.time)
                samples.append((minute, rss_mb()))
                print(f"  {minute:4d} simulated min  RSS {samples[-1][1]:7.1f} MB  "
                      f"({time.perf_counter() - wall0:6.0f} s wall)", flush=True)
            rows = simulation.log.rows if simulation.log is not None else 0
        finally:
            simulation.close()
        arrays = load_arrays(log)
        scans = arrays.get("lidar.ranges")
        disk = sum(f.stat().st_size for f in Path(folder).rglob("*") if f.is_file()) / 2**20
    warm = next((mb for minute, mb in samples if minute >= WARM_UP_MIN), samples[0][1])
    growth = samples[-1][1] - warm
    held = scans.nbytes / 2**20 if scans is not None else 0.0
    print(f"simulated {simulation.world.time / 60:.1f} min; log {rows} rows, "
          f"{0 if scans is None else len(scans)} LIDAR scans, {disk:.1f} MB on disk "
          f"(the scans alone {held:.1f} MB, held in memory until the end before they were streamed)")
    print(f"RSS after {WARM_UP_MIN} simulated min {warm:.1f} MB, at the end {samples[-1][1]:.1f} MB: "
          f"growth {growth:+.1f} MB (target <= 10 MB)")
    return 0 if growth <= 10.0 else 1


if __name__ == "__main__":
    sys.exit(main())
