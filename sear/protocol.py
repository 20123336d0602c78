"""The SEAR controller protocol: framing, message encoding and the `sim` calls a controller may make.

One protocol for every controller, the Python user code process the simulation starts (over a
socketpair) and an external controller in any language (TCP on 127.0.0.1): frames of a 4-byte
big-endian length and one MessagePack map. docs/controller-protocol.md is the specification; this module
is its code, used by both ends (the simulation, sear.usercode, and the controller, sear.controller), so
the calls and their argument checks are written down once.

MessagePack (the `msgpack` library) rather than a format of our own: it is a published specification
with well-kept implementations in every language users write controllers in, it carries IEEE doubles
bit for bit (readings and commands arrive exactly, so a run stays deterministic) and raw bytes (LIDAR
scans), and the handful of types SEAR uses take a page of C to encode and decode
(examples/controllers/c/square.c).
"""

from __future__ import annotations

import contextlib
import socket
import struct
import time
from collections import namedtuple
from typing import Any, NamedTuple

import msgpack
import numpy as np

from sear import simapi

VERSION = 1
"""Protocol version: the `version` of hello and welcome. A controller speaking another one is refused."""

MAX_FRAME = 8 * 1024 * 1024
"""Bytes: the largest message body either end accepts (a bigger length is a protocol error)."""

_LENGTH = struct.Struct(">I")


class ProtocolError(Exception):
    """The peer broke the protocol (framing, encoding, a message out of place): the connection ends."""


class Closed(Exception):
    """The peer closed the connection (or it broke)."""


class Pose(NamedTuple):
    """Ground-truth pose: position in metres (ENU) and roll, pitch, yaw in radians (yaw 0 = east,
    counter-clockwise positive, as REP 103)."""

    x: float
    y: float
    z: float
    roll: float
    pitch: float
    yaw: float


class CallSpec(NamedTuple):
    """A `sim` call a controller may make over the protocol. Its arguments (names, order, defaults, kinds,
    units and ranges) are the sim API's own: sear.simapi.SIM_API."""

    batched: bool
    """True: a setter with no result, which a controller may send with its turn's `done` (no round trip)."""
    unit: str
    """What the arguments and result mean, in units (for the protocol document and error messages)."""


CALLS: dict[str, CallSpec] = {
    "accelerate": CallSpec(True, "force N, negative reverses"),
    "brake": CallSpec(True, "force N, 0 releases"),
    "steer": CallSpec(True, "angle rad, positive left"),
    "drive": CallSpec(True, "left, right force N, negative reverses"),
    "add_tree": CallSpec(False, "m"),
    "add_box": CallSpec(False, "m, m, m, m, kg"),
    "add_wall": CallSpec(False, "m"),
    "add_table": CallSpec(False, "m"),
    "pose": CallSpec(False, "result [x, y, z] m, [roll, pitch, yaw] rad"),
    "gripper": CallSpec(False, "open true/false or nil, height m or nil"),
    "speed": CallSpec(False, "result m/s"),
    "read_sick": CallSpec(False, "result: SICK 16-bit values or nil"),
    "show_grid": CallSpec(False, "grid: ndarray (rows south to north), x, y m, cell m, title"),
}
"""Every `sim` call a controller makes of the simulation. Reading sensors, the time and the sensor names
need no call: they come with each turn (see docs/controller-protocol.md)."""

_ARGS: dict[str, tuple[simapi.Arg, ...]] = {name: simapi.SIM_API[name].args for name in CALLS}
"""Each call's arguments as the sim API states them: one rule for a controller's calls and a script's."""

_SETTERS: dict[str, tuple[float, float]] = {
    name: (_ARGS[name][0].lo, _ARGS[name][0].hi) for name, spec in CALLS.items()
    if spec.batched and len(_ARGS[name]) == 1}
"""The one-number setters (accelerate, brake, steer) and their closed ranges, for check_call's fast path."""


