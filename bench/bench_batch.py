"""Batch benchmark: the throughput of `sear batch` with 1 and 2 local workers, and the Ray path's cost per run.

    python bench/bench_batch.py [--runs 40] [--seconds 10] [--rounds 2] [--no-ray]

The sweep is the demo project (copied into a temporary folder) run for `--seconds` simulated seconds with
seeds 1..`--runs`: the same 40 runs every time. Each round runs the whole batch with 1 worker and with 2
workers (`-j 1`, `-j 2`), the order alternating between rounds so load from other work slows both alike;
throughput is runs per wall-clock second of the whole batch (worker start-up, results, tables included;
the report is left out). The result is the median ratio 2 workers / 1 worker.

Then, unless --no-ray, the same batch as Ray tasks on a local Ray instance with 2 CPUs, once, against the
local pool's 2-worker time of the same round: the Ray path's overhead per run = (Ray batch time - local
batch time) / runs, with the time Ray takes to start (ray.init) shown apart.

Target (issue 18): 2 workers >= 1.7x one on an idle 2-core machine.
"""

from __future__ import annotations

import argparse
import io
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def make_sweep(folder: Path, runs: int, seconds: float) -> Path:
    from sear import resources

    resources.copy_demo(folder / "demo")
    sweep = folder / "bench.toml"
    sweep.write_text(f'project = "demo/demo.prj"\nduration = {seconds}\ntimeout = 600\nseeds = "1..{runs}"\n'
                     "keep_logs = false\n", encoding="utf-8")
    return sweep


def timed_batch(sweep: Path, output: Path, **options: object) -> float:
    from sear.batch.command import run_batch

    stream = io.StringIO()
    start = time.perf_counter()
    status = run_batch(sweep, output=output, report=False, stream=stream, **options)  # type: ignore[arg-type]
    elapsed = time.perf_counter() - start
    if status != 0:
        raise SystemExit(f"the batch failed:\n{stream.getvalue()}")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--no-ray", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="sear-bench-batch-") as scratch:
        folder = Path(scratch)
        sweep = make_sweep(folder, args.runs, args.seconds)
        ratios, one, two = [], [], []
        for round_ in range(args.rounds):
            order = (1, 2) if round_ % 2 == 0 else (2, 1)
            times = {}
            for workers in order:
                times[workers] = timed_batch(sweep, folder / f"r{round_}-j{workers}-results", workers=workers)
                print(f"round {round_ + 1}: {workers} worker(s): {args.runs} runs in {times[workers]:.1f} s "
                      f"({args.runs / times[workers]:.2f} runs/s)", flush=True)
            one.append(times[1])
            two.append(times[2])
            ratios.append(times[1] / times[2])
        ratio = statistics.median(ratios)
        print(f"\n2 workers / 1 worker throughput: median {ratio:.2f}x (rounds: "
              f"{', '.join(f'{r:.2f}' for r in ratios)}); target >= 1.7x on an idle 2-core machine")
        if args.no_ray:
            return 0
        import ray

        start = time.perf_counter()
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
        ray.shutdown()
        init = time.perf_counter() - start
        local = timed_batch(sweep, folder / "local-results", workers=2)
        remote = timed_batch(sweep, folder / "ray-results", workers=2, use_ray=True)
        print(f"Ray (local instance, 2 CPUs): {args.runs} runs in {remote:.1f} s against {local:.1f} s on the "
              f"local pool: {(remote - local) / args.runs * 1000:+.0f} ms per run, of which starting Ray "
              f"(~{init:.1f} s once) is {init / args.runs * 1000:.0f} ms per run")
    return 0


if __name__ == "__main__":
    sys.exit(main())
