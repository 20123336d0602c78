"""Recording a run into an MCAP file, reading it back, and re-simulating from it (issue 27).

sear.recording.reader's docstring is the API; sear.recording.writer writes what docs/recording.md
describes. `Recording` and `resimulate` are imported lazily: reading a file needs no physics.
"""

from __future__ import annotations

from typing import Any

__all__ = ["Recording", "RecordingError", "attach_user_code", "resimulate"]


def __getattr__(name: str) -> Any:
    if name in ("Recording", "RecordingError"):
        from sear.recording import reader

        return getattr(reader, name)
    if name in ("resimulate", "attach_user_code"):
        from sear.recording import resume

        return getattr(resume, name)
    raise AttributeError(name)
