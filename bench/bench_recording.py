"""Recording benchmark (issue 27): what `sear run --record` costs, and how large a recording grows.

    python bench/bench_recording.py [--seconds 30] [--rounds 3] [--size-minutes 10]

1. CPU real-time factor with and without a recording, interleaved: each round runs the demo project
   (copied into a temporary folder) once recorded and once not, in a fresh child process each, the order
   alternating between rounds so other load on the machine slows both alike. A child loads the project as
   `sear run --headless --fast` does (user code started, no CSV log), simulates 0.5 s to settle, then
   times `Simulation.run` over `--seconds` (the tyre kernel compiled from the first step, SEAR_NUMBA_AFTER=0,
   as a long run has it): simulated seconds per CPU second of its own process and of
   the user code's process (from /proc, as bench/bench_multi.py reads it). The recorded run writes an
   MCAP file as `--record` does (the Recorder is the run's observer from the start). The result is the
   median ratio recorded / not recorded. Target: >= 0.90 (recording costs <= 10 % of the CPU real-time
   factor).
2. Size: one recorded run of `--size-minutes` simulated minutes of the demo (its LIDAR included); the
   file's size in MB. Target: <= 50 MB for 10 minutes. (`--size-minutes 0` skips it.)
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def run_child(project: Path, seconds: float, record: str | None) -> None:
    """(In a child.) CPU and wall real-time factors of the project, recorded into `record` or not."""
    sys.path.insert(0, str(ROOT / "bench"))
    from bench_multi import cpu_of

    from sear.loading import load_project
    from sear.runtime.simulation import Simulation

    observer = None
    if record:
        from sear.recording.writer import Recorder

        observer = Recorder(record)
    loaded = load_project(project)
    simulation = Simulation(loaded, seed=3, output=lambda text: None, observer=observer)
    try:
        simulation.start_user_code()
        simulation.run(0.5)
        pids = [pid for run in simulation.robots if (pid := getattr(run.runner, "pid", None)) is not None]
        wall, cpu, controllers = time.perf_counter(), time.process_time(), cpu_of(pids)
        simulation.run(seconds)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        controllers = cpu_of(pids) - controllers
    finally:
        simulation.close()
    size = Path(record).stat().st_size if record else 0
    print(json.dumps({"cpu_rtf": seconds / (cpu + controllers), "wall_rtf": seconds / wall, "bytes": size,
                      "main_cpu": cpu, "controller_cpu": controllers}))


def child(project: Path, seconds: float, record: Path | None) -> dict[str, float]:
    command = [sys.executable, str(Path(__file__).resolve()), "--run-child", str(project), "--seconds", f"{seconds:g}"]
    if record is not None:
        command += ["--record", str(record)]
    env = dict(os.environ, PYTHONPATH=str(ROOT), SEAR_NUMBA_AFTER="0")  # the compiled tyre kernel from the start
    out = subprocess.run(command, check=True, capture_output=True, text=True, cwd=project.parent, env=env).stdout
    return {k: float(v) for k, v in json.loads(out.strip().splitlines()[-1]).items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--size-minutes", type=float, default=10.0)
    parser.add_argument("--run-child", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--record", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.run_child is not None:
        run_child(args.run_child, args.seconds, args.record)
        return 0
    from sear import resources

    with tempfile.TemporaryDirectory(prefix="sear-bench-recording-") as temp:
        folder = Path(temp)
        resources.copy_demo(folder / "demo")
        project = folder / "demo" / "demo.prj"
        ratios = []
        for round_ in range(args.rounds):
            order = [False, True] if round_ % 2 == 0 else [True, False]
            found: dict[bool, dict[str, float]] = {}
            for recorded in order:
                found[recorded] = child(project, args.seconds, folder / "bench.mcap" if recorded else None)
            ratio = found[True]["cpu_rtf"] / found[False]["cpu_rtf"]
            ratios.append(ratio)
            print(f"round {round_ + 1}: CPU RTF not recorded {found[False]['cpu_rtf']:.1f}, recorded "
                  f"{found[True]['cpu_rtf']:.1f} (ratio {ratio:.3f}); wall RTF {found[False]['wall_rtf']:.1f} / "
                  f"{found[True]['wall_rtf']:.1f}; CPU s of the simulation / its user code: "
                  f"{found[False]['main_cpu']:.2f} / {found[False]['controller_cpu']:.2f} not recorded, "
                  f"{found[True]['main_cpu']:.2f} / {found[True]['controller_cpu']:.2f} recorded; "
                  f"{found[True]['bytes'] / 1e6:.2f} MB for {args.seconds:g} s",
                  flush=True)
        print(f"median ratio recorded / not recorded: {statistics.median(ratios):.3f} (target >= 0.90)")
        if args.size_minutes > 0:
            seconds = args.size_minutes * 60.0
            result = child(project, seconds, folder / "size.mcap")
            print(f"size: {result['bytes'] / 1e6:.1f} MB for {args.size_minutes:g} simulated minutes "
                  f"(target <= 50 MB for 10); CPU RTF {result['cpu_rtf']:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
