"""The small part of CBOR (RFC 8949) that Pagefind's index files use: unsigned integers, text
strings and definite-length arrays, encoded in their shortest form as Pagefind's encoder
(minicbor) writes them. Anything else is refused, so a changed file format is noticed instead
of being rewritten wrongly."""

from __future__ import annotations

from typing import Any

Item = int | str | list[Any]

_UINT, _TEXT, _ARRAY = 0, 3, 4


class CborError(ValueError):
    """Bytes that are not the CBOR subset this module reads."""


def _head(major: int, value: int) -> bytes:
    if value < 24:
        return bytes([major << 5 | value])
    for extra, size in ((24, 1), (25, 2), (26, 4), (27, 8)):
        if value < 1 << (8 * size):
            return bytes([major << 5 | extra]) + value.to_bytes(size, "big")
    raise CborError(f"integer too large: {value}")


def encode(item: Item) -> bytes:
    """``item`` as CBOR: ints ≥ 0, str and lists of those."""
    out = bytearray()

    def put(value: Item) -> None:
        if isinstance(value, bool) or not isinstance(value, int | str | list):
            raise CborError(f"cannot encode {type(value).__name__}")
        if isinstance(value, int):
            if value < 0:
                raise CborError(f"negative integer: {value}")
            out.extend(_head(_UINT, value))
        elif isinstance(value, str):
            data = value.encode("utf-8")
            out.extend(_head(_TEXT, len(data)))
            out.extend(data)
        else:
            out.extend(_head(_ARRAY, len(value)))
            for element in value:
                put(element)

    put(item)
    return bytes(out)


def decode(data: bytes) -> Item:
    """The one item ``data`` holds; CborError if it holds anything else or more."""
    position = 0

    def argument(extra: int) -> int:
        nonlocal position
        if extra < 24:
            return extra
        sizes = {24: 1, 25: 2, 26: 4, 27: 8}
        if extra not in sizes:
            raise CborError(f"unsupported length encoding {extra} at byte {position}")
        size = sizes[extra]
        if position + size > len(data):
            raise CborError("truncated")
        value = int.from_bytes(data[position : position + size], "big")
        position += size
        return value

    def take() -> Item:
        nonlocal position
        if position >= len(data):
            raise CborError("truncated")
        initial = data[position]
        position += 1
        major, value = initial >> 5, argument(initial & 31)
        if major == _UINT:
            return value
        if major == _TEXT:
            if position + value > len(data):
                raise CborError("truncated text")
            text = data[position : position + value].decode("utf-8")
            position += value
            return text
        if major == _ARRAY:
            return [take() for _ in range(value)]
        raise CborError(f"unsupported CBOR major type {major} at byte {position - 1}")

    item = take()
    if position != len(data):
        raise CborError(f"{len(data) - position} unexpected byte(s) after the item")
    return item
