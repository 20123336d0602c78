"""Draw the nested-cone ray pattern of an infrared sensor for docs/sensors.md.

    python docs/make_cone_figure.py [OUT.png]

Uses the simulation's own pattern (sear.sensors.range.cone_directions) and Pillow, so the figure shows
exactly the rays SEAR casts: a side view (the teardrop of equal-length rays) and the view along the beam.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sear.sensors.range import cone_directions, cone_radii, ray_count

BEAM_CM, RANGE_CM, RESOLUTION_CM = 6.0, 80.0, 1.0   # Sharp GP2D12


def main(out: Path) -> None:
    dirs = cone_directions(BEAM_CM, RANGE_CM, RESOLUTION_CM)
    ends = dirs * RANGE_CM
    w, h = 1400, 560
    img = Image.new("RGB", (w, h), "white")
    d = ImageDraw.Draw(img)
    font = ImageFont.load_default()
    colours = [(31, 119, 180), (255, 127, 14), (44, 160, 44), (214, 39, 40), (148, 103, 189), (140, 86, 75)]
    radii = cone_radii(BEAM_CM, RESOLUTION_CM)

    def cone_of(i: int) -> int:
        if i == 0:
            return len(radii)  # the axis ray
        counts = [max(1, math.floor(2 * math.pi * r / RESOLUTION_CM)) for r in radii]
        k = i - 1
        for c, n in enumerate(counts):
            if k < n:
                return c
            k -= n
        return len(radii)

    # Side view: x along the beam (0..80 cm), y across it, stretched 6x so the cone is visible.
    ox, oy, sx, sy = 60, 270, 11.0, 11.0 * 6
    title = f"Side view (across-beam scale x6): {ray_count(BEAM_CM, RESOLUTION_CM)} rays, all {RANGE_CM:g} cm long"
    d.text((ox, 20), title, fill="black", font=font)
    for i, (x, y, _z) in enumerate(ends):
        d.line([(ox, oy), (ox + x * sx, oy - y * sy)], fill=colours[cone_of(i) % len(colours)], width=1)
    d.line([(ox, oy + 230), (ox + RANGE_CM * sx, oy + 230)], fill="black")
    for cm in range(0, int(RANGE_CM) + 1, 10):
        d.line([(ox + cm * sx, oy + 225), (ox + cm * sx, oy + 235)], fill="black")
        d.text((ox + cm * sx - 8, oy + 240), f"{cm} cm", fill="black", font=font)
    # End view: where the rays cross the plane at the maximum range.
    cx, cy, scale = 1180, 280, 60.0
    d.text((1000, 20), "Along the beam, at the end of the rays", fill="black", font=font)
    for i, (_x, y, z) in enumerate(ends):
        c = colours[cone_of(i) % len(colours)]
        d.ellipse([cx + y * scale - 3, cy - z * scale - 3, cx + y * scale + 3, cy - z * scale + 3], fill=c)
    for r in radii:
        d.text((cx + r * scale + 6, cy - 6), f"{r:g}", fill="black", font=font)
    d.text((1000, 480), f"Cones of radius {', '.join(f'{r:g}' for r in radii)} cm + the axis ray", fill="black",
           font=font)
    d.text((1000, 500), f"beam {BEAM_CM:g} cm, resolution {RESOLUTION_CM:g} cm (Sharp GP2D12)", fill="black", font=font)
    out.parent.mkdir(parents=True, exist_ok=True)
    img.save(out)


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent / "images" / "cone-pattern.png")