def _short(value: Any) -> str:
    """repr(value), cut to 60 characters: an error quotes a bad value without echoing a flood back."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def check_call(name: Any, args: Any) -> tuple[str, list[Any]]:
    """The call `name` with `args` checked against CALLS, defaults filled in and numbers as floats; a
    TypeError / ValueError naming the call and the argument otherwise. Both ends use it: the controller
    raises at the user's own line, the simulation refuses what a foreign controller sends."""
    if (type(name) is str and name in _SETTERS and type(args) in (list, tuple) and len(args) == 1
            and type(args[0]) is float and _SETTERS[name][0] <= args[0] <= _SETTERS[name][1]):
        return name, list(args)  # the common case, every control tick: a setter with a float in its range
    if not isinstance(name, str) or name not in CALLS:
        raise ValueError(f"unknown call {_short(name)}; the calls are: {', '.join(CALLS)}")
    if not isinstance(args, list | tuple):
        raise TypeError(f"sim.{name}: the arguments must be an array, not {type(args).__name__}")
    params = _ARGS[name]
    if len(args) > len(params):
        raise TypeError(f"sim.{name} takes at most {len(params)} argument(s) "
                        f"({', '.join(p.name for p in params)}), not {len(args)}")
    out: list[Any] = []
    for i, param in enumerate(params):
        if i < len(args):
            value = args[i]
        elif param.default is ...:
            raise TypeError(f"sim.{name}: missing argument {param.name!r}")
        else:
            value = param.default
        if param.kind == "grid" and isinstance(value, dict):  # an ndarray as to_wire sends it
            value = _wire_array(name, param, value)
        out.append(simapi.check_arg(name, param, value))  # type, finite, range: sear.simapi's rule
    return name, out


def _wire_array(call: str, param: simapi.Arg, value: dict[str, Any]) -> np.ndarray:
    """An array argument as to_wire sent it, decoded; TypeError naming the call when it is not one."""
    try:
        array = from_wire(value)
    except Exception as exc:  # a foreign controller's map may be anything: every failure is a refusal
        raise TypeError(f"sim.{call}: {param.name} is not an ndarray as the protocol sends one "
                        f"({type(exc).__name__})") from None
    if not isinstance(array, np.ndarray):
        raise TypeError(f"sim.{call}: {param.name} must be an ndarray (a map with _type 'ndarray')")
    return array


# --- values on the wire -----------------------------------------------------------------------------------

