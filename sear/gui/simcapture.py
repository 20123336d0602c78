"""Pictures and films of the simulation window's 3-D view: a PNG of the view as it is drawn (its HUD
included), and an MP4 film of it in simulated time.

A film is written by FFmpeg (H.264, yuv420p) through imageio-ffmpeg, whose PyPI wheel ships its own
ffmpeg binary: no system FFmpeg, no codec of our own. Frames are taken in simulated time, FPS a simulated
second: each drawn frame is written as many times as film frames fell due since the last one (none when
the simulation has not moved on a whole film frame), so a film of T simulated seconds lasts T seconds and
holds round(T * FPS) frames whatever the window's frame rate or the machine's speed.
"""

from __future__ import annotations

import math
from collections.abc import Generator
from pathlib import Path
from typing import Any

import numpy as np
from PySide6.QtCore import QSettings, QStandardPaths
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QWidget

from sear.errors import SearError

FPS = 25
"""Film frames per simulated second."""
PICTURES_KEY = "simulation/pictures_folder"
"""QSettings key of the folder the user last chose for pictures and films (F12 saves there at once)."""


class CaptureError(SearError):
    """A picture or film could not be written: a sentence naming the file and what to do."""


def grab_view(view: QWidget) -> QImage:
    """The 3-D view as drawn now, with what lies over it (the HUD, the picked object's label), as 24-bit RGB."""
    return view.grab().toImage().convertToFormat(QImage.Format.Format_RGB888)


def image_rgb(image: QImage, size: tuple[int, int] | None = None) -> np.ndarray:
    """`image` as an (height, width, 3) uint8 array, scaled to `size` (width, height; pixels) if given."""
    image = image.convertToFormat(QImage.Format.Format_RGB888)
    if size is not None and (image.width(), image.height()) != size:
        from PySide6.QtCore import Qt

        image = image.scaled(size[0], size[1], Qt.AspectRatioMode.IgnoreAspectRatio,
                             Qt.TransformationMode.SmoothTransformation)
    width, height, stride = image.width(), image.height(), image.bytesPerLine()
    rows = np.frombuffer(image.constBits(), dtype=np.uint8, count=stride * height).reshape(height, stride)
    return np.ascontiguousarray(rows[:, : 3 * width].reshape(height, width, 3))


def save_picture(image: QImage, path: str | Path) -> Path:
    """Write `image` as a PNG at `path` (the folder made if missing); returns the path."""
    path = Path(path)
    if path.suffix.lower() != ".png":
        path = path.with_suffix(path.suffix + ".png") if path.suffix else path.with_suffix(".png")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CaptureError(f"cannot make the folder {path.parent} ({exc.strerror or exc}); choose another "
                           "folder for pictures.") from None
    if not image.save(str(path)):  # PNG: the suffix says so
        raise CaptureError(f"cannot write the picture {path}; choose a folder you can write to.")
    return path


def pictures_folder() -> Path | None:
    """The folder the user chose for pictures and films (remembered in SEAR's settings), or None before
    they first chose one."""
    folder = QSettings().value(PICTURES_KEY, None)
    return Path(str(folder)) if folder else None


def remember_pictures_folder(folder: Path) -> None:
    QSettings().setValue(PICTURES_KEY, str(folder))


def default_pictures_start() -> Path:
    """Where the file dialog for a picture or film first opens: the folder chosen last, else the user's
    Pictures folder (never the project's or SEAR's own)."""
    chosen = pictures_folder()
    if chosen is not None and chosen.is_dir():
        return chosen
    standard = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.PicturesLocation)
    return Path(standard) if standard else Path.home()


def picture_name(project: str, time: float, suffix: str = ".png") -> str:
    """A file name for a picture or film of `project` at simulated `time` (s): "demo-t12.34s.png"."""
    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in project) or "sear"
    return f"{safe}-t{time:.2f}s{suffix}"


