"""Room: bases (the gate). Owns the sandbox's seccomp filters (classic BPF, built here); imports nothing of loopwright."""

from __future__ import annotations

import platform
import socket
import struct

# arch: (AUDIT_ARCH, socket, ptrace, process_vm_readv, process_vm_writev, listen)
_ARCH = {"x86_64": (0xC000003E, 41, 101, 310, 311, 50), "aarch64": (0xC00000B7, 198, 117, 270, 271, 201)}
_IO_URING_SETUP = 425  # the same number on x86_64 and aarch64


def seccomp_program(*, unix: bool = True, listen: bool = False, base: bool = True) -> bytes | None:
    """A classic-BPF seccomp filter whose refusals fail with EPERM. `base`: io_uring_setup
    (which can open and bind sockets past the filter), ptrace and process_vm_*; `unix`:
    socket(AF_UNIX, ...); `listen`: listen() (no server can be bound: allowLocalBinding false).
    Other architectures' system calls (i386, x32) always. None on an architecture it does not know."""
    arch = _ARCH.get(platform.machine())
    if arch is None:
        return None
    audit, nr_socket, nr_ptrace, nr_vm_read, nr_vm_write, nr_listen = arch
    ld_w_abs, jeq, jge, ret = 0x20, 0x15, 0x35, 0x06
    allow, deny = 0x7FFF0000, 0x00050000 | 1  # SECCOMP_RET_ALLOW, SECCOMP_RET_ERRNO | EPERM
    blocked = [*((_IO_URING_SETUP, nr_ptrace, nr_vm_read, nr_vm_write) if base else ()),
               *((nr_listen,) if listen else ())]
    # (code, jump if true, jump if false, k); a jump target is "deny", "allow" or 0 (the next)
    prog: list[tuple[int, int | str, int | str, int]] = [
        (ld_w_abs, 0, 0, 4),  # seccomp_data.arch
        (jeq, 0, "deny", audit),
        (ld_w_abs, 0, 0, 0),  # seccomp_data.nr
        (jge, "deny", 0, 0x40000000),  # the x32 ABI
        *((jeq, "deny", 0, nr) for nr in blocked),
    ]
    if unix:
        prog += [(jeq, 0, "allow", nr_socket),
                 (ld_w_abs, 0, 0, 16),  # args[0] (low word): the domain
                 (jeq, "deny", 0, socket.AF_UNIX)]
    prog += [(ret, 0, 0, allow), (ret, 0, 0, deny)]
    at = {"allow": len(prog) - 2, "deny": len(prog) - 1}
    out = b""
    for n, (code, jt, jf, k) in enumerate(prog):
        jt_n, jf_n = ((at[x] - n - 1) if isinstance(x, str) else x for x in (jt, jf))
        out += struct.pack("<HBBI", code, jt_n, jf_n, k)
    return out


