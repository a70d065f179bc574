"""The seccomp filter every sandboxed bot runs under: no kernel keyrings, no new user
namespace; every other system call as the kernel allows it.

Two kernel channels outlive a bot's process or cross from one bot to another
whatever its files and namespaces:

- **Keyrings.** A key stored in the user or user-session keyring belongs to the host
  uid and stays after the process ends (bot uids are reused), a key in an inherited
  session keyring is shared with the other bots and the referee, and a key whose
  permissions let others read it is readable by any uid that finds its serial in
  /proc/keys. `add_key`, `request_key` and `keyctl` fail with ENOSYS, as on a kernel
  built without keys, so a bot cannot store, find or read a key at all.
- **Nested user namespaces.** A bot that makes a user namespace gets every capability
  inside it: `unshare` and `clone` with CLONE_NEWUSER fail with EPERM, and `clone3`
  (whose flags live in memory a filter cannot read) with ENOSYS, so that the C
  library falls back to `clone`, which is checked.

The filter is classic BPF (`struct sock_filter` records), assembled here with no
library, for x86_64 (and its i386 compatibility calls; x32 calls are refused
outright) and the architectures on Linux's generic system call table (aarch64,
riscv64, loongarch64; with arm's compatibility calls on aarch64). A call from an
architecture the filter does not know fails with ENOSYS. bubblewrap loads it
(`--seccomp FD`) right before it starts the bot, after `no_new_privs`; the bot
keeper hands it the descriptor (`referee/bots/keeper.py`).
"""

from __future__ import annotations

import errno
import functools
import platform
import struct
from dataclasses import dataclass

# linux/filter.h and linux/seccomp.h
_LD_W_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
_JEQ = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_JGE = 0x35  # BPF_JMP | BPF_JGE | BPF_K
_JSET = 0x45  # BPF_JMP | BPF_JSET | BPF_K
_RET = 0x06  # BPF_RET | BPF_K
ALLOW = 0x7FFF0000  # SECCOMP_RET_ALLOW
_ERRNO = 0x00050000  # SECCOMP_RET_ERRNO | errno
# struct seccomp_data: nr at 0, arch at 4, instruction pointer at 8, args from 16
_NR, _ARCH, _ARG0_LOW = 0, 4, 16  # the low half of the first argument (little-endian)
CLONE_NEWUSER = 0x10000000
X32_BIT = 0x40000000


@dataclass(frozen=True)
class Calls:
    """One architecture's numbers for the calls the filter looks at."""

    arch: int  # AUDIT_ARCH_*
    add_key: int
    request_key: int
    keyctl: int
    unshare: int
    clone: int
    clone3: int = 435
    x32: bool = False  # x86_64: refuse the x32 calls (numbers with bit 30 set)


X86_64 = Calls(
    0xC000003E, add_key=248, request_key=249, keyctl=250, unshare=272, clone=56, x32=True
)
I386 = Calls(0x40000003, add_key=286, request_key=287, keyctl=288, unshare=310, clone=120)
# Linux's generic table (include/uapi/asm-generic/unistd.h).
AARCH64 = Calls(0xC00000B7, add_key=217, request_key=218, keyctl=219, unshare=97, clone=220)
RISCV64 = Calls(0xC00000F3, add_key=217, request_key=218, keyctl=219, unshare=97, clone=220)
LOONGARCH64 = Calls(0xC0000102, add_key=217, request_key=218, keyctl=219, unshare=97, clone=220)
ARM = Calls(0x40000028, add_key=309, request_key=310, keyctl=311, unshare=337, clone=120)

# A host's machine name (uname -m) -> the architectures its processes may call as.
HOSTS: dict[str, tuple[Calls, ...]] = {
    "x86_64": (X86_64, I386),
    "aarch64": (AARCH64, ARM),
    "riscv64": (RISCV64,),
    "loongarch64": (LOONGARCH64,),
}


class Program:
    """A classic BPF program being assembled, with forward jumps to named labels."""

    def __init__(self) -> None:
        self.code: list[tuple[int, str | None, str | None, int]] = []
        self.labels: dict[str, int] = {}

    def load(self, offset: int) -> None:
        self.code.append((_LD_W_ABS, None, None, offset))

    def jump(self, op: int, value: int, if_true: str | None, if_false: str | None) -> None:
        """`op` against `value`: on to `if_true` or `if_false`, None being the next one."""
        self.code.append((op, if_true, if_false, value))

    def ret(self, value: int) -> None:
        self.code.append((_RET, None, None, value))

    def label(self, name: str) -> None:
        self.labels[name] = len(self.code)

    def assemble(self) -> bytes:
        out = bytearray()
        for at, (op, if_true, if_false, value) in enumerate(self.code):
            jt, jf = (self._offset(at, target) for target in (if_true, if_false))
            out += struct.pack("=HBBI", op, jt, jf, value)
        return bytes(out)

    def _offset(self, at: int, target: str | None) -> int:
        if target is None:
            return 0
        offset = self.labels[target] - at - 1
        if not 0 <= offset <= 255:
            raise ValueError(f"jump to {target} out of reach")
        return offset


def build(arches: tuple[Calls, ...]) -> bytes:
    """The filter for processes that may call as any of `arches`."""
    program = Program()
    program.load(_ARCH)
    for index, calls in enumerate(arches):
        program.jump(_JEQ, calls.arch, f"arch{index}", None)
    program.ret(_ERRNO | errno.ENOSYS)  # an architecture the filter does not know
    for index, calls in enumerate(arches):
        program.label(f"arch{index}")
        program.load(_NR)
        if calls.x32:
            program.jump(_JGE, X32_BIT, "nosys", None)
        for number in (calls.add_key, calls.request_key, calls.keyctl, calls.clone3):
            program.jump(_JEQ, number, "nosys", None)
        for number in (calls.unshare, calls.clone):
            program.jump(_JEQ, number, "flags", None)
        program.ret(ALLOW)
    program.label("flags")
    program.load(_ARG0_LOW)
    program.jump(_JSET, CLONE_NEWUSER, "perm", None)
    program.ret(ALLOW)
    program.label("nosys")
    program.ret(_ERRNO | errno.ENOSYS)
    program.label("perm")
    program.ret(_ERRNO | errno.EPERM)
    return program.assemble()


def host_arches(machine: str | None = None) -> tuple[Calls, ...] | None:
    """The architectures a process on this host may call as; None for a host the filter
    is not written for."""
    return HOSTS.get(machine or platform.machine())


@functools.cache
def bot_filter() -> bytes | None:
    """This host's filter, or None where the filter is not written for it."""
    arches = host_arches()
    return None if arches is None else build(arches)


def problem() -> str | None:
    """Why a sandboxed bot cannot run under the filter here; None when it can."""
    if bot_filter() is None:
        return (
            f"the sandbox's seccomp filter has no system call table for {platform.machine()} "
            f"(it knows {', '.join(HOSTS)})"
        )
    return None
