"""The SEAR controller protocol: framing, message encoding, and checking a call message by its declaration.

One protocol for every controller, the Python user code process the simulation starts (over a
socketpair) and an external controller in any language (TCP on 127.0.0.1): frames of a 4-byte
big-endian length and one MessagePack map. docs/controller-protocol.md is the specification; this module
is its code, used by both ends (the simulation, sear.usercode, and the controller, sear.controller). The
calls themselves are declared once on the simulation's side (sear.runtime.sim); the welcome carries
their declarations to the controller (calls_to_wire, calls_from_wire), and both ends check a call's
arguments by them (check_call).

MessagePack (the `msgpack` library) rather than a format of our own: it is a published specification
with well-kept implementations in every language users write controllers in, it carries IEEE doubles
bit for bit (readings and commands arrive exactly, so a run stays deterministic) and raw bytes (LIDAR
scans), and the handful of types SEAR uses take a page of C to encode and decode
(examples/controllers/c/square.c).
"""

from __future__ import annotations

import contextlib
import keyword
import math
import socket
import struct
import sys
import threading
import time
from collections import namedtuple
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

import msgpack

if TYPE_CHECKING:
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


# --- calls ------------------------------------------------------------------------------------------------

def _short(value: Any) -> str:
    """repr(value), cut to 60 characters: an error quotes a bad value without echoing a flood back."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def check_args(call: simapi.Call, args: Any) -> list[Any]:
    """A call message's `args` for `call`: checked by its declaration, defaults filled in, numbers as
    floats; a TypeError / ValueError naming the call and the argument otherwise. Both ends use it: the
    controller raises at the user's own line, the simulation refuses what a foreign controller sends."""
    setter = call.setter_range
    if (setter is not None and type(args) in (list, tuple) and len(args) == 1 and type(args[0]) is float
            and setter[0] <= args[0] <= setter[1]):
        return list(args)  # the common case, every control tick: a setter with a float in its range
    name = call.name
    if not isinstance(args, list | tuple):
        raise TypeError(f"sim.{name}: the arguments must be an array, not {type(args).__name__}")
    params = call.args
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
    return out


def check_call(calls: Mapping[str, simapi.Call], name: Any, args: Any) -> tuple[simapi.Call, list[Any]]:
    """The call `name` of the table `calls` and its `args` checked (check_args); ValueError for a name
    the table does not hold."""
    call = calls.get(name) if isinstance(name, str) else None
    if call is None:
        raise ValueError(f"unknown call {_short(name)}; the calls are: {', '.join(calls)}")
    return call, check_args(call, args)


def _wire_array(call: str, param: simapi.Arg, value: dict[str, Any]) -> np.ndarray:
    """An array argument as to_wire sent it, decoded; TypeError naming the call when it is not one."""
    try:
        array = from_wire(value)
    except Exception as exc:  # a foreign controller's map may be anything: every failure is a refusal
        raise TypeError(f"sim.{call}: {param.name} is not an ndarray as the protocol sends one "
                        f"({type(exc).__name__})") from None
    numpy = sys.modules.get("numpy")  # from_wire imported it for an array
    if numpy is None or not isinstance(array, numpy.ndarray):
        raise TypeError(f"sim.{call}: {param.name} must be an ndarray (a map with _type 'ndarray')")
    return array


def result_to_wire(value: Any) -> Any:
    """A call's result as the protocol sends it: a named tuple (sim.pose's Pose) as a plain array of its
    values, anything else as to_wire sends it."""
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return [to_wire(v) for v in value]
    return to_wire(value)


# --- the call table in the welcome ----------------------------------------------------------------------

_ARG_FIELDS: dict[str, tuple[type | tuple[type, ...], Any]] = {
    "kind": (str, "number"), "unit": (str, ""), "lo": ((int, float), -math.inf), "hi": ((int, float), math.inf),
    "lo_open": (bool, False), "hi_open": (bool, False), "none_ok": (bool, False)}
"""An argument's fields in the welcome's `calls`, their types and the values they have when left out."""


def calls_to_wire(calls: Iterable[simapi.Call]) -> list[dict[str, Any]]:
    """The welcome's `calls`: every call a controller may make with a call message, as maps of its name,
    kind, help, result type and arguments (docs/controller-protocol.md, Handshake)."""
    out = []
    for call in calls:
        args = []
        for arg in call.args:
            entry: dict[str, Any] = {"name": arg.name, **{key: getattr(arg, key) for key in _ARG_FIELDS}}
            if arg.default is not ...:
                entry["default"] = arg.default
            args.append(entry)
        out.append({"name": call.name, "kind": call.kind, "help": call.help, "returns": call.returns, "args": args})
    return out


def _identifier(value: Any, what: str) -> str:
    if not (isinstance(value, str) and value.isidentifier() and not value.startswith("_")
            and not keyword.iskeyword(value) and value != "self"):
        raise ProtocolError(f"the welcome's calls: {what} {_short(value)} is not a name a call or an argument "
                            "can have")
    return value


