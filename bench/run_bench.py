"""Simulation loop benchmark: the demo world headless, against bare pybullet in the same process.

    python bench/run_bench.py [--seconds 20]

Prints the real-time factor of a full SEAR run (vehicle, sensors, user code, no log) and the cost of one
SEAR tick relative to one bare `pybullet.stepSimulation()` of the same bodies, measured on the same
world in the same run, with a breakdown of where the rest goes. Ratios, not timings, are the result:
they hold across machines.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import pybullet as p

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sear.cli import DEMO_DIR, ensure_demo_models  # noqa: E402
from sear.project import Project  # noqa: E402
from sear.runtime import Simulation  # noqa: E402


def _time(fn, n: int) -> float:
    start = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - start) / n


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=20.0, help="simulated seconds per measurement")
    args = parser.parse_args()
    ensure_demo_models(DEMO_DIR)
    simulation = Simulation(Project.load(DEMO_DIR / "demo.prj"), seed=0, output=lambda text: None)
    simulation.start_user_code()
    simulation.run(2.0)  # warm up: settle, first sensor samples, user code running
    steps = round(args.seconds * simulation.physics_hz)
    world, client = simulation.world, simulation.world.client

    wall = time.perf_counter()
    simulation.run(args.seconds)
    wall = time.perf_counter() - wall
    tick = wall / steps

    bare = _time(lambda: p.stepSimulation(physicsClientId=client), steps)
    vehicle = _time(lambda: world.vehicle.update(world.dt), steps // 4)
    state = _time(lambda: world.vehicle.state(world.time), steps // 4)
    simulation.close()

    print(f"demo world, headless, user code running, {args.seconds:g} simulated seconds at "
          f"{simulation.physics_hz:g} Hz")
    print(f"  real-time factor of SEAR:                 {args.seconds / wall:8.1f}x")
    print(f"  real-time factor of bare stepSimulation:  {1.0 / (bare * simulation.physics_hz):8.1f}x")
    print(f"  SEAR tick / bare stepSimulation:          {tick / bare:8.2f}x   (target <= 1.3x)")
    print("  where a tick goes, relative to one bare step:")
    print(f"    pybullet step                           {1.0:8.2f}")
    print(f"    raycast vehicle update                  {vehicle / bare:8.2f}")
    print(f"    vehicle state for sensors and log       {state / bare:8.2f}")
    print(f"    sensors, user code and bookkeeping      {(tick - bare - vehicle - state) / bare:8.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
