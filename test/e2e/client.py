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
      nothing for 12 s. Prints the status line, then "closed after N.N s
      idle" if the server closed it by then, else "open after 12 s idle"
      and the status line of a second review on it.

  client.py pooled PORT CAFILE FILE
      Does the TLS handshake, sends nothing for 5 s (a connection an
      apiserver dialled and keeps in its pool unused), then POSTs FILE
      on it. Prints "open after 5 s" and the status line, or "closed
      after N.N s".

  client.py pipeline PORT CAFILE FILE N
      Sends N POSTs of FILE back to back on one connection, reading
      nothing for a second, so the answers queue up in the socket
      buffers; then reads them all (at most 20 s). Prints
      "<answers> answers, <statuses>, <distinct bodies> distinct".

Every read and wait has a timeout; nothing here runs for more than 35 s.
"""
import select
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
    request = (b"POST /mutate HTTP/1.1\r\nHost: 127.0.0.1\r\n"
               b"Content-Type: application/json\r\n"
               b"Content-Length: %d\r\n\r\n" % len(body) + body)
    s = connect(port, cafile)
    s.sendall(request)
    s.settimeout(30)
    answer = s.recv(65536)
    start = time.monotonic()
    print(answer.split(b"\r\n", 1)[0].decode(), flush=True)
    s.settimeout(12)
    try:
        while s.recv(4096):
            pass
    except socket.timeout:
        s.settimeout(30)
        s.sendall(request)
        answer = s.recv(65536)
        print("open after 12 s idle")
        print(answer.split(b"\r\n", 1)[0].decode())
        return
    except (OSError, ssl.SSLError):
        pass
    print("closed after %.1f s idle" % (time.monotonic() - start))


def pooled(port, cafile, path):
    body = open(path, "rb").read()
    s = connect(port, cafile)
    start = time.monotonic()
    s.settimeout(5)
    try:
        if s.recv(4096) == b"":
            print("closed after %.1f s" % (time.monotonic() - start))
            return
    except socket.timeout:
        pass
    except (OSError, ssl.SSLError):
        print("closed after %.1f s" % (time.monotonic() - start))
        return
    s.settimeout(10)
    s.sendall(b"POST /mutate HTTP/1.1\r\nHost: 127.0.0.1\r\n"
              b"Content-Type: application/json\r\n"
              b"Content-Length: %d\r\n\r\n" % len(body) + body)
    answer = s.recv(65536)
    print("open after 5 s")
    print(answer.split(b"\r\n", 1)[0].decode())


def answers(data):
    """The whole HTTP responses at the start of data: (statuses, bodies,
    what is left over)."""
    out = []
    while b"\r\n\r\n" in data:
        head, rest = data.split(b"\r\n\r\n", 1)
        lines = head.split(b"\r\n")
        length = 0
        for line in lines[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        if len(rest) < length:
            break
        out.append((int(lines[0].split()[1]), rest[:length]))
        data = rest[length:]
    return out, data


def pipeline(port, cafile, path, count):
    """One thread, non-blocking: an SSL socket must not be read and
    written from two threads at once."""
    count = int(count)
    body = open(path, "rb").read()
    out = (b"POST /mutate HTTP/1.1\r\nHost: 127.0.0.1\r\n"
           b"Content-Type: application/json\r\n"
           b"Content-Length: %d\r\n\r\n" % len(body) + body) * count
    s = connect(port, cafile)
    s.setblocking(False)
    sent, data, got = 0, b"", []
    start = time.monotonic()
    while len(got) < count and time.monotonic() - start < 20:
        reading = time.monotonic() - start >= 1  # nothing read for 1 s
        wait = 1 - (time.monotonic() - start) if not reading else 1
        r, w, _ = select.select([s] if reading else [],
                                [s] if sent < len(out) else [], [],
                                max(wait, 0.01))
        try:
            if w:
                sent += s.send(out[sent:sent + 65536])
            if reading and (r or s.pending()):
                chunk = s.recv(65536)
                if not chunk:
                    break
                more, data = answers(data + chunk)
                got += more
        except (ssl.SSLWantReadError, ssl.SSLWantWriteError):
            pass
        except (OSError, ssl.SSLError) as e:
            print("error after %d answers: %s" % (len(got), e))
            break
    statuses = {}
    for status, _ in got:
        statuses[status] = statuses.get(status, 0) + 1
    print("%d answers, %s, %d distinct" % (
        len(got), " ".join("%d x%d" % kv for kv in sorted(statuses.items())),
        len({b for _, b in got})))


def main():
    mode, port, args = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    modes = {"headers-only": headers_only, "trickle": trickle, "idle": idle,
             "pooled": pooled, "pipeline": pipeline}
    modes[mode](port, *args)


if __name__ == "__main__":
    main()
