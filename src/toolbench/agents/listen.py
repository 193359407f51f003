"""The listening socket of a loopback server (``toolbench serve``, with or without ``--mcp``),
kept apart from the MCP server so serving a plain simulator needs no ``mcp`` extra."""

from __future__ import annotations

import errno
import socket

from toolbench.errors import UserError


def listening_socket(host: str, port: int) -> socket.socket:
    """A listening socket, or a one-line ``UserError`` naming --host/--port and the fix
    (bound here first, so a taken port is one line, not uvicorn's exit, and ``--port 0``
    can say which port it got)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError):
        raise UserError(f"--host {host}: not an address of this machine; try 127.0.0.1") from None
    family, _, _, _, address = infos[0]
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise UserError(
                f"--port {port}: already in use; pick another (--port 0 picks a free one)"
            ) from None
        raise UserError(
            f"--host {host} --port {port}: cannot listen there ({exc.strerror})"
        ) from None
    sock.listen(128)  # connections made right after the announcement wait, not fail
    return sock
