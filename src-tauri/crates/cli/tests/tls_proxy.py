"""A TLS front for a plain HTTP server on loopback, for testing MCP over https.

usage: tls_proxy.py CERT KEY
Prints a free port for the plain server, waits for the server to listen there, then listens on
a free port of its own and prints it; every connection is decrypted and piped to the server.
"""

import asyncio
import socket
import ssl
import sys


async def pipe(reader, writer):
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    finally:
        writer.close()


async def wait_for(port, seconds=30):
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while True:
        try:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.close()
            return
        except OSError:
            if loop.time() > deadline:
                sys.exit(f"nothing listens on port {port}")
            await asyncio.sleep(0.1)


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


async def main(cert, key):
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    target = free_port()
    print(target, flush=True)
    await wait_for(target)

    async def front(reader, writer):
        back_reader, back_writer = await asyncio.open_connection("127.0.0.1", target)
        await asyncio.gather(pipe(reader, back_writer), pipe(back_reader, writer), return_exceptions=True)

    server = await asyncio.start_server(front, "127.0.0.1", 0, ssl=context)
    print(server.sockets[0].getsockname()[1], flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
