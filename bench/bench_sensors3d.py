"""3-D sensor benchmark: the demo's headless real-time factor with a Velodyne VLP-16, with a 160×120
depth camera at 15 Hz, and with a 320×240 RGB camera at 15 Hz (the Raspberry Pi Camera v2 preset at a
lower resolution), added to its sensors.

    python bench/bench_sensors3d.py [--rounds 5] [--seconds 10]

Each measurement is one child process (this file with --child) that loads the demo project as `sear run
--headless` does (its sensors, its user code, a log with its array outputs to a temporary folder), adds
the sensor of its kind and times `Simulation.run` over the simulated seconds (loading, building the
world and the first half second are not timed). The kinds (plain demo, + VLP-16, + depth camera, + RGB
camera, + RGB camera without shadow rays) alternate in every round, so load from other work slows all
alike; medians over the rounds with their range, and the load average while they ran (the machine may be
shared). Each is given as the CPU
real-time factor (simulated seconds per CPU second of the simulation's process and its controller
processes, which a shared machine does not skew) and as the wall-clock one.

Targets (issue 15): the demo with a VLP-16 keeps >= 2x real time headless; with a 160×120 depth camera at
15 Hz, >= 2x. Issue 28: with a 320×240 RGB camera at 15 Hz (shadows on), >= 2x (CPU).
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
KINDS = ("plain", "vlp16", "depth", "rgb", "rgb_flat")


def extra_sensors(kind: str) -> list:
    """The sensor a kind adds to the demo's: the VLP-16 preset 0.35 m above the body's origin, a
    160×120 depth camera (87° wide, 0.28-10 m, 15 Hz, as the D435 preset at a lower resolution) at the
    front of the body, or there the Raspberry Pi Camera v2 preset (320×240, 62.2°, 15 Hz) pitched 10°
    down, with its shadow rays or without."""
    from sear.resources import packaged
    from sear.sensors.config import Pose
    from sear.sensors.depth_camera import DepthCameraConfig
    from sear.sensors.lidar import LidarConfig
    from sear.sensors.rgb_camera import RgbCameraConfig

    if kind == "vlp16":
        presets = json.loads(packaged("sensor_presets.json").read_text(encoding="utf-8"))["presets"]
        (vlp,) = [p for p in presets if p["model_number"] == "Velodyne VLP-16"]
        fields = {k: tuple(v) if isinstance(v, list) else v for k, v in vlp["fields"].items()}
        return [LidarConfig(name="vlp16", model_number="Velodyne VLP-16", pose=Pose(z=0.35), **fields)]
    if kind == "depth":
        return [DepthCameraConfig(name="depth", width_px=160, height_px=120, fov_deg=87.0, min_range_m=0.28,
                                  max_range_m=10.0, update_rate_hz=15.0, pose=Pose(x=0.3, z=0.15))]
    if kind in ("rgb", "rgb_flat"):
        return [RgbCameraConfig(name="rgb", width_px=320, height_px=240, fov_deg=62.2, update_rate_hz=15.0,
                                pose=Pose(x=0.3, z=0.15, pitch=10.0), shadows=kind == "rgb")]
    return []


def child(kind: str, seconds: float) -> None:
    """One measurement, printed as JSON: simulated seconds per CPU second (this process and the
    controllers) and per wall-clock second."""
    import time

    sys.path.insert(0, str(ROOT / "bench"))
    from bench_multi import cpu_of

    from sear.loading import load_project
    from sear.resources import demo_project
    from sear.runtime.simulation import Simulation

    loaded = load_project(demo_project())
    with tempfile.TemporaryDirectory() as folder:
        sim = Simulation(loaded, seed=3, log_path=Path(folder) / "a.csv",
                         sensor_configs=[*loaded.robots[0].sensors, *extra_sensors(kind)])
        try:
            sim.run(0.5)  # user code's init, first samples, caches
            pids = [pid for run in sim.robots if (pid := getattr(run.runner, "pid", None)) is not None]
            start, cpu, controllers = time.perf_counter(), time.process_time(), cpu_of(pids)
            sim.run(seconds)
            elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
            controllers = cpu_of(pids) - controllers
        finally:
            sim.close()
    print(json.dumps({"rtf": seconds / elapsed, "cpu_rtf": seconds / (cpu + controllers)}))


def _measure(kind: str, seconds: float) -> dict[str, float]:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    out = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--child", kind, "--seconds", str(seconds)],
                         cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    return {k: float(v) for k, v in json.loads(out.stdout.strip().splitlines()[-1]).items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--child", choices=KINDS)
    parser.add_argument("--kinds", default=",".join(KINDS), help="which of the kinds, comma-separated")
    args = parser.parse_args()
    if args.child:
        child(args.child, args.seconds)
        return
    kinds = args.kinds.split(",")
    results: dict[str, list[dict[str, float]]] = {kind: [] for kind in kinds}
    loads = [os.getloadavg()[0]]
    for round_ in range(args.rounds):
        for kind in kinds:
            results[kind].append(_measure(kind, args.seconds))
        loads.append(os.getloadavg()[0])
        print(f"round {round_ + 1}: " + ", ".join(f"{k} {v[-1]['cpu_rtf']:.2f}x CPU {v[-1]['rtf']:.2f}x wall"
                                                  for k, v in results.items()), flush=True)
    print(f"\n{os.cpu_count()} cores, load average (1 min) {min(loads):.1f}..{max(loads):.1f} during the run")
    for kind, runs in results.items():
        target = "" if kind == "plain" else "   (target >= 2x)"
        for key, what in (("cpu_rtf", "CPU"), ("rtf", "wall")):
            values = [run[key] for run in runs]
            print(f"{kind:>6}: {what:>4} real-time factor median {statistics.median(values):5.2f}x "
                  f"(range {min(values):.2f}..{max(values):.2f}){target if key == 'cpu_rtf' else ''}")


if __name__ == "__main__":
    main()
