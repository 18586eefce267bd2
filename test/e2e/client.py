#!/usr/bin/python3
"""Raw TLS clients for what curl cannot do, used by test/e2e/run.sh.

  client.py headers-only PORT CAFILE
      Sends the headers of a POST /mutate announcing a 4 MiB body, and no
      body at all. Prints the status code of the answer (or "none").

  client.py trickle PORT CAFILE
      Sends a request's headers one byte per second. Prints "connected"
      once the TLS handshake is done, then "closed after N.N s" when the
      server drops the connection, or "open after N s" at 30 s.

  client.py idle PORT CAFILE FILE
      POSTs FILE as a review on a keep-alive connection, then sends
      nothing. Prints the status line, then "closed after N.N s idle".

Every read and wait has a timeout; nothing here runs for more than 35 s.
"""
import socket
import ssl
import sys
import time


def connect(port, cafile):
    ctx = ssl.create_default_context(cafile=cafile)
    raw = socket.create_connection(("127.0.0.1", port), timeout=5)
    return ctx.wrap_socket(raw, server_hostname="127.0.0.1")


def headers_only(port, cafile):
    s = connect(port, cafile)
    s.sendall(b"POST /mutate HTTP/1.1\r\nHost: 127.0.0.1\r\n"
              b"Content-Type: application/json\r\n"
              b"Content-Length: 4194304\r\n\r\n")
    s.settimeout(5)
    got = b""
    try:
        while b"\r\n" not in got:
            chunk = s.recv(4096)
            if not chunk:
                break
            got += chunk
    except (OSError, ssl.SSLError):
        pass
    line = got.split(b"\r\n", 1)[0].split()
    print(line[1].decode() if len(line) > 1 else "none")


def trickle(port, cafile):
    s = connect(port, cafile)
    print("connected", flush=True)
    start = time.monotonic()
    request = (b"POST /mutate HTTP/1.1\r\nHost: 127.0.0.1\r\n"
               b"Content-Type: application/json\r\nX-Slow: " + b"s" * 200)
    s.settimeout(1.0)
    for byte in request:
        elapsed = time.monotonic() - start
        if elapsed > 30:
            print("open after %d s" % elapsed)
            return
        try:
            s.send(bytes([byte]))
            if s.recv(4096) == b"":
                break
        except socket.timeout:
            continue  # the recv waited its second: send the next byte
        except (OSError, ssl.SSLError):
            break
    print("closed after %.1f s" % (time.monotonic() - start))


def idle(port, cafile, path):
    body = open(path, "rb").read()
    s = connect(port, cafile)
    s.sendall(b"POST /mutate HTTP/1.1\r\nHost: 127.0.0.1\r\n"
              b"Content-Type: application/json\r\n"
              b"Content-Length: %d\r\n\r\n" % len(body) + body)
    s.settimeout(30)
    answer = s.recv(65536)
    start = time.monotonic()
    print(answer.split(b"\r\n", 1)[0].decode(), flush=True)
    try:
        while s.recv(4096):
            pass
    except (OSError, ssl.SSLError):
        pass
    print("closed after %.1f s idle" % (time.monotonic() - start))


def main():
    mode, port, args = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    modes = {"headers-only": headers_only, "trickle": trickle, "idle": idle}
    modes[mode](port, *args)


if __name__ == "__main__":
    main()
