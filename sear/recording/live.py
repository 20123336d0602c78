"""`sear run --foxglove [PORT]`: the run served live over Foxglove's WebSocket protocol (the `foxglove-sdk`
server on 127.0.0.1 only), with the same topics, schemas and messages as a recording (sear.recording.writer).
Open it in Foxglove with "Open connection", ws://127.0.0.1:PORT. A client that cannot keep up loses the
oldest messages (the SDK's backlog per client), never slows the run.
"""

from __future__ import annotations

from typing import Any

from sear.errors import SearError
from sear.recording.writer import Recorder

DEFAULT_PORT = 8765
BACKLOG = 4096
"""Messages queued per client before the oldest are dropped (the SDK's default is 1,024)."""


class _ServerSink:
    """What Recorder writes to, as a WebSocket server: each topic a foxglove-sdk channel (JSON, its schema
    Foxglove's), each message logged on it; attachments and metadata stay with the file formats."""

    def __init__(self, port: int) -> None:
        try:
            import foxglove
        except ImportError as exc:
            raise SearError(f"--foxglove needs foxglove-sdk ({exc}); install it with `pip install 'sear[tools]'`."
                            ) from None
        self._foxglove = foxglove
        self.context = foxglove.Context()
        try:
            self.server = foxglove.start_server(name="SEAR", host="127.0.0.1", port=port, context=self.context,
                                                message_backlog_size=BACKLOG)
        except Exception as exc:  # the SDK's error when the port is taken
            raise SearError(f"--foxglove cannot serve on 127.0.0.1 port {port} ({exc}); choose another port "
                            "(--foxglove PORT).") from None
        self._schemas: dict[int, tuple[str, bytes]] = {}
        self._channels: dict[int, Any] = {}

    @property
    def port(self) -> int:
        return int(self.server.port)

    def start(self, profile: str = "", library: str = "") -> None:
        pass

    def add_attachment(self, *args: Any) -> None:
        pass

    def add_metadata(self, *args: Any) -> None:
        pass

    def register_schema(self, name: str, encoding: str, data: bytes) -> int:
        schema_id = len(self._schemas) + 1
        self._schemas[schema_id] = (name, data)
        return schema_id

    def register_channel(self, topic: str, message_encoding: str, schema_id: int, metadata: dict[str, str]) -> int:
        name, data = self._schemas[schema_id]
        schema = self._foxglove.Schema(name=name, encoding="jsonschema", data=data)
        channel = self._foxglove.Channel(topic, schema=schema, message_encoding=message_encoding, context=self.context,
                                         metadata=metadata)
        channel_id = len(self._channels) + 1
        self._channels[channel_id] = channel
        return channel_id

    def add(self, channel_id: int, log_time: int, data: bytes) -> None:
        self._channels[channel_id].base.log(data, log_time)

    def flush(self) -> None:
        pass

    def finish(self) -> None:
        for channel in self._channels.values():
            channel.close()
        self.server.stop()


class LiveServer(Recorder):
    """A run's observer serving it live (see the module's docstring). The server starts with the run
    (`started`), or earlier with `listen()` so its port is known before; it stops when the run closes."""

    def __init__(self, port: int = DEFAULT_PORT) -> None:
        super().__init__("")
        self._file = None
        self._port = port
        self._sink: _ServerSink | None = None

    def listen(self) -> int:
        """Start the server now; the port it listens on (port 0 asked for a free one)."""
        if self._sink is None:
            self._sink = _ServerSink(self._port)
        return self._sink.port

    def _open(self) -> Any:
        self.listen()
        return self._sink
