"""Ray-casting benchmark: SEAR's sensor ray path against bare pybullet.rayTestBatch of the same rays.

    python bench/bench_rays.py

Two sensor sets on the demo world: the demo's sensors (cones, LIDAR) and a 1,080-beam LIDAR at 40 Hz.
For each, the rays of one sample of every ray-casting sensor are cast (1) through SensorSuite.update
(pattern, batching via raycast.py, the readings) and (2) as one bare rayTestBatch call with the same
starts and ends in the world frame, as numpy arrays and as lists (the faster is the baseline), in the same
run, one sample of each in turn, in rotating order (medians over the samples; the range over five blocks
of samples shows how steady the machine was). The ratio (rays per second through SEAR / bare) is the
result; target >= 0.8.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pybullet as p

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sear.collision import ROBOT_COLLISION_GROUP  # noqa: E402
from sear.physics.world import World  # noqa: E402
from sear.project import Project  # noqa: E402
from sear.resources import demo_project  # noqa: E402
from sear.sensors.config import Pose  # noqa: E402
from sear.sensors.files import load_sensors  # noqa: E402
from sear.sensors.lidar import LidarConfig  # noqa: E402
from sear.sensors.suite import SensorSuite  # noqa: E402


def _measure(world: World, configs, repeats: int, blocks: int) -> tuple[int, float, float, list[float]]:
    """Rays per sample, median seconds per sample through SEAR and bare, and the ratio of each block."""
    state = world.vehicle.state(0.0)
    probe = SensorSuite(configs, rng=np.random.default_rng(0), client=world.client,
                        ignore_bodies=world.robot_body_ids())
    # Only the sensors that cast rays: the others' models are measured by bench/run_bench.py.
    configs = [s.config for s in probe.sensors if s.rays(state) is not None]
    suite = SensorSuite(configs, rng=np.random.default_rng(0), client=world.client,
                        ignore_bodies=world.robot_body_ids(), body=world.vehicle.body_id,
                        body_centre=world.vehicle.cog)
    ray_sensors = suite.sensors
    # The bare call gets the same rays in the world frame, as numpy arrays and as lists of floats (made
    # before timing); the faster of the two is the baseline.
    starts = np.concatenate([s.rays(state)[0] for s in ray_sensors])
    ends = np.concatenate([s.rays(state)[1] for s in ray_sensors])
    forms = {"numpy": (starts, ends), "lists": (starts.tolist(), ends.tolist())}
    mask = 0xFFFF & ~ROBOT_COLLISION_GROUP

    def sear_sample() -> None:
        for s in suite.sensors:
            s.next_sample = 0.0  # every sensor due: one full sample of every ray
        suite.update(state)

    def bare(form: str) -> Callable[[], None]:
        rays_from, rays_to = forms[form]

        def sample() -> None:
            p.rayTestBatch(rays_from, rays_to, numThreads=0, collisionFilterMask=mask, physicsClientId=world.client)

        return sample

    runs = [("sear", sear_sample), ("numpy", bare("numpy")), ("lists", bare("lists"))]
    for _, fn in runs:  # warm up
        fn()
    # Interleaved one by one in rotating order, so whatever else the machine does slows all alike.
    clock = time.perf_counter
    times: dict[str, list[float]] = {name: [] for name, _ in runs}
    block_ratios = []
    for _ in range(blocks):
        block: dict[str, list[float]] = {name: [] for name, _ in runs}
        for i in range(repeats):
            for name, fn in runs[i % 3:] + runs[:i % 3]:
                start = clock()
                fn()
                block[name].append(clock() - start)
        block_ratios.append(min(statistics.median(block["numpy"]), statistics.median(block["lists"]))
                            / statistics.median(block["sear"]))
        for name, values in block.items():
            times[name] += values
    sear = statistics.median(times["sear"])
    bare_time = min(statistics.median(times["numpy"]), statistics.median(times["lists"]))
    return len(starts), sear, bare_time, block_ratios


def main() -> int:
    project = Project.load(demo_project())
    world = World(project)
    world.add_tree(3.0, 1.0)
    world.add_wall(-4.0, -4.0, -4.0, 4.0)
    for _ in range(240):
        world.step()
    sets = {
        "demo ray sensors (IR cone, sonar cone, 180-beam LIDAR)":
            (load_sensors(project.code.sensors), 200),
        "1,080-beam LIDAR (270° at 0.25°, 30 m)":
            ([LidarConfig(name="ust", angle_step_deg=0.25, spread_deg=270.0, max_range_m=30.0,
                          update_rate_hz=40.0, pose=Pose(z=0.16))], 200),
    }
    for label, (configs, repeats) in sets.items():
        rays, sear, bare, ratios = _measure(world, configs, repeats, blocks=5)
        print(label)
        print(f"  rays per sample {rays:6d}; through SEAR {rays / sear / 1e6:6.3f} M rays/s, "
              f"bare rayTestBatch {rays / bare / 1e6:6.3f} M rays/s; ratio {bare / sear:5.2f} (target >= 0.8; "
              f"5 blocks of {repeats}: {min(ratios):.2f}..{max(ratios):.2f})")
        if "1,080" in label:
            print(f"  at 40 Hz that is {40 * sear * 100:5.1f} % of one core's real time")
    world.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
