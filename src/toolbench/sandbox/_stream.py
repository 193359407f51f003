"""The worker's byte streams: the program process's pipe as its template reads it, and the
framed channel the template talks to its parent and its shared program process over.

A program process writes ``WORLD_READY`` once its world is built (from then on anything it
writes may be the program's), then any number of host calls (``host.CALL`` + 4-byte length +
JSON, each answered by the template on a second pipe while the program waits), then its reply,
up to end of file. The template reads it without trusting it: a deadline that pauses while a
host call is being answered, and a cap on everything kept.
"""

from __future__ import annotations

import os
import select
import struct
import time

from toolbench.sandbox import host

WORLD_READY = b"W"  # a program process has built its world; program code may run from now


class Stream:
    """The program process's pipe as the template reads it: ``WORLD_READY``, then any number of
    host calls (``host.CALL`` + length + JSON), then the reply up to end of file; a deadline
    (monotonic seconds) and a cap on what is kept."""

    def __init__(self, fd: int, budget_s: float, cap: int) -> None:
        self.fd = fd
        self.deadline = time.monotonic() + budget_s
        self.cap = cap
        self.buffer = bytearray()
        self.start = 0  # host calls are parsed from here (after WORLD_READY); -1: no more
        self.timed_out = False
        self.eof = False
        self.poller = select.poll()
        self.poller.register(fd, select.POLLIN)

    def _fill(self) -> bool:
        """Read more; False at end of file, at the deadline or past the cap."""
        if self.eof or self.timed_out or len(self.buffer) > self.cap:
            return False
        remaining = self.deadline - time.monotonic()
        if remaining <= 0 or not self.poller.poll(max(1, int(remaining * 1000))):
            self.timed_out = True
            return False
        chunk = os.read(self.fd, 1 << 16)
        if not chunk:
            self.eof = True
            return False
        self.buffer += chunk
        return True

    def next_call(self) -> bytes | None:
        """The next host call's JSON body (at most ``cap + 1`` bytes of it: the caller refuses
        an oversized one), or None once the reply follows (read to its end) or nothing does."""
        while True:
            if self.start == 0:
                if not self.buffer:
                    if not self._fill():
                        return None
                    continue
                self.start = len(WORLD_READY) if self.buffer[:1] == WORLD_READY else -1
            if self.start == -1:
                while self._fill():
                    pass
                return None
            if len(self.buffer) <= self.start:
                if not self._fill():
                    return None
                continue
            if self.buffer[self.start : self.start + 1] != host.CALL:
                self.start = -1
                continue
            body = self._call_body()
            if body is not None:
                return body
            if not self._fill():
                return None

    def _call_body(self) -> bytes | None:
        """The host call at ``start`` if it has fully arrived (removed from the buffer)."""
        end = self.start + 1 + host.LENGTH.size
        if len(self.buffer) < end:
            return None
        (size,) = host.LENGTH.unpack_from(self.buffer, self.start + 1)
        if size > self.cap:
            return bytes(self.cap + 1)
        if len(self.buffer) < end + size:
            return None
        body = bytes(self.buffer[end : end + size])
        del self.buffer[self.start : end + size]
        return body

    def data(self) -> bytes:
        return bytes(self.buffer[: self.cap + 1])


_FRAME_HEADER = struct.Struct("!i")  # multiprocessing.Connection's: a signed 32-bit length


class Channel:
    """Framed messages over one file descriptor, framed as ``multiprocessing.Connection``
    frames them (the parent's ``_protocol.frame`` / ``FrameReader`` speak the same). The
    template needs only this of ``Connection``; importing multiprocessing cost every template
    1.6 MB, and every page a template holds is copied at each fork and cleared at each exit."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.poller: select.poll | None = None

    def send_bytes(self, data: bytes) -> None:
        view = memoryview(_FRAME_HEADER.pack(len(data)) + data)
        while view:
            view = view[os.write(self.fd, view) :]

    def recv_bytes(self, maxlength: int | None = None) -> bytes:
        """The next message; EOFError at end of file, OSError if it is longer than
        ``maxlength`` (nothing of it is read then), as ``Connection.recv_bytes``."""
        (size,) = _FRAME_HEADER.unpack(self._exactly(_FRAME_HEADER.size))
        if size < 0 or (maxlength is not None and size > maxlength):
            raise OSError("bad message length")
        return self._exactly(size)

    def poll(self, timeout: float) -> bool:
        """Whether a message (or end of file) can be read within ``timeout`` seconds."""
        if self.poller is None:
            self.poller = select.poll()
            self.poller.register(self.fd, select.POLLIN)
        return bool(self.poller.poll(max(0, int(timeout * 1000))))

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def _exactly(self, size: int) -> bytes:
        chunks, left = [], size
        while left:
            chunk = os.read(self.fd, min(left, 1 << 20))
            if not chunk:
                raise EOFError
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
