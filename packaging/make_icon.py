"""Draws SEAR's application icon: packaging/sear.svg and its renderings packaging/sear.png (256 px, for the
desktop entry) and sear/data/sear.png (the windows' icon, shipped in the package).

    python packaging/make_icon.py

A rover on a green hill under a sky, its sensor rays fanning out ahead: the simulator at a glance.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def svg() -> str:
    """The icon as SVG text, on a 256 × 256 canvas."""
    rays = []
    for i in range(7):  # the fan of sensor rays, from the rover's mast forwards and down to the ground
        angle = math.radians(-28 + i * 8)
        x2, y2 = 150 + 92 * math.cos(angle), 104 - 92 * math.sin(angle)
        rays.append(f'<line x1="150" y1="104" x2="{x2:.1f}" y2="{y2:.1f}"/>')
    return f"""<svg xmlns="http://www.w3.org/2000/svg" width="256" height="256" viewBox="0 0 256 256">
  <defs>
    <linearGradient id="sky" x1="0" y1="0" x2="0" y2="1">
      <stop offset="0" stop-color="#6fa8dc"/><stop offset="1" stop-color="#d4e6f5"/>
    </linearGradient>
    <linearGradient id="hill" x1="0" y1="0" x2="0" y2="1">
      <stop offset="0" stop-color="#7cb85a"/><stop offset="1" stop-color="#3f7a34"/>
    </linearGradient>
    <linearGradient id="body" x1="0" y1="0" x2="0" y2="1">
      <stop offset="0" stop-color="#a9b6e0"/><stop offset="1" stop-color="#5d6ea8"/>
    </linearGradient>
    <clipPath id="tile"><rect x="8" y="8" width="240" height="240" rx="44"/></clipPath>
  </defs>
  <g clip-path="url(#tile)">
    <rect x="8" y="8" width="240" height="240" fill="url(#sky)"/>
    <path d="M8 176 C 70 130, 150 150, 248 120 L 248 248 L 8 248 Z" fill="url(#hill)"/>
    <path d="M8 212 C 90 186, 170 200, 248 176 L 248 248 L 8 248 Z" fill="#356b2c" opacity="0.55"/>
  </g>
  <g stroke="#e8412f" stroke-width="5" stroke-linecap="round" opacity="0.9">
    {" ".join(rays)}
  </g>
  <g transform="rotate(-9 110 150)">
    <rect x="52" y="118" width="120" height="40" rx="10" fill="url(#body)" stroke="#2b3356" stroke-width="5"/>
    <rect x="132" y="98" width="26" height="22" rx="5" fill="#5d6ea8" stroke="#2b3356" stroke-width="5"/>
    <circle cx="78" cy="164" r="21" fill="#2a2a30" stroke="#101014" stroke-width="4"/>
    <circle cx="78" cy="164" r="8" fill="#9a9aa6"/>
    <circle cx="148" cy="164" r="21" fill="#2a2a30" stroke="#101014" stroke-width="4"/>
    <circle cx="148" cy="164" r="8" fill="#9a9aa6"/>
  </g>
  <rect x="8" y="8" width="240" height="240" rx="44" fill="none" stroke="#2b3356" stroke-width="6"/>
</svg>
"""


def render(svg_path: Path, png_path: Path, size: int) -> None:
    """Render `svg_path` to a `size`-pixel square PNG with Qt's SVG renderer (no display needed)."""
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QGuiApplication, QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    _app = QGuiApplication.instance() or QGuiApplication(["make_icon", "-platform", "offscreen"])
    image = QImage(size, size, QImage.Format.Format_ARGB32)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    QSvgRenderer(str(svg_path)).render(painter)
    painter.end()
    if not image.save(str(png_path)):
        raise OSError(f"cannot write {png_path}")


def main() -> int:
    svg_path = HERE / "sear.svg"
    svg_path.write_text(svg())
    render(svg_path, HERE / "sear.png", 256)
    render(svg_path, ROOT / "sear" / "data" / "sear.png", 128)
    for path in (svg_path, HERE / "sear.png", ROOT / "sear" / "data" / "sear.png"):
        print(path.relative_to(ROOT))
    return 0


if __name__ == "__main__":
    sys.exit(main())