class FilmWriter:
    """An MP4 film written frame by frame in simulated time (see the module's docstring).

    The frame size is fixed by the first frame (rounded down to even numbers of pixels, as H.264's 4:2:0
    colours need); later frames of another size (the window resized) are scaled to it."""

    def __init__(self, path: str | Path, fps: int = FPS) -> None:
        self.path = Path(path)
        if self.path.suffix.lower() != ".mp4":
            self.path = self.path.with_suffix(".mp4")
        self.fps = fps
        self.size: tuple[int, int] | None = None
        """(width, height) in pixels, once the first frame is in."""
        self.frames = 0
        """Film frames written so far."""
        self.start: float | None = None
        """Simulated time (s) of the first frame."""
        self._writer: Generator[Any, Any, Any] | None = None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with open(self.path, "wb"):
                pass
        except OSError as exc:
            raise CaptureError(f"cannot write the film {self.path} ({exc.strerror or exc}); choose a folder "
                               "you can write to.") from None

    @property
    def seconds(self) -> float:
        """Length of the film so far (s)."""
        return self.frames / self.fps

    def due(self, time: float) -> int:
        """How many frames fall due at simulated `time` (s): those whose times (start + k / fps) are at or
        before it and not yet written (1 for the first frame)."""
        if self.start is None:
            return 1
        return max(0, math.floor((time - self.start) * self.fps + 1e-6) + 1 - self.frames)

    def add(self, time: float, image: QImage) -> int:
        """The view as drawn at simulated `time` (s): written as many times as film frames fell due (see
        due()); returns that number. A time before the last frame's writes nothing."""
        count = self.due(time)
        if count == 0:
            return 0
        if self.start is None:
            self.start = time
            self.size = (image.width() // 2 * 2, image.height() // 2 * 2)
            if self.size[0] < 2 or self.size[1] < 2:
                raise CaptureError("the 3-D view is too small to film; make the window larger.")
            self._open()
        assert self._writer is not None
        frame = image_rgb(image, self.size)
        try:
            for _ in range(count):
                self._writer.send(frame)
        except (OSError, RuntimeError) as exc:
            self.close()
            raise CaptureError(f"FFmpeg stopped writing {self.path} ({exc}); is the disk full?") from None
        self.frames += count
        return count

    def _open(self) -> None:
        import imageio_ffmpeg

        assert self.size is not None
        # macro_block_size 2: the frame is already even-sized (imageio-ffmpeg would otherwise scale it to a
        # multiple of 16); quality 7 of 10 keeps a 1000-pixel view's film near 1 MB a minute.
        self._writer = imageio_ffmpeg.write_frames(str(self.path), self.size, fps=self.fps, codec="libx264",
                                                   pix_fmt_in="rgb24", pix_fmt_out="yuv420p", quality=7,
                                                   macro_block_size=2, ffmpeg_log_level="error")
        self._writer.send(None)  # starts FFmpeg

    def close(self) -> Path:
        """Finish the film (FFmpeg writes its index); returns its path. A film with no frame is removed."""
        writer, self._writer = self._writer, None
        if writer is not None:
            writer.close()
        elif self.frames == 0:
            self.path.unlink(missing_ok=True)
        return self.path


def read_film(path: str | Path) -> tuple[tuple[int, int], int, float]:
    """(width, height), frame count and frames per second of the film at `path`, read back by decoding
    every frame with the ffmpeg imageio-ffmpeg ships: what the film holds, not what its header claims.

    The size and rate come from imageio-ffmpeg's reader (its generator closed after the header: read to
    the end, it leaves ffmpeg's pipes open once ffmpeg has exited); the frames are counted from ffmpeg's
    raw RGB output."""
    import subprocess

    import imageio_ffmpeg

    reader = imageio_ffmpeg.read_frames(str(path))
    meta = reader.__next__()
    reader.close()
    width, height = (int(v) for v in meta["size"])
    frame_bytes = width * height * 3
    command = [imageio_ffmpeg.get_ffmpeg_exe(), "-v", "error", "-i", str(path), "-f", "rawvideo",
               "-pix_fmt", "rgb24", "-"]
    total = 0
    with subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL) as process:
        assert process.stdout is not None
        while chunk := process.stdout.read(1 << 20):
            total += len(chunk)
    return (width, height), total // frame_bytes, float(meta["fps"])


