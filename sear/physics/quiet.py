"""pybullet imported without its build-time line on standard error."""

from __future__ import annotations

import os
import sys
import tempfile

BUILD_TIME_LINE = b"pybullet build time:"
"""pybullet writes "pybullet build time: <date>" to standard error when it is imported: not an error,
yet the settings window shows a simulation's standard error in red, on every Simulate."""


def import_pybullet_quietly() -> None:
    """Import pybullet with its build-time line left out of standard error; anything else it writes there
    is passed on. The package imports it first in every run (sear.physics comes before the sensors), so
    the line never reaches a terminal or the settings window's console."""
    if "pybullet" in sys.modules:
        return
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError):  # no usable file descriptor 2: nothing to keep clean
        import pybullet
        return
    with tempfile.TemporaryFile() as captured:
        os.dup2(captured.fileno(), 2)
        try:
            import pybullet  # noqa: F401
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        captured.seek(0)
        rest = b"".join(line for line in captured.readlines() if not line.startswith(BUILD_TIME_LINE))
    if rest:
        os.write(2, rest)

