"""Room: bases (the gate). Owns the bridge, the program that runs inside the sandbox in front of
the command (`python -I -S bridge.py CHANNEL PROXY_PORT FORWARDS LATE_FD CMD...`); imports only the
standard library (it runs isolated, without loopwright on its path).

It listens on 127.0.0.1:PORT of the sandbox's own network namespace; for each client it asks
loopwright for a fresh socket pair over the inherited channel (SCM_RIGHTS: no unix socket is
opened inside) and copies bytes both ways. It forks: the parent returns once the ports listen,
then (after the second seccomp filter, LATE_FD >= 0: no server may listen in the command) execs
the command."""

from __future__ import annotations

import os
import socket
import sys
import threading


def pump(a: socket.socket, b: socket.socket) -> None:
    try:
        while d := a.recv(65536):
            b.sendall(d)
    except OSError:
        pass
    finally:
        for s in (a, b):
            try:
                s.shutdown(socket.SHUT_WR)
            except OSError:
                pass


def serve(ch: socket.socket, lock: threading.Lock, c: socket.socket, tag: bytes) -> None:
    with lock:
        ch.sendall(tag)
        _, fds, _, _ = socket.recv_fds(ch, 1, 1)
    up = socket.socket(fileno=fds[0])
    threading.Thread(target=pump, args=(up, c), daemon=True).start()
    pump(c, up)


def accept(ch: socket.socket, lock: threading.Lock, srv: socket.socket, tag: bytes) -> None:
    while True:
        c, _ = srv.accept()
        threading.Thread(target=serve, args=(ch, lock, c, tag), daemon=True).start()


def late_seccomp(fd: int) -> None:
    """Load the seccomp program read from `fd` (no new privileges first, as the kernel asks)."""
    import ctypes

    prog = ctypes.create_string_buffer(os.read(fd, 4096))
    os.close(fd)

    class Fprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    libc = ctypes.CDLL(None, use_errno=True)
    fp = Fprog((len(prog) - 1) // 8, ctypes.addressof(prog))
    if libc.prctl(38, 1, 0, 0, 0) or libc.prctl(22, 2, ctypes.byref(fp), 0, 0):  # NO_NEW_PRIVS, SECCOMP
        sys.exit(f"loopwright sandbox bridge: seccomp failed (errno {ctypes.get_errno()})")


def main(argv: list[str]) -> None:
    ch = socket.socket(fileno=int(argv[0]))
    proxy = int(argv[1])
    fwd = [int(p) for p in argv[2].split(",") if p]
    late = int(argv[3])
    cmd = argv[4:]
    srvs: list[tuple[socket.socket, bytes]] = []
    for port, tag in ([(proxy, b"n\0\0")] if proxy else []) + [(p, b"p" + p.to_bytes(2, "big")) for p in fwd]:
        srv = socket.socket()
        srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            srv.bind(("127.0.0.1", port))
            srv.listen(64)
            srvs.append((srv, tag))
        except OSError:
            srv.close()
    lock = threading.Lock()
    if os.fork() == 0:
        os.setsid()
        for srv, tag in srvs[1:]:
            threading.Thread(target=accept, args=(ch, lock, srv, tag), daemon=True).start()
        if srvs:
            accept(ch, lock, *srvs[0])
        os._exit(0)
    ch.close()
    for srv, _ in srvs:
        srv.close()
    if late >= 0:
        late_seccomp(late)
    os.execvp(cmd[0], cmd)


if __name__ == "__main__":
    main(sys.argv[1:])
