"""Ray-casting benchmark: SEAR's sensor ray path against bare pybullet.rayTestBatch of the same rays.

    python bench/bench_rays.py [--repeats 40] [--blocks 5] [--cost-repeats 60] [--cost-only]

The bench scene: the demo rover on a 79,202-triangle terrain (a 200 x 200 grid of gentle hills, 100 m
square) with 200 fixed boxes (0.5..2 m) around it and the demo's two movable boxes near it. Two sensor
sets: a 16-layer x 1,800-beam LIDAR (a Velodyne VLP-16: -15..+15 degrees, 0.2 degrees, 100 m; 28,800
rays) and the demo's sensors (IR and sonar cones, a 180-beam LIDAR). For each, one sample of every
ray-casting sensor is cast (1) through SensorSuite.update (the pattern, the two-engine caster of
sear.sensors.raycast, the readings) and (2) as bare rayTestBatch calls with the same starts and ends in
the world frame on every thread (numThreads=0), as numpy arrays in batches of at most 16,383 (pybullet
returns nothing for larger numpy batches). One sample of each in turn, in rotating order; medians over
the samples, and the ratio of each block of samples to show how steady the machine was.

Targets (issue 15): SEAR's rays per second >= 8x bare pybullet for the 16-layer LIDAR, >= 5x for the
demo's sensor set.

Then the CPU cost model the Sensor Wizard states (sear.sensors.cost): the process CPU time (every thread,
Embree's included) of one sample of one LIDAR of N rays through SensorSuite.update, for N from 1 to
28,800, fitted as a fixed cost per sample plus a cost per ray (least squares on relative error, so the
few-ray samples weigh as much as the many-ray ones). Its last line is RAY_CASTER_COST of
sear/sensors/cost.py as measured: copy it there when the caster changes (`--cost-only` measures just that;
CPU time grows with the machine's load, so measure it as idle as the machine gets and say how busy it was).

Then (issue 23) the same samples against bare `embreex`: one EmbreeScene holding every triangle of the
scene (terrain, fixed boxes, the movable boxes where they are now), the same rays (float32, t in
[0, 1]) in one `scene.run(..., output=1)` call; SEAR's rays/s over that at ~1,000 rays per call (the
demo's sensors) and at 28,800 (the VLP-16). Target: >= 0.6. `embree_ratio` is the function
bench/bench_core.py can import.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pybullet as p

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sear.collision import ROBOT_COLLISION_GROUP  # noqa: E402
from sear.models.loaded import load_models  # noqa: E402
from sear.physics.world import World  # noqa: E402
from sear.project import Project  # noqa: E402
from sear.resources import demo_project  # noqa: E402
from sear.sensors.config import Pose  # noqa: E402
from sear.sensors.files import load_sensors  # noqa: E402
from sear.sensors.lidar import LidarConfig  # noqa: E402
from sear.sensors.raycast import MAX_BATCH  # noqa: E402
from sear.sensors.suite import SensorSuite  # noqa: E402
from sear.state import VehicleState  # noqa: E402

VLP16 = LidarConfig(name="vlp16", angle_step_deg=0.2, spread_deg=360.0, max_range_m=100.0, update_rate_hz=10.0,
                    layers_deg=tuple(float(v) for v in np.linspace(-15.0, 15.0, 16)), pose=Pose(z=0.25))


def bench_terrain(folder: Path) -> Path:
    """A 200 x 200 vertex grid over 100 m x 100 m (79,202 triangles) of gentle hills, written as OBJ."""
    import trimesh

    n = 200
    xs = np.linspace(-50.0, 50.0, n)
    gx, gy = np.meshgrid(xs, xs)
    gz = 0.8 * np.sin(gx / 7.0) * np.cos(gy / 9.0) + 0.3 * np.sin(gx / 2.3 + gy / 3.1)
    gz -= gz[n // 2, n // 2]
    idx = np.arange(n * n).reshape(n, n)
    faces = np.concatenate([
        np.column_stack([idx[:-1, :-1].ravel(), idx[:-1, 1:].ravel(), idx[1:, 1:].ravel()]),
        np.column_stack([idx[:-1, :-1].ravel(), idx[1:, 1:].ravel(), idx[1:, :-1].ravel()])])
    path = folder / "terrain.obj"
    trimesh.Trimesh(np.column_stack([gx.ravel(), gy.ravel(), gz.ravel()]), faces, process=False).export(path)
    return path


def bench_world(folder: Path) -> tuple[World, Project]:
    """The bench scene (see the module's docstring), settled for a second."""
    project = Project.load(demo_project())
    project.terrain.file = bench_terrain(folder)
    world = World(project, load_models(project))
    rng = np.random.default_rng(200)
    placed = 0
    while placed < 200:
        x, y = rng.uniform(-45.0, 45.0, 2)
        if abs(x) < 3.0 and abs(y) < 3.0:
            continue  # clear of the robot
        world.add_box(float(x), float(y), size=float(rng.uniform(0.5, 2.0)), mass=0.0)
        placed += 1
    world.add_box(6.0, -4.0, size=0.8, mass=10.0)
    world.add_box(-5.0, 6.0, size=0.5, mass=2.0)
    for _ in range(60):
        world.step()
    return world, project


def _alternate(sear_sample: Callable[[], None], bare_sample: Callable[[], None], repeats: int, blocks: int,
               clock: Callable[[], float], per_reading: int) -> tuple[dict[str, list[float]], list[float]]:
    """Time SEAR's sample and the bare one in turn (after one warm-up each: it builds the Embree scenes),
    `blocks` blocks of `repeats` each, the order swapped every repeat so a busy moment hits both alike;
    each reading is `per_reading` samples on `clock`. Returns every sample's seconds by name ('sear',
    'bare') and each block's ratio bare / SEAR of the medians (SEAR's share of the bare rate)."""
    runs: list[tuple[str, Callable[[], None]]] = [("sear", sear_sample), ("bare", bare_sample)]
    for _, fn in runs:
        fn()
    times: dict[str, list[float]] = {name: [] for name, _ in runs}
    block_ratios = []
    for _ in range(blocks):
        block: dict[str, list[float]] = {name: [] for name, _ in runs}
        for i in range(repeats):
            for name, fn in runs[i % 2:] + runs[:i % 2]:
                start = clock()
                for _ in range(per_reading):
                    fn()
                block[name].append((clock() - start) / per_reading)
        block_ratios.append(statistics.median(block["bare"]) / max(statistics.median(block["sear"]), 1e-12))
        for name, values in block.items():
            times[name] += values
    return times, block_ratios


def _ray_suite(world: World, configs) -> tuple[SensorSuite, VehicleState, np.ndarray, np.ndarray]:
    """The robot's SensorSuite of `configs` keeping only the sensors that cast rays (the others' models
    are measured by bench/run_bench.py), the robot's state at rest, and every ray's start and end in the
    world frame (m), sensor after sensor as the suite joins them."""
    vehicle = world.vehicles[0]
    state = vehicle.state(0.0)
    suite = SensorSuite(configs, rng=np.random.default_rng(0), client=world.client,
                        ignore_bodies=world.robot_body_ids(0), body=vehicle.body_id,
                        body_centre=vehicle.cog, static_world=world.static_world)
    suite.sensors = [s for s in suite.sensors if s.ray_count]
    rays = [s.rays(state) for s in suite.sensors]
    return suite, state, np.concatenate([r[0] for r in rays]), np.concatenate([r[1] for r in rays])


def _measure(world: World, configs, repeats: int, blocks: int) -> tuple[int, float, float, list[float]]:
    """Rays per sample, median seconds per sample through SEAR and bare, and the ratio of each block."""
    suite, state, starts, ends = _ray_suite(world, configs)
    mask = 0xFFFF & ~ROBOT_COLLISION_GROUP

    def sear_sample() -> None:
        for s in suite.sensors:
            s.next_sample = 0.0  # every sensor due: one full sample of every ray
        suite.update(state)

    def bare_sample() -> None:
        for lo in range(0, len(starts), MAX_BATCH):
            p.rayTestBatch(starts[lo:lo + MAX_BATCH], ends[lo:lo + MAX_BATCH], numThreads=0,
                           collisionFilterMask=mask, physicsClientId=world.client)

    times, block_ratios = _alternate(sear_sample, bare_sample, repeats, blocks, time.perf_counter, 1)
    return len(starts), statistics.median(times["sear"]), statistics.median(times["bare"]), block_ratios


COST_RAYS = (1, 16, 160, 1_600, 7_200, 14_400, 28_800)
"""Ray counts of the samples the cost model is fitted to (one beam, then 16 layers x 1..1,800 beams)."""


def _lidar_of(rays: int) -> LidarConfig:
    """A 360-degree LIDAR casting `rays` rays a sample: one beam, or 16 layers (-15..+15 degrees) of rays / 16
    beams, 100 m long (the VLP-16's pattern at a coarser step)."""
    if rays == 1:
        return LidarConfig(name="lidar", angle_step_deg=360.0, spread_deg=360.0, max_range_m=100.0, pose=Pose(z=0.25))
    return LidarConfig(name="lidar", angle_step_deg=360.0 / (rays // 16), spread_deg=360.0, max_range_m=100.0,
                       layers_deg=VLP16.layers_deg, pose=Pose(z=0.25))


def cost_model(world: World, repeats: int) -> tuple[float, float, list[tuple[int, float]]]:
    """CPU seconds of one sample of one ray sensor: (fixed per sample, per ray, [(rays, measured)]), from
    the median process CPU time of `repeats` samples at each of COST_RAYS, fitted as fixed + rays x per-ray."""
    vehicle = world.vehicles[0]
    state = vehicle.state(0.0)
    suites = []
    for rays in COST_RAYS:
        suite = SensorSuite([_lidar_of(rays)], rng=np.random.default_rng(0), client=world.client,
                            ignore_bodies=world.robot_body_ids(0), body=vehicle.body_id,
                            body_centre=vehicle.cog, static_world=world.static_world)
        assert suite.sensors[0].ray_count == rays, (rays, suite.sensors[0].ray_count)
        suite.update(state)  # warm up
        suites.append(suite)
    cpu: dict[int, list[float]] = {rays: [] for rays in COST_RAYS}
    for i in range(repeats):  # every size in turn, so a busy moment of the machine is shared by them all
        for rays, suite in list(zip(COST_RAYS, suites, strict=True))[i % len(suites):] + \
                list(zip(COST_RAYS, suites, strict=True))[:i % len(suites)]:
            suite.sensors[0].next_sample = 0.0
            start = time.process_time()
            suite.update(state)
            cpu[rays].append(time.process_time() - start)
    measured = [(rays, statistics.median(values)) for rays, values in cpu.items()]
    n = np.array([m[0] for m in measured], dtype=float)
    t = np.array([m[1] for m in measured])
    per_ray, fixed = np.polyfit(n, t, 1, w=1.0 / t)
    return float(fixed), float(per_ray), measured

def bare_embree_scene(world: World) -> tuple[object, np.ndarray]:
    """Every triangle of the bench scene in one Embree scene, relative to its middle (float32), with the
    movable boxes where pybullet has them now: what a bare embreex user would cast against. Returns the
    scene and its centre (m)."""
    from embreex.mesh_construction import TriangleMesh
    from embreex.rtcore_scene import EmbreeScene

    shapes = [(s.vertices, s.faces) for s in world.static_world.terrain + world.static_world.obstacles]
    cube = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], dtype=float)
    cube_faces = np.array([[0, 1, 3], [0, 3, 2], [4, 6, 7], [4, 7, 5], [0, 4, 5], [0, 5, 1],
                           [2, 3, 7], [2, 7, 6], [0, 2, 6], [0, 6, 4], [1, 5, 7], [1, 7, 3]])
    for obstacle in world.obstacles:
        if obstacle.dynamic:
            position, orientation = p.getBasePositionAndOrientation(obstacle.body_id, physicsClientId=world.client)
            rotation = np.asarray(p.getMatrixFromQuaternion(orientation)).reshape(3, 3)
            shapes.append(((cube * obstacle.size[0] / 2) @ rotation.T + position, cube_faces))
    counts = np.cumsum([0] + [len(v) for v, _ in shapes])
    vertices = np.concatenate([v for v, _ in shapes])
    faces = np.concatenate([f + counts[i] for i, (_, f) in enumerate(shapes)])
    centre = (vertices.min(axis=0) + vertices.max(axis=0)) / 2.0
    scene = EmbreeScene(robust=True)
    TriangleMesh(scene, (vertices - centre).astype(np.float32), faces.astype(np.int32))
    return scene, centre