def to_wire(value: Any) -> Any:
    """A reading (or a call's result) as MessagePack can carry it: nil, bool, int, float, str, arrays;
    a NamedTuple as {"_type", "fields", "values", "attrs"}; a numpy array as {"_type": "ndarray", "dtype",
    "shape", "data" (bytes, little-endian)}."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, np.ndarray):
        array = np.ascontiguousarray(value)
        dtype = array.dtype.newbyteorder("<") if array.dtype.byteorder == ">" else array.dtype
        return {"_type": "ndarray", "dtype": dtype.str, "shape": list(array.shape),
                "data": array.astype(dtype, copy=False).tobytes()}
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        attrs = {k: to_wire(v) for k, v in getattr(value, "__dict__", {}).items()}
        return {"_type": type(value).__name__, "fields": list(value._fields),
                "values": [to_wire(v) for v in value], "attrs": attrs}
    if isinstance(value, list | tuple):
        return [to_wire(v) for v in value]
    raise TypeError(f"a {type(value).__name__} cannot be sent to a controller")


_RECORDS: dict[tuple[str, tuple[str, ...]], type] = {}


def _record_type(name: str, fields: tuple[str, ...]) -> type:
    """A named tuple class `name` with `fields` that also takes attributes (GpsReading's .nmea)."""
    key = (name, fields)
    cls = _RECORDS.get(key)
    if cls is None:
        base = namedtuple(name, fields)  # type: ignore[misc]
        cls = _RECORDS[key] = type(name, (base,), {"__doc__": f"A {name} reading from the simulation."})
    return cls


def from_wire(value: Any) -> Any:
    """A value to_wire() sent, as the controller's Python sees it (named tuples and numpy arrays again)."""
    if isinstance(value, dict):
        kind = value.get("_type")
        if kind == "ndarray":
            array = np.frombuffer(value["data"], dtype=np.dtype(value["dtype"]))
            return array.reshape(value["shape"]).copy()
        if isinstance(kind, str) and kind.isidentifier():
            fields = tuple(value["fields"])
            record = _record_type(kind, fields)(*(from_wire(v) for v in value["values"]))
            for k, v in value.get("attrs", {}).items():
                setattr(record, k, from_wire(v))
            return record
        return {k: from_wire(v) for k, v in value.items()}
    if isinstance(value, list):
        return [from_wire(v) for v in value]
    return value


# --- framing ----------------------------------------------------------------------------------------------

_pack = msgpack.Packer(use_bin_type=True).pack


def frame(message: dict[str, Any]) -> bytes:
    """One message as it goes on the wire: 4-byte big-endian length, then the MessagePack map."""
    body = _pack(message)
    return _LENGTH.pack(len(body)) + body


class Connection:
    """One end of a controller connection: whole messages out, whole messages in (with a time-out)."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self._buf = bytearray()
        self.closed = False

    def send(self, message: dict[str, Any]) -> None:
        """Send one message; Closed when the peer is gone."""
        if self.closed:
            raise Closed("the connection is closed")
        try:
            self.sock.sendall(frame(message))
        except OSError as exc:
            raise Closed(str(exc)) from None

    def recv(self, timeout: float | None = None) -> dict[str, Any]:
        """The next message. TimeoutError after `timeout` s (None: wait) with no whole message (a part
        stays buffered); Closed at the end of the stream; ProtocolError for a bad frame or body."""
        deadline = None if timeout is None else time.monotonic() + timeout
        buf = self._buf
        while True:
            if len(buf) >= 4:
                (length,) = _LENGTH.unpack_from(buf)
                if length == 0 or length > MAX_FRAME:
                    raise ProtocolError(f"a frame of {length} bytes (1 to {MAX_FRAME} allowed)")
                if len(buf) >= 4 + length:
                    body = bytes(buf[4:4 + length])
                    del buf[:4 + length]
                    return decode(body)
            if self.closed:
                raise Closed("the connection is closed")
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError
                self.sock.settimeout(left)
            else:
                self.sock.settimeout(None)
            try:
                chunk = self.sock.recv(1 << 16)
            except TimeoutError:
                raise
            except OSError as exc:
                raise Closed(str(exc)) from None
            if not chunk:
                raise Closed("the peer closed the connection" + (" in the middle of a message" if buf else ""))
            buf += chunk

    def close(self) -> None:
        self.closed = True
        with contextlib.suppress(OSError):
            self.sock.close()


def decode(body: bytes) -> dict[str, Any]:
    """One message body: a MessagePack map with a string `t`; ProtocolError for anything else."""
    try:
        message = msgpack.unpackb(body, raw=False, strict_map_key=True, use_list=True,
                                  max_bin_len=MAX_FRAME, max_str_len=MAX_FRAME, max_array_len=1 << 20,
                                  max_map_len=1 << 16, max_ext_len=0)
    except Exception as exc:  # msgpack raises several classes (ExtraData, FormatError, ValueError, ...)
        raise ProtocolError(f"the message is not valid MessagePack ({type(exc).__name__})") from None
    if not isinstance(message, dict) or not isinstance(message.get("t"), str):
        raise ProtocolError("a message must be a map with a string 't' (its type)")
    return message


def signal_name(number: int) -> str:
    """'SIGSEGV' for 11 (the number itself when the system has no name for it)."""
    import signal

    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"

