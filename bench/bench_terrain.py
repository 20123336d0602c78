"""Big-terrain benchmark (issue 29): headless load time and peak memory of a 2049² 16-bit heightmap and a
4097² GeoTIFF elevation model, with the demo's rover, sensors and user code on them.

    python bench/bench_terrain.py [--seconds 2] [--only heightmap|dem] [--keep DIR]

Writes the terrain files into a temporary folder (a smooth hilly surface: sums of sines, 20 m of relief
over kilometres), copies the demo project beside each with its terrain replaced, and runs
`/usr/bin/time -v sear run PROJECT --headless --duration SECONDS --log LOG` on it; reports the wall-clock
time and the peak resident memory (the run loads, builds the world and runs SECONDS simulated seconds, the
demo robot driving its square), with the plain demo's run as a baseline in the same session.

Targets: the heightmap <= 10 s and <= 1.5 GB, the DEM <= 20 s and <= 2.5 GB.
"""

from __future__ import annotations

import argparse
import math
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
SEAR = [sys.executable, "-m", "sear"]


def hills(rows: int, cols: int, dx: float) -> np.ndarray:
    """Smooth hills (m, float32; rows north to south): 20 m of relief, slopes under ~6°."""
    y = (np.arange(rows, dtype=np.float32) * dx)[:, None]
    x = (np.arange(cols, dtype=np.float32) * dx)[None, :]
    z = np.float32(8.0) * np.sin(x / 180.0) * np.cos(y / 230.0)
    z += np.float32(5.0) * np.sin((x + y) / 95.0 + 1.0)
    z += np.float32(1.0) * np.sin(x / 23.0) * np.sin(y / 31.0)
    return z.astype(np.float32)


def write_heightmap(path: Path, side: int) -> None:
    """A side x side 16-bit grey PNG of the hills (black lowest, white highest)."""
    from PIL import Image

    z = hills(side, side, 1.0)
    grey = np.round((z - z.min()) / (z.max() - z.min()) * 65535.0).astype(np.uint16)
    Image.fromarray(grey).save(path)


def write_geotiff(path: Path, side: int, pixel: float = 1.0, zone: int = 17, easting: float = 500_000.0,
                  northing: float = 3_900_000.0, base: float = 250.0) -> None:
    """A side x side float32 GeoTIFF DEM in WGS-84 / UTM `zone` north, `pixel` m pixels, its north-west
    pixel corner at (easting, northing); heights base + hills, metres."""
    import tifffile

    z = hills(side, side, pixel) + np.float32(base)
    keys = [1, 1, 0, 5,
            1024, 0, 1, 1,          # GTModelType: projected
            1025, 0, 1, 1,          # GTRasterType: pixel is area
            3072, 0, 1, 32600 + zone,  # ProjectedCSType: WGS 84 / UTM zone N
            3076, 0, 1, 9001,       # ProjLinearUnits: metre
            4099, 0, 1, 9001]       # VerticalUnits: metre
    tifffile.imwrite(path, z, extratags=[
        (33550, "d", 3, (pixel, pixel, 0.0), True),
        (33922, "d", 6, (0.0, 0.0, 0.0, easting, northing, 0.0), True),
        (34735, "H", len(keys), keys, True)])


def project_for(folder: Path, terrain: Path, size: float | None = None, height: float | None = None) -> Path:
    """The demo project copied into `folder` with `terrain` as its terrain file."""
    shutil.copytree(ROOT / "assets" / "demo", folder, dirs_exist_ok=True)
    prj = folder / "demo.prj"
    text = prj.read_text()
    extra = ""
    if size is not None:
        extra = f"\n    <heightmap_size>{size}</heightmap_size>\n    <heightmap_height>{height}</heightmap_height>"
    text = text.replace("<file>terrain.obj</file>", f"<file>{terrain.name}</file>{extra}")
    prj.write_text(text)
    shutil.copy(terrain, folder / terrain.name)
    return prj


def measure(prj: Path, seconds: float) -> tuple[float, float, str]:
    """Wall-clock seconds and peak RSS (GB) of one headless run, and its last output line."""
    log = prj.parent / "run.csv"
    cmd = ["/usr/bin/time", "-v", *SEAR, "run", str(prj), "--headless", "--duration", str(seconds),
           "--log", str(log), "--force"]
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=prj.parent)
    err = done.stderr
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)", err)
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", err)
    if wall is None or rss is None or done.returncode != 0:
        raise SystemExit(f"the run of {prj} failed ({done.returncode}):\n{done.stdout[-2000:]}\n{err[-3000:]}")
    parts = [float(v) for v in wall.group(1).split(":")]
    seconds_taken = sum(v * 60.0 ** i for i, v in enumerate(reversed(parts)))
    tail = (done.stdout.strip().splitlines() or [""])[-1]
    return seconds_taken, int(rss.group(1)) / 1e6, tail


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="simulated seconds of each run")
    parser.add_argument("--only", choices=("heightmap", "dem"), help="measure one terrain only")
    parser.add_argument("--keep", type=Path, help="write the files into this folder and keep them")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="sear-bench-terrain-")) if args.keep is None else args.keep
    folder.mkdir(parents=True, exist_ok=True)
    try:
        rows = []
        demo = project_for(folder / "demo", ROOT / "assets" / "demo" / "terrain.obj")
        rows.append(("demo (baseline)", *measure(demo, args.seconds), None))
        if args.only in (None, "heightmap"):
            png = folder / "hills2049.png"
            write_heightmap(png, 2049)
            prj = project_for(folder / "heightmap", png, size=2048.0, height=27.0)
            rows.append(("2049² 16-bit PNG heightmap", *measure(prj, args.seconds), (10.0, 1.5)))
        if args.only in (None, "dem"):
            tif = folder / "dem4097.tif"
            write_geotiff(tif, 4097)
            prj = project_for(folder / "dem", tif)
            rows.append(("4097² float32 GeoTIFF DEM (UTM 17N, 1 m)", *measure(prj, args.seconds), (20.0, 2.5)))
        print(f"\n{'terrain':44s} {'wall s':>8s} {'peak GB':>8s}  target")
        for name, wall, rss, _, target in rows:
            goal = "" if target is None else f"<= {target[0]:g} s, <= {target[1]:g} GB: " + (
                "met" if wall <= target[0] and rss <= target[1] else "MISSED")
            print(f"{name:44s} {wall:8.2f} {rss:8.3f}  {goal}")
        if math.isnan(rows[0][1]):
            raise SystemExit(1)
    finally:
        if args.keep is None:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