class ViewCapture:
    """The window's pictures and films of `view`: File > Save Picture (F12: at once into the pictures
    folder chosen before, with a name from the project and the time; the first time, or Save Picture As,
    a file dialog) and File > Record Video (a toggle: a file dialog, then every drawn frame until it is
    unticked). `note` tells the user (the console); `name` and `time` give the project's name and the
    simulated time (s) now."""

    def __init__(self, parent: QWidget, view: QWidget, note, name, time) -> None:
        self.parent = parent
        self.view = view
        self.note = note
        self.name = name
        self.time = time
        self.film: FilmWriter | None = None

    def ask_path(self, title: str, suffix: str, kind: str) -> Path | None:
        from PySide6.QtWidgets import QFileDialog

        start = default_pictures_start() / picture_name(self.name(), self.time(), suffix)
        chosen, _ = QFileDialog.getSaveFileName(self.parent, title, str(start), kind)
        if not chosen:
            return None
        path = Path(chosen)
        remember_pictures_folder(path.parent)
        return path

    def save_picture(self, ask: bool = False, path: str | Path | None = None) -> Path | None:
        """A PNG of the view now: at `path`, else in the pictures folder (asked for the first time, or when
        `ask`); returns where it was written (None: cancelled or failed, the console says why)."""
        image = grab_view(self.view)
        if path is None:
            folder = pictures_folder()
            if ask or folder is None or not folder.is_dir():
                path = self.ask_path("Save a picture of the 3-D view", ".png", "PNG pictures (*.png)")
                if path is None:
                    return None
            else:
                path = folder / picture_name(self.name(), self.time())
        try:
            written = save_picture(image, path)
        except CaptureError as exc:
            self.note(f"Picture not saved: {exc}\n")
            return None
        self.note(f"Picture saved: {written} ({image.width()}×{image.height()})\n")
        return written

    def start_film(self, path: str | Path | None = None) -> bool:
        """Start filming the view into `path` (None: a file dialog); False when cancelled or not writable."""
        if path is None:
            path = self.ask_path("Record a video of the 3-D view", ".mp4", "MP4 videos (*.mp4)")
            if path is None:
                return False
        try:
            self.film = FilmWriter(path)
        except CaptureError as exc:
            self.note(f"Not filming: {exc}\n")
            return False
        self.note(f"Recording a video to {self.film.path} ({FPS} frames a simulated second)\n")
        self.frame_drawn()
        return True

    def stop_film(self) -> Path | None:
        film, self.film = self.film, None
        if film is None:
            return None
        path = film.close()
        if film.frames:
            self.note(f"Video written: {path} ({film.seconds:.1f} s, {film.frames} frames, "
                      f"{film.size[0]}×{film.size[1]})\n" if film.size else "")
            return path
        self.note("Video not written: no frame was drawn.\n")
        return None

    def frame_drawn(self) -> None:
        """After each frame is drawn: the film's frames due at this simulated time (see FilmWriter)."""
        film = self.film
        if film is None or film.due(self.time()) == 0:
            return
        try:
            film.add(self.time(), grab_view(self.view))
        except CaptureError as exc:
            self.film = None
            self.note(f"Video stopped: {exc}\n")

    def status(self) -> str:
        """The status bar's word on the film under way (its length, the progress a user sees), or ""."""
        film = self.film
        return f"● REC video {film.seconds:5.1f} s ({film.frames} frames)   |   " if film is not None else ""