def embree_ratio(world: World, configs, repeats: int, blocks: int) -> tuple[int, float, float, list[float]]:
    """Rays per sample, median seconds per sample through SensorSuite.update and through one bare
    embreex call on the same scene with the same rays, and each block's ratio of SEAR's rays/s to bare
    Embree's (>= 0.6 is issue 23's target)."""
    suite, state, starts, ends = _ray_suite(world, configs)
    scene, centre = bare_embree_scene(world)
    origins = (starts - centre).astype(np.float32)
    directions = (ends - starts).astype(np.float32)
    dists = np.ones(len(starts), dtype=np.float32)

    def sear_sample() -> None:
        for s in suite.sensors:
            s.next_sample = 0.0
        suite.update(state)

    def bare_sample() -> None:
        scene.run(origins, directions, dists=dists, output=1)

    # process_time ticks coarsely: five samples a reading.
    times, block_ratios = _alternate(sear_sample, bare_sample, repeats, blocks, time.process_time, 5)
    return len(starts), statistics.median(times["sear"]), statistics.median(times["bare"]), block_ratios


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=40, help="samples of each per block")
    parser.add_argument("--blocks", type=int, default=5)
    parser.add_argument("--cost-repeats", type=int, default=60, help="samples of each size for the cost model")
    parser.add_argument("--cost-only", action="store_true", help="only the cost model (no comparison with pybullet)")
    parser.add_argument("--embree-only", action="store_true", help="only the comparison with bare embreex")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        world, project = bench_world(Path(folder))
    try:
        terrain = world.static_world.terrain[0]
        print(f"bench scene: {len(terrain.faces):,} terrain triangles, {len(world.static_world.obstacles)} fixed "
              f"boxes, 2 movable boxes; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
        sets = {"16-layer x 1,800-beam LIDAR (VLP-16 pattern, 100 m)": ([VLP16], 8.0),
                "demo's sensors (IR cone, sonar cone, 180-beam LIDAR)": (load_sensors(project.code.sensors), 5.0)}
        for label, (configs, target) in ({} if args.cost_only else sets).items():
            rays, sear, bare, ratios = embree_ratio(world, configs, args.repeats, args.blocks)
            print(label)
            print(f"  rays per sample {rays:6d}; through SEAR {rays / sear / 1e6:6.3f} M rays/s, bare embreex "
                  f"{rays / bare / 1e6:6.3f} M rays/s (CPU time)")
            print(f"  SEAR / bare embreex {bare / sear:5.2f} (target >= 0.6; {args.blocks} blocks of {args.repeats}: "
                  f"{min(ratios):.2f}..{max(ratios):.2f})")
            if args.embree_only:
                continue
            rays, sear, bare, ratios = _measure(world, configs, args.repeats, args.blocks)
            print(label)
            print(f"  rays per sample {rays:6d}; through SEAR {rays / sear / 1e6:6.3f} M rays/s, bare rayTestBatch "
                  f"(all threads) {rays / bare / 1e6:6.3f} M rays/s")
            print(f"  ratio {bare / sear:5.2f} (target >= {target:g}; {args.blocks} blocks of {args.repeats}: "
                  f"{min(ratios):.2f}..{max(ratios):.2f})")
        if args.embree_only:
            return 0
        fixed, per_ray, measured = cost_model(world, args.cost_repeats)
        print("CPU cost of one sample of one ray sensor (process CPU, all threads; medians of "
              f"{args.cost_repeats}):")
        for rays, seconds in measured:
            model = fixed + rays * per_ray
            print(f"  {rays:6d} rays: {seconds * 1e3:8.3f} ms measured, {model * 1e3:8.3f} ms modelled "
                  f"({rays / seconds / 1e6:6.3f} M rays per CPU second)")
        print(f"  fitted (load average {os.getloadavg()[0]:.1f}), for sear/sensors/cost.py:\n"
              f"  RAY_CASTER_COST = CasterCost(per_sample_s={fixed:.2e}, per_ray_s={per_ray:.2e})")
    finally:
        world.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
