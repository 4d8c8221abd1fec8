"""An HTTP CONNECT proxy for the push-sender tests: it tunnels to 127.0.0.1 only and records each tunnel.

Same command line as the other doubles (see push_double.py): prints its port first, appends one JSON line per
CONNECT to --records ({"method": "CONNECT", "path": "<host:port>", "headers": [...]}) before answering, exits
when stdin closes or after --max-seconds. --require-auth "user:password" answers 407 to a CONNECT without that
Basic Proxy-Authorization.
"""

import argparse
import asyncio
import base64
import json
import socket
import sys
import threading


def main() -> None:
    parser = argparse.ArgumentParser(description="CONNECT proxy double")
    parser.add_argument("--records", required=True)
    parser.add_argument("--max-seconds", type=float, default=300.0)
    parser.add_argument("--require-auth", default=None)
    arguments = parser.parse_args()
    asyncio.run(serve(arguments))


async def pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, asyncio.CancelledError):
        pass
    finally:
        writer.close()


async def serve(arguments) -> None:
    expected = None
    if arguments.require_auth:
        expected = "Basic " + base64.b64encode(arguments.require_auth.encode()).decode()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        method, target, _ = lines[0].split(" ", 2)
        headers = [[name.strip().lower(), value.strip()] for name, value in (line.split(":", 1) for line in lines[1:] if ":" in line)]
        with open(arguments.records, "a") as records:
            records.write(json.dumps({"method": method, "path": target, "http_version": "1.1", "headers": headers, "body": ""}) + "\n")
        host, _, port = target.rpartition(":")
        authorization = dict(headers).get("proxy-authorization")
        if method != "CONNECT" or host != "127.0.0.1":
            writer.write(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n")
        elif expected is not None and authorization != expected:
            writer.write(b"HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic\r\nContent-Length: 0\r\n\r\n")
        else:
            upstream_reader, upstream_writer = await asyncio.open_connection("127.0.0.1", int(port))
            writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
            await writer.drain()
            await asyncio.gather(pipe(reader, upstream_writer), pipe(upstream_reader, writer))
            return
        await writer.drain()
        writer.close()

    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    server = await asyncio.start_server(handle, sock=listener)
    print(listener.getsockname()[1], flush=True)

    # Stop when the test process goes away (stdin closes) or after --max-seconds.
    stop = asyncio.get_running_loop().create_future()
    loop = asyncio.get_running_loop()
    threading.Thread(target=lambda: (sys.stdin.read(), loop.call_soon_threadsafe(lambda: stop.done() or stop.set_result(None))), daemon=True).start()
    async with server:
        try:
            await asyncio.wait_for(stop, timeout=arguments.max_seconds)
        except asyncio.TimeoutError:
            pass


if __name__ == "__main__":
    main()
