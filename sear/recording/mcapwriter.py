"""`FastWriter`: the `mcap` library's Writer with a cheaper way to add a message.

Writer.add_message builds a Message record object and writes it field by field: about 15 µs a message
on the machines we measure, where a recording of the demo writes ~350 messages per simulated second and
may cost at most a tenth of the run's CPU (bench/bench_recording.py). `add` appends the same record
bytes (opcode, length, channel, sequence 0, log and publish time, data) to the chunk in one write and
keeps the same statistics (and, when asked for, message index) the library keeps, so the library's own chunking,
compression, indexes, summary and footer are written as ever. It reaches into the Writer's private
state; with an mcap version whose state differs it falls back to add_message (tests/recording reads
every file back with the library's readers, the indexed one included).
"""

from __future__ import annotations

import struct
from typing import Any

from mcap.opcode import Opcode
from mcap.records import MessageIndex
from mcap.writer import IndexType, Writer

_MESSAGE = struct.Struct("<BQHIQQ")
"""A Message record's opcode, record length, channel id, sequence, log time and publish time."""


class FastWriter(Writer):
    def __init__(self, output: Any, *, chunk_size: int, index_types: IndexType = IndexType.ALL,
                 **options: Any) -> None:
        super().__init__(output, chunk_size=chunk_size, index_types=index_types, **options)
        self._chunk_limit = chunk_size
        self._indexed = bool(index_types & IndexType.MESSAGE)
        chunk = getattr(self, "_Writer__chunk_builder", None)
        self._fast = (chunk is not None and hasattr(self, "_Writer__statistics")
                      and hasattr(self, "_Writer__maybe_finalize_chunk")
                      and hasattr(getattr(chunk, "record_writer", None), "_buffer")
                      and hasattr(chunk, "message_indices") and hasattr(chunk, "num_messages"))

    def add(self, channel_id: int, log_time: int, data: bytes) -> None:
        """A message of `channel_id` at `log_time` ns (its publish time too)."""
        if not self._fast:
            self.add_message(channel_id, log_time, data, log_time)
            return
        chunk = self._Writer__chunk_builder  # type: ignore[attr-defined]
        stats = self._Writer__statistics  # type: ignore[attr-defined]
        buffer = chunk.record_writer._buffer
        if chunk.num_messages == 0:
            chunk.message_start_time = chunk.message_end_time = log_time
        elif log_time < chunk.message_start_time:
            chunk.message_start_time = log_time
        elif log_time > chunk.message_end_time:
            chunk.message_end_time = log_time
        if self._indexed:
            index = chunk.message_indices.get(channel_id)
            if index is None:
                index = chunk.message_indices[channel_id] = MessageIndex(channel_id=channel_id, records=[])
            index.records.append((log_time, buffer.tell()))
        chunk.num_messages += 1
        buffer.write(_MESSAGE.pack(Opcode.MESSAGE, 22 + len(data), channel_id, 0, log_time, log_time))
        buffer.write(data)
        if stats.message_count == 0:
            stats.message_start_time = stats.message_end_time = log_time
        elif log_time < stats.message_start_time:
            stats.message_start_time = log_time
        elif log_time > stats.message_end_time:
            stats.message_end_time = log_time
        stats.channel_message_counts[channel_id] += 1
        stats.message_count += 1
        if buffer.tell() > self._chunk_limit:
            self._Writer__maybe_finalize_chunk()  # type: ignore[attr-defined]
