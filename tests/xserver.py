"""Private X servers (Xvfb) for the tests.

Every server is started with `-displayfd`: Xvfb itself picks a free display number and writes it once it
accepts connections. Parallel test workers (pytest-xdist) each start their own server at the same moment,
and choosing the number from the lock files in /tmp, as before, let two of them pick the same one.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

START_SECONDS = 120.0
"""How long Xvfb may take to accept connections (well under a second on an idle machine; a loaded one
with several test workers starting servers at once can take many times that)."""

_ARGS = ("-nolisten", "tcp", "+extension", "GLX")


def available() -> bool:
    """Whether Xvfb is installed (Debian's xvfb, installed by `make test`)."""
    return shutil.which("Xvfb") is not None


def _wait_for_display(number_file: Path, is_running, what: str) -> str:
    """The display (":N") Xvfb wrote into `number_file` once it is ready."""
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        text = number_file.read_text() if number_file.exists() else ""
        if text.endswith("\n") and text.strip().isdigit():
            return f":{text.strip()}"
        if not is_running():
            raise RuntimeError(f"{what} ended before it accepted connections")
        time.sleep(0.02)
    raise RuntimeError(f"{what} did not accept connections within {START_SECONDS:g} s")


def start_for_this_process(screen: str = "1600x1000x24") -> str:
    """Start Xvfb for the rest of this process's life and return its display (":N").

    Xvfb must outlive the Qt application, which Python tears down only at interpreter exit (Qt aborts
    with status 1 when its X connection breaks first), so a small shell watcher stops Xvfb once this
    process has gone, instead of a clean-up hook of pytest. The shell started here returns at once,
    leaving the watcher in the background (no child of this process is left running, so none is
    reported as leaked).
    """
    folder = Path(tempfile.mkdtemp(prefix="sear-tests-xvfb-"))
    number_file = folder / "display"
    xvfb = " ".join(("Xvfb", "-displayfd", "3", "-screen", "0", screen, *_ARGS))
    watcher = (f"{xvfb} 3>'{number_file}' >/dev/null 2>&1 & x=$!; "
               f"while kill -0 {os.getpid()} 2>/dev/null && kill -0 $x 2>/dev/null; do sleep 0.5; done; "
               f"kill $x 2>/dev/null; rm -rf '{folder}'")
    subprocess.run(["sh", "-c", f"( {watcher} ) >/dev/null 2>&1 &"], stdin=subprocess.DEVNULL,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True, check=True)
    # The watcher removes the folder once Xvfb has gone: Xvfb running is the folder still being there
    # with no number in it yet.
    return _wait_for_display(number_file, folder.exists, f"Xvfb ({screen}) for the test process {os.getpid()}")


@contextmanager
def private_display(screen: str) -> Iterator[str]:
    """An Xvfb server with one screen of `screen` ("WIDTHxHEIGHTxDEPTH") for the `with` block: its display
    (":N"). Stopped (and waited for) when the block ends."""
    with tempfile.TemporaryDirectory(prefix="sear-tests-xvfb-") as folder:
        number_file = Path(folder) / "display"
        with open(number_file, "w") as out:
            server = subprocess.Popen(["Xvfb", "-displayfd", str(out.fileno()), "-screen", "0", screen, *_ARGS],
                                      pass_fds=(out.fileno(),), stdin=subprocess.DEVNULL,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            yield _wait_for_display(number_file, lambda: server.poll() is None, f"Xvfb ({screen})")
        finally:
            server.terminate()
            try:
                server.wait(30)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()


def xdotool(*args: str, env: dict[str, str] | None = None) -> None:
    """Run `xdotool ARGS` (on `env`'s DISPLAY, or this process's). A `mousemove --sync X Y` onto the place
    the pointer already is is left out: xdotool then waits ~15 s for a motion event that never comes."""
    if len(args) == 4 and args[:2] == ("mousemove", "--sync"):
        where = subprocess.run(["xdotool", "getmouselocation", "--shell"], check=True, timeout=30, env=env,
                               capture_output=True, text=True).stdout
        place = dict(line.split("=", 1) for line in where.split())
        if (place.get("X"), place.get("Y")) == (args[2], args[3]):
            return
    subprocess.run(["xdotool", *args], check=True, timeout=30, env=env)