def calls_from_wire(value: Any) -> dict[str, simapi.Call]:
    """The welcome's `calls` read back into declarations, by name; ProtocolError saying what is wrong
    with a table that is not one. Fields a later version adds are ignored."""
    if not isinstance(value, list):
        raise ProtocolError(f"the welcome's calls must be an array, not {type(value).__name__}")
    calls: dict[str, simapi.Call] = {}
    for entry in value:
        if not isinstance(entry, dict):
            raise ProtocolError(f"the welcome's calls: {_short(entry)} is not a map")
        name = _identifier(entry.get("name"), "the call name")
        kind, help_text, returns = entry.get("kind"), entry.get("help", ""), entry.get("returns", "Any")
        if kind not in simapi.CALL_KINDS or not isinstance(help_text, str) or not isinstance(returns, str):
            raise ProtocolError(f"the welcome's calls: {name} needs a kind ({', '.join(simapi.CALL_KINDS)}) and "
                                "a text help and returns")
        args = []
        wire_args = entry.get("args", [])
        if not isinstance(wire_args, list):
            raise ProtocolError(f"the welcome's calls: the args of {name} must be an array")
        for arg in wire_args:
            if not isinstance(arg, dict):
                raise ProtocolError(f"the welcome's calls: an argument of {name} is not a map")
            fields: dict[str, Any] = {"name": _identifier(arg.get("name"), f"an argument of {name}")}
            for key, (types, missing) in _ARG_FIELDS.items():
                field_value = arg.get(key, missing)
                if not isinstance(field_value, types) or (key in ("lo", "hi") and isinstance(field_value, bool)):
                    raise ProtocolError(f"the welcome's calls: {key} of {name}'s {fields['name']} is "
                                        f"{_short(field_value)}")
                fields[key] = float(field_value) if isinstance(field_value, int | float) else field_value
            if fields["kind"] not in simapi.ARG_KINDS:
                raise ProtocolError(f"the welcome's calls: {name}'s {fields['name']} has the unknown kind "
                                    f"{_short(fields['kind'])}")
            if "default" in arg:
                default = arg["default"]
                if not (default is None or isinstance(default, bool | int | float | str)):
                    raise ProtocolError(f"the welcome's calls: the default of {name}'s {fields['name']} is "
                                        f"{_short(default)}, not nil, a boolean, a number or a string")
                fields["default"] = default
            args.append(simapi.Arg(**fields))
        calls[name] = simapi.Call(name, tuple(args), kind, help_text, returns)
    return calls


# --- values on the wire -----------------------------------------------------------------------------------

def to_wire(value: Any) -> Any:
    """A reading (or a call's result) as MessagePack can carry it: nil, bool, int, float, str, arrays;
    a NamedTuple as {"_type", "fields", "values", "attrs"}; a numpy array as {"_type": "ndarray", "dtype",
    "shape", "data" (bytes, little-endian)}."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    # numpy's values can only exist once numpy is imported: a controller whose user code never imports it
    # does not load it (0.15-0.2 s of CPU a process) just to ask whether a value is an array.
    numpy = sys.modules.get("numpy")
    if numpy is not None and isinstance(value, numpy.ndarray):
        array = numpy.ascontiguousarray(value)
        dtype = array.dtype.newbyteorder("<") if array.dtype.byteorder == ">" else array.dtype
        return {"_type": "ndarray", "dtype": dtype.str, "shape": list(array.shape),
                "data": array.astype(dtype, copy=False).tobytes()}
    if numpy is not None and isinstance(value, numpy.generic):
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
            import numpy as np  # the first array a controller receives loads numpy, not its start

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
        self._sending = threading.Lock()

    def send(self, message: dict[str, Any]) -> None:
        """Send one message; Closed when the peer is gone. Safe from several threads: each frame goes out
        whole (a user code thread's print never cuts into another message)."""
        if self.closed:
            raise Closed("the connection is closed")
        data = frame(message)
        try:
            with self._sending:
                self.sock.sendall(data)
        except OSError as exc:
            raise Closed(str(exc)) from None

    def _buffered(self) -> dict[str, Any] | None:
        """The next message if the buffer holds it whole (taken out of the buffer), else None."""
        buf = self._buf
        if len(buf) >= 4:
            (length,) = _LENGTH.unpack_from(buf)
            if length == 0 or length > MAX_FRAME:
                raise ProtocolError(f"a frame of {length} bytes (1 to {MAX_FRAME} allowed)")
            if len(buf) >= 4 + length:
                body = bytes(buf[4:4 + length])
                del buf[:4 + length]
                return decode(body)
        return None

    def recv_ready(self) -> dict[str, Any] | None:
        """The next message if what has arrived holds it whole, after one read that does not wait; else
        None (a part stays buffered). Closed and ProtocolError as recv(). For serving many connections
        from one select() loop, where a slow one must not hold up the others."""
        message = self._buffered()
        if message is not None:
            return message
        if self.closed:
            raise Closed("the connection is closed")
        previous = self.sock.gettimeout()
        self.sock.setblocking(False)
        try:
            chunk = self.sock.recv(1 << 16)
        except BlockingIOError:
            return None
        except OSError as exc:
            raise Closed(str(exc)) from None
        finally:
            with contextlib.suppress(OSError):
                self.sock.settimeout(previous)
        if not chunk:
            raise Closed("the peer closed the connection" + (" in the middle of a message" if self._buf else ""))
        self._buf += chunk
        return self._buffered()

    def recv(self, timeout: float | None = None) -> dict[str, Any]:
        """The next message. TimeoutError after `timeout` s (None: wait) with no whole message (a part
        stays buffered); Closed at the end of the stream; ProtocolError for a bad frame or body."""
        deadline = None if timeout is None else time.monotonic() + timeout
        buf = self._buf
        while True:
            message = self._buffered()
            if message is not None:
                return message
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

