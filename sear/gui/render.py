"""`sear render FILE.mcap OUT.mp4`: a recording's 3-D view filmed frame by frame, for reports.

The replay window (sear.gui.replay) is built on the recording with only its 3-D view (and the HUD over
it) at the film's size, and every film frame's moment (FPS a simulated second) is drawn and written
(sear.gui.simcapture.FilmWriter), as fast as the machine draws, not in real time. It draws with OpenGL, so
it needs an X display: sear.launcher starts a private Xvfb when none is set (Qt's offscreen platform has
no OpenGL).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

from PySide6.QtWidgets import QApplication, QDockWidget, QToolBar

from sear.gui.simcapture import FPS, FilmWriter, grab_view


def render(recording: str | Path, output: str | Path, *, camera: str = "follow", start: float = 0.0,
           end: float | None = None, size: tuple[int, int] = (1280, 720),
           progress: Callable[[int, int], object] | None = None) -> FilmWriter:
    """Film `recording` from `start` to `end` s (None: its end) through `camera` ('follow', 'top', 'fixed'
    or 'free') into `output` (.mp4) at `size` (width, height; pixels, even); returns the finished film.
    `progress(done, total)` after each frame."""
    from sear.gui.app import configure_qt
    from sear.gui.replay import open_replay

    configure_qt()
    app = QApplication.instance() or QApplication([])
    window = open_replay(recording)
    film: FilmWriter | None = None
    try:
        for widget in (*window.findChildren(QDockWidget), *window.findChildren(QToolBar)):
            widget.hide()
        window.menuBar().hide()
        window.statusBar().hide()
        window.view.setFixedSize(size[0] // 2 * 2, size[1] // 2 * 2)
        window.adjustSize()
        window.show()
        app.processEvents()
        window.cameras.choose(camera)
        duration = window.recording.duration
        first = min(max(0.0, start), duration)
        last = duration if end is None else min(max(first, end), duration)
        total = math.floor((last - first) * FPS + 1e-6) + 1
        film = FilmWriter(output)
        for index in range(total):
            moment = first + index / FPS
            window.seek(moment)
            film.add(moment, grab_view(window.view))
            if progress is not None:
                progress(index + 1, total)
        film.close()
        return film
    except BaseException:
        if film is not None:
            film.close()
        raise
    finally:
        window.close()
        window.simulation.close()
        window.deleteLater()
        app.processEvents()
