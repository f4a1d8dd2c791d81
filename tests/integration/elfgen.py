# SPDX-License-Identifier: MIT
"""Craft small ELF files for the loader's error paths."""
import struct

PT_LOAD, PT_NOTE = 1, 4


def elf64(segments, entry=0x100000, machine=62, cls=2, etype=2):
    """segments: list of (p_type, paddr, data bytes, memsz, flags). Returns the file bytes."""
    phoff, phentsize = 64, 56
    offset = phoff + phentsize * len(segments)
    phdrs, blobs = b"", b""
    for p_type, paddr, data, memsz, flags in segments:
        align = 4 if p_type == PT_NOTE else 0x1000
        phdrs += struct.pack("<IIQQQQQQ", p_type, flags, offset + len(blobs), paddr, paddr,
                             len(data), memsz, align)
        blobs += data
    ident = b"\x7fELF" + bytes([cls, 1, 1, 0]) + b"\0" * 8
    ehdr = ident + struct.pack("<HHIQQQIHHHHHH", etype, machine, 1, entry, phoff, 0, 0, 64,
                               phentsize, len(segments), 64, 0, 0)
    return ehdr + phdrs + blobs


def pvh_note(entry):
    return struct.pack("<III", 4, 8, 18) + b"Xen\0" + struct.pack("<Q", entry)


def tiny_kernel(memsz=0x1000, with_note=True, entry=0x100000):
    """A kernel of one `hlt; jmp .` page at 1 MiB, optionally with a huge bss."""
    code = b"\xf4\xeb\xfd"
    segs = [(PT_LOAD, 0x100000, code, max(memsz, len(code)), 5)]
    if with_note:
        segs.append((PT_NOTE, 0, pvh_note(entry), len(pvh_note(entry)), 4))
    return elf64(segs, entry=entry)
