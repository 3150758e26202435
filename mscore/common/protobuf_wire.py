"""The pieces of Protocol Buffers' wire format that mscore writes without the protobuf
library: a varint and the head of a length-delimited field (wire type 2). The print file and
the encrypted checkpoint's trailer are written with them."""
from __future__ import annotations


def varint(n):
    """The non-negative int ``n`` as a base-128 varint."""
    out = bytearray()
    while True:
        low, n = n & 0x7F, n >> 7
        out.append(low | (0x80 if n else 0))
        if not n:
            return bytes(out)


def field_head(number, length):
    """The tag and length that open length-delimited field ``number`` of ``length`` bytes."""
    return varint(number << 3 | 2) + varint(length)
