"""The process's standard output and error kept usable: after their reader went away (a closed pipe)
and after user code closed Python's file objects for them. Used by the loop's output, the launcher and
the command line, which all write to them to the end."""

from __future__ import annotations

import os
import sys


def silence_closed_pipe(name: str) -> None:
    """Standard output or error (`name`) whose reader went away (`sear run ... | head`): its descriptor
    now points at /dev/null, so later writes and the interpreter's own flush at exit don't fail."""
    fd = 1 if name == "stdout" else 2
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, fd)
    finally:
        os.close(devnull)


def reopen_std_streams() -> None:
    """Standard output and error usable again after user code closed them (`sys.stdout.close()` closes
    Python's file object, not the process's descriptors 1 and 2): new file objects on the same descriptors."""
    for name, fd in (("stdout", 1), ("stderr", 2)):
        stream = getattr(sys, name)
        if stream is None or stream.closed:
            try:
                setattr(sys, name, open(fd, "w", buffering=1, encoding="utf-8",  # noqa: SIM115
                                        errors="backslashreplace", closefd=False))
            except OSError:
                setattr(sys, name, open(os.devnull, "w"))  # noqa: SIM115 - the descriptor itself is gone
