"""A TCP relay between an operator and its cluster, whose connections a test cuts: a lost network, on both backends.

The operator is given the relay's URL (`url`); the bytes pass untouched, TLS included (the envtest server's
certificate names 127.0.0.1, whatever the port). `cut()` breaks every connection open and refuses new ones
(accepted, then reset at once) until `restore()`: whatever the operator had open breaks mid-stream, and it
keeps trying to reconnect meanwhile. The real server never learns of it: its state goes on as it would.
"""
import asyncio
import contextlib
import urllib.parse
from types import TracebackType


class Relay:

    def __init__(self, url: str) -> None:
        parsed = urllib.parse.urlparse(url)
        self.scheme, self.host, self.port = parsed.scheme, parsed.hostname or '127.0.0.1', parsed.port
        self.open = True
        self.url = ''
        self.accepted = 0  # connections accepted while open (each relayed to the cluster)
        self._server: asyncio.Server | None = None
        self._transports: set[asyncio.WriteTransport] = set()

    async def __aenter__(self) -> 'Relay':
        self._server = await asyncio.start_server(self._serve, '127.0.0.1', 0)
        self.url = f'{self.scheme}://127.0.0.1:{self._server.sockets[0].getsockname()[1]}'
        return self

    async def __aexit__(self, et: type[BaseException] | None, e: BaseException | None,
                        tb: TracebackType | None) -> None:
        self.cut()
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    def cut(self) -> None:
        """Break every connection now; refuse new ones until `restore()`."""
        self.open = False
        for transport in list(self._transports):
            transport.abort()
        self._transports.clear()

    def restore(self) -> None:
        self.open = True

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if not self.open:
            writer.transport.abort()
            return
        try:
            upstream_reader, upstream_writer = await asyncio.open_connection(self.host, self.port)
        except OSError:
            writer.transport.abort()
            return
        self.accepted += 1
        pair = {writer.transport, upstream_writer.transport}
        self._transports |= pair
        try:
            await asyncio.gather(_pipe(reader, upstream_writer), _pipe(upstream_reader, writer))
        finally:
            for transport in pair:
                transport.abort()
            self._transports -= pair


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    with contextlib.suppress(OSError):
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()

