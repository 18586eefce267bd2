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

  client.py pipeline PORT CAFILE FILE N
      Sends N POSTs of FILE back to back on one connection, reading
      nothing for a second, so the server's answers fill the socket
      buffers and its sends have to wait; then reads them all. Prints
      "<answers> answers, <statuses>, <distinct bodies> distinct".

Every read and wait has a timeout; nothing here runs for more than 35 s.
"""
import socket
import ssl
import sys
import threading
import time


def connect(port, cafile, rcvbuf=0):
    ctx = ssl.create_default_context(cafile=cafile)
    raw = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if rcvbuf:
        # Before connect: the window offered to the server stays small.
        raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    raw.settimeout(5)
    raw.connect(("127.0.0.1", port))
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


def read_answer(s, pending):
    """One HTTP response from s: (status, body, what was read past it)."""
    while b"\r\n\r\n" not in pending:
        chunk = s.recv(65536)
        if not chunk:
            raise EOFError("closed inside the headers")
        pending += chunk
    head, rest = pending.split(b"\r\n\r\n", 1)
    lines = head.split(b"\r\n")
    status = int(lines[0].split()[1])
    length = 0
    for line in lines[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    while len(rest) < length:
        chunk = s.recv(65536)
        if not chunk:
            raise EOFError("closed inside a body")
        rest += chunk
    return status, rest[:length], rest[length:]


def pipeline(port, cafile, path, count):
    body = open(path, "rb").read()
    request = (b"POST /mutate HTTP/1.1\r\nHost: 127.0.0.1\r\n"
               b"Content-Type: application/json\r\n"
               b"Content-Length: %d\r\n\r\n" % len(body) + body)
    s = connect(port, cafile, rcvbuf=4096)
    s.settimeout(20)
    # Sent from a thread: the server stops reading while its answers
    # wait, so sending everything first could block for good.
    sender = threading.Thread(target=s.sendall, args=(request * int(count),))
    sender.start()
    time.sleep(1)
    statuses, bodies, pending = {}, set(), b""
    try:
        for _ in range(int(count)):
            status, answer, pending = read_answer(s, pending)
            statuses[status] = statuses.get(status, 0) + 1
            bodies.add(answer)
    except (OSError, ssl.SSLError, EOFError) as e:
        print("error after %d answers: %s" % (sum(statuses.values()), e))
    sender.join(5)
    print("%d answers, %s, %d distinct" % (
        sum(statuses.values()),
        " ".join("%d x%d" % kv for kv in sorted(statuses.items())),
        len(bodies)))


def main():
    mode, port, args = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    modes = {"headers-only": headers_only, "trickle": trickle, "idle": idle,
             "pipeline": pipeline}
    modes[mode](port, *args)


if __name__ == "__main__":
    main()
