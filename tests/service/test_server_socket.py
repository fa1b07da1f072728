"""The listening socket: accepted connections send small responses without Nagle's delay."""

from __future__ import annotations

import asyncio
import socket

from smartctx.service.server import bind_socket


def test_accepted_connections_have_tcp_nodelay() -> None:
    async def scenario() -> int:
        seen: list[int] = []

        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            sock = writer.get_extra_info("socket")
            seen.append(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            writer.close()

        listener = bind_socket("127.0.0.1", 0)
        server = await asyncio.start_server(handle, sock=listener)
        port = listener.getsockname()[1]
        async with server:
            _reader, writer = await asyncio.open_connection("127.0.0.1", port)
            await _reader.read()
            writer.close()
        return seen[0]

    assert asyncio.run(scenario()) != 0
