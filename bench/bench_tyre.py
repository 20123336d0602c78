"""CPU time of one Vehicle.update (tyres and suspension of one robot, one physics step), in µs.

    python bench/bench_tyre.py [--rounds 3] [--steps 2400] [--baseline PATH]

The demo world, its rover driven at a steady throttle with the steering swinging (so wheels load, unload
and skid); the first simulated second settles and is not timed. Each update's CPU time is taken with
time.process_time around the call, less the timer's own cost measured in the same process. Kinds, each
in a fresh interpreter and alternated round by round so that load from other work slows all alike:

- `compiled`: sear.physics.tyre's kernel compiled by numba from the first update (SEAR_NUMBA_AFTER=0;
  loaded from numba's cache: run once first, or the first round's first update includes compiling);
- `python`: the same kernel as plain Python (SEAR_NO_NUMBA=1);
- `baseline`: the code of an older checkout of SEAR at PATH (e.g. `git worktree add /tmp/old main`),
  with `--baseline PATH`.

Prints the median per kind over the rounds, with the range, and the numba import and cache load cost of
the compiled kind (CPU s, in the child).
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

CHILD = r"""
import json, math, sys, time
from sear.models.loaded import load_models
from sear.physics.world import World
from sear.project import Project
from sear.resources import demo_project

steps = int(sys.argv[1])
project = Project.load(demo_project())
world = World(project, load_models(project))
vehicle = world.vehicles[0]
clock = time.process_time
import_cpu = clock()
vehicle.update(world.dt)  # the first update chooses the kernel (numba's: imports numba and loads it)
import_cpu = clock() - import_cpu
for _ in range(round(1.0 / world.dt)):
    world.step()
vehicle.accelerate(0.6 * project.dynamics.engine_force)
overhead = min(-(clock() - clock()) for _ in range(2000))
update, spent = vehicle.update, 0.0
for index in range(steps):
    vehicle.steer(0.8 * math.sin(index * world.dt * 1.3))
    t0 = clock()
    update(world.dt)
    spent += clock() - t0 - overhead
    vehicle.update = lambda dt: None  # World.step calls update: once per step is what is timed
    world.step()
    del vehicle.update
print(json.dumps({"us": spent / steps * 1e6, "first_update_cpu": import_cpu}))
"""


def measure(kind: str, steps: int, baseline: Path | None) -> dict[str, float]:
    """One child run of `kind`: µs of CPU per update, and the CPU s of the first update."""
    env = dict(os.environ)
    env.pop("SEAR_NO_NUMBA", None)
    env["SEAR_NUMBA_AFTER"] = "0"  # numba's kernels from the first update (where they are not switched off)
    if kind == "python":
        env["SEAR_NO_NUMBA"] = "1"
    if kind == "baseline":
        assert baseline is not None
        env["PYTHONPATH"] = str(baseline)
    out = subprocess.run([sys.executable, "-c", CHILD, str(steps)], env=env, capture_output=True, text=True,
                         check=True, cwd=tempfile.gettempdir())
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=2400, help="timed updates per run (10 s at 240 Hz)")
    parser.add_argument("--baseline", type=Path, help="an older SEAR checkout to compare with")
    args = parser.parse_args(argv)
    kinds = ["compiled", "python"] + (["baseline"] if args.baseline else [])
    results: dict[str, list[dict[str, float]]] = {kind: [] for kind in kinds}
    for round_ in range(args.rounds):
        for kind in kinds if round_ % 2 == 0 else kinds[::-1]:
            result = measure(kind, args.steps, args.baseline)
            results[kind].append(result)
            print(f"round {round_ + 1}: {kind:9s} {result['us']:7.1f} µs CPU per update; first update "
                  f"{result['first_update_cpu']:.3f} s", flush=True)
    print(f"\nVehicle.update, CPU µs per robot per step, median of {args.rounds} (range); load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs:")
    for kind, rows in results.items():
        us = [r["us"] for r in rows]
        first = statistics.median(r["first_update_cpu"] for r in rows)
        print(f"  {kind:9s} {statistics.median(us):7.1f} ({min(us):.1f}-{max(us):.1f}); first update {first:.3f} s CPU")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
