"""Protocol values (msgpack's types) in a recording's JSON messages, and back."""

from __future__ import annotations

import base64
from typing import Any

import numpy as np

_PLAIN = (float, int, str, bool, type(None))


def wire_to_json(value: Any) -> Any:
    """A protocol value (msgpack's types) as JSON holds it: bytes as {"$bytes": base64}."""
    if type(value) is list and all(type(item) in _PLAIN for item in value):  # a call's numbers, most often
        return value
    if isinstance(value, bytes | bytearray):
        return {"$bytes": base64.b64encode(bytes(value)).decode("ascii")}
    if isinstance(value, dict):
        return {str(k): wire_to_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [wire_to_json(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    return value


def json_to_wire(value: Any) -> Any:
    """wire_to_json undone."""
    if isinstance(value, dict):
        if set(value) == {"$bytes"}:
            return base64.b64decode(value["$bytes"])
        return {k: json_to_wire(v) for k, v in value.items()}
    if isinstance(value, list):
        return [json_to_wire(v) for v in value]
    return value
