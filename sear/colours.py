"""The colours things are drawn in, shared by the window's 3-D view and the RGB camera (one definition, so
the camera sees the world the window shows).

Colours are RGB triples from 0 to 1 (display values, as the window draws them).
"""

from __future__ import annotations

import numpy as np

ROBOT_COLOURS: tuple[tuple[float, float, float], ...] = (
    (0.55, 0.6, 0.78), (0.85, 0.5, 0.35), (0.45, 0.72, 0.45), (0.8, 0.72, 0.35), (0.65, 0.5, 0.78),
    (0.4, 0.72, 0.75))
"""Body colours of the robots, in turn (the first robot's is the one-robot window's)."""


def robot_colour(index: int) -> tuple[float, float, float]:
    """The body colour of robot `index` (0, 1, ...)."""
    return ROBOT_COLOURS[index % len(ROBOT_COLOURS)]


def terrain_colours(vertices: np.ndarray, vertex_colors: np.ndarray | None) -> np.ndarray:
    """(N, 3) colour of each terrain vertex: the model's own vertex colours ((N, 3 or 4) uint8) where it
    has them, else by height (green low, brown halfway, snow white high)."""
    if vertex_colors is not None and len(vertex_colors) == len(vertices):
        return np.asarray(vertex_colors, dtype=float)[:, :3] / 255.0
    z = np.asarray(vertices, dtype=float)[:, 2]
    t = (z - z.min()) / max(float(np.ptp(z)), 1e-6) if len(z) else z
    low, mid, high = np.array([0.27, 0.55, 0.25]), np.array([0.6, 0.55, 0.33]), np.array([0.92, 0.92, 0.9])
    return np.where(t[:, None] < 0.6, low + (mid - low) * (t[:, None] / 0.6),
                    mid + (high - mid) * ((t[:, None] - 0.6) / 0.4))
