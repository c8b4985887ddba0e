"""Read what a cubin says about its kernels, with no GPU and no CUDA library.

A cubin is an ELF file. For each kernel it holds a ``.text.<name>`` section, an
``.nv.info.<name>`` section whose KPARAM_INFO records give every parameter's offset and size,
global ``.nv.info`` records with register counts and stack frame sizes, and an
``.nv.shared.<name>`` section sized to the kernel's static shared memory.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

_EIFMT_SVAL = 4
_EIATTR_FRAME_SIZE = 0x11
_EIATTR_KPARAM_INFO = 0x17
_EIATTR_REGCOUNT = 0x2F


@dataclass(frozen=True)
class KernelInfo:
    name: str                      # the symbol (mangled for C++ kernels)
    param_sizes: tuple[int, ...]   # in declaration order
    param_offsets: tuple[int, ...]
    registers: int | None
    shared_bytes: int              # static shared memory
    local_bytes: int               # stack frame per thread (local memory)

    @property
    def param_bytes(self) -> int:
        return (self.param_offsets[-1] + self.param_sizes[-1]) if self.param_sizes else 0


class CubinFormatError(ValueError):
    pass


def _sections(data: bytes):
    if data[:4] != b"\x7fELF" or data[4] != 2:
        raise CubinFormatError("not a 64-bit ELF cubin")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    heads = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    str_off = heads[shstrndx][4]

    def name(o):
        end = data.index(b"\0", str_off + o)
        return data[str_off + o:end].decode()

    return [(name(h[0]), h) for h in heads]


def _records(data: bytes, offset: int, size: int):
    end = offset + size
    while offset + 4 <= end:
        fmt, attr = data[offset], data[offset + 1]
        if fmt == _EIFMT_SVAL:
            n, = struct.unpack_from("<H", data, offset + 2)
            yield attr, data[offset + 4:offset + 4 + n]
            offset += 4 + n
        else:
            yield attr, data[offset + 2:offset + 4]
            offset += 4


def _symbols(data: bytes, sections):
    for _, h in sections:
        if h[1] == 2:  # SHT_SYMTAB
            strtab = sections[h[6]][1][4]
            syms = []
            for i in range(h[5] // 24):
                st_name, = struct.unpack_from("<I", data, h[4] + i * 24)
                end = data.index(b"\0", strtab + st_name)
                syms.append(data[strtab + st_name:end].decode())
            return syms
    return []


def read_kernels(data: bytes) -> dict[str, KernelInfo]:
    """Every kernel in a cubin, by symbol name."""
    try:
        sections = _sections(data)
        symbols = _symbols(data, sections)
        regs: dict[str, int] = {}
        frames: dict[str, int] = {}
        for name, h in sections:
            if name == ".nv.info":
                for attr, val in _records(data, h[4], h[5]):
                    if attr in (_EIATTR_REGCOUNT, _EIATTR_FRAME_SIZE) and len(val) == 8:
                        sym, value = struct.unpack("<II", val)
                        target = regs if attr == _EIATTR_REGCOUNT else frames
                        if sym < len(symbols):
                            target[symbols[sym]] = value
        kernels = {}
        shared = {n[len(".nv.shared."):]: h[5] for n, h in sections if n.startswith(".nv.shared.")}
        # From sm_90 each kernel's shared section also spans the 1 KiB block-reserved area
        # (.nv.shared.reserved.*); the driver's static shared size leaves it out, and so do we.
        reserved = 1024 if any(n.startswith(".nv.shared.reserved.") for n, _ in sections) else 0
        for name, h in sections:
            if not name.startswith(".nv.info."):
                continue
            kname = name[len(".nv.info."):]
            params = []
            for attr, val in _records(data, h[4], h[5]):
                if attr == _EIATTR_KPARAM_INFO and len(val) >= 12:
                    _, ordinal, offset, flags = struct.unpack_from("<IHHI", val)
                    params.append((ordinal, offset, (flags >> 18) & 0x3FFF))
            params.sort()
            kernels[kname] = KernelInfo(
                kname, tuple(p[2] for p in params), tuple(p[1] for p in params),
                regs.get(kname), max(0, shared.get(kname, 0) - reserved) if kname in shared else 0,
                frames.get(kname, 0))
        return kernels
    except (struct.error, IndexError, ValueError, OverflowError) as e:
        if isinstance(e, CubinFormatError):
            raise
        raise CubinFormatError(f"malformed cubin: {e}") from e
