"""One way to write numbers and units for readers: on every page and in every sentence.

Every figure a reader sees is formatted here: by ``kb derive`` for the pages (templates only
print strings) and by ``analyze`` for the sentences it writes (findings, curves, interactions,
stability, ``kb compare``'s table). It sits beside ``errors.py`` so that both stages may use
it (``analyze`` never imports ``derive``).

- ``figure``: at most four significant digits, thousands separated, the integer part never
  rounded, no trailing zeros (``8,988``, ``285.1``, ``80.24``, ``0.2317``, ``3.5``);
- ``count``: grammar that counts (``1 client``, ``2 clients``, ``1,000 transactions``);
- ``size``: bytes in the unit system the source stated — binary (``2 GiB``) when the number is a
  round multiple of 1024, decimal (``160 GB``) when it is a round multiple of 1000;
- ``tps``, ``ms``, ``seconds``, ``percent``, ``change``: a figure with its unit.

``None`` (not reported) is always returned as ``None``: the template says "not reported".
"""

from __future__ import annotations

import math
from functools import cache
from typing import Any

SIGNIFICANT = 4
MINUS = "\u2212"  # a real minus sign, not a hyphen
BINARY_UNITS = ("bytes", "KiB", "MiB", "GiB", "TiB", "PiB")
DECIMAL_UNITS = ("bytes", "kB", "MB", "GB", "TB", "PB")


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def figure(value: Any, digits: int = SIGNIFICANT) -> str | None:
    """``value`` with ``digits`` significant digits (never fewer than the integer part has),
    thousands separated; integers stay integers."""
    kind = type(value)
    if kind is float:
        if not math.isfinite(value):
            return None
        return _float_text(value, digits)
    if kind is int:
        return _int_text(value)
    if not _is_number(value):
        return None
    if isinstance(value, int):
        return _int_text(value)
    return _float_text(value, digits)


def _int_text(value: int) -> str:
    text = f"{value:,}"
    return text.replace("-", MINUS) if value < 0 else text


@cache
def _fixed(decimals: int) -> str:
    """The format spec of ``decimals`` decimals with thousands separated (``,.2f``)."""
    return f",.{decimals}f"


def _float_text(value: float, digits: int) -> str:
    """A finite float as ``figure`` writes it."""
    if value == 0:
        return "0"
    decimals = digits - 1 - math.floor(math.log10(abs(value)))
    text = format(value, _fixed(decimals if decimals > 0 else 0))
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text.replace("-", MINUS) if value < 0 else text


def _trim(text: str) -> str:
    """``3.500`` → ``3.5``, ``160.0`` → ``160``: no trailing zeros after the decimal point."""
    return text.rstrip("0").rstrip(".") if "." in text else text


@cache
def plural(word: str) -> str:
    if word.endswith(("s", "x", "ch", "sh")):
        return word + "es"
    if word.endswith("y") and word[-2:-1] not in "aeiou":
        return word[:-1] + "ies"
    return word + "s"


def count(value: Any, singular: str, many: str | None = None) -> str | None:
    """``1 client``, ``2 clients``, ``1,000 transactions``; ``many`` for irregular plurals."""
    if not _is_number(value):
        return None
    word = singular if value == 1 else (many or plural(singular))
    return f"{figure(value)} {word}"


def _round_in(value: int, base: int) -> tuple[int, float]:
    """(power, mantissa) of ``value`` in ``base``, the largest power it reaches."""
    power = 0
    mantissa = float(value)
    while abs(mantissa) >= base and power < len(BINARY_UNITS) - 1:
        mantissa /= base
        power += 1
    return power, mantissa


def _digits_needed(mantissa: float) -> int:
    """How many significant digits write ``mantissa`` exactly (up to 6), 99 if none do."""
    for digits in range(1, 7):
        if float(f"{mantissa:.{digits}g}") == mantissa:
            return digits
    return 99


def size(value: Any, system: str | None = None) -> str | None:
    """Bytes as the source stated them: ``system`` ``"binary"`` or ``"decimal"``, or (``None``)
    whichever writes the number with fewer digits — 2147483648 is ``2 GiB``, 160000000000 is
    ``160 GB``. Below 1 kB/KiB: ``512 bytes``."""
    if not _is_number(value):
        return None
    if abs(value) < 1000:
        return count(int(value), "byte")
    b_power, b_mantissa = _round_in(int(value), 1024)
    d_power, d_mantissa = _round_in(int(value), 1000)
    if system is None:
        system = "binary" if _digits_needed(b_mantissa) < _digits_needed(d_mantissa) else "decimal"
    if system == "binary":
        return f"{figure(float(b_mantissa), 3)} {BINARY_UNITS[b_power]}"
    return f"{figure(float(d_mantissa), 3)} {DECIMAL_UNITS[d_power]}"


def tps(value: Any) -> str | None:
    text = figure(value if not isinstance(value, int) else float(value))
    return None if text is None else f"{text} tps"


def ms(value: Any) -> str | None:
    text = figure(value if not isinstance(value, int) else float(value))
    return None if text is None else f"{text} ms"


def seconds(value: Any) -> str | None:
    """``60 s``, ``2.5 s``; from ten minutes on also in minutes (``600 s (10 min)``)."""
    text = figure(value)
    if text is None:
        return None
    if value >= 600 and value % 60 == 0:
        return f"{text} s ({figure(int(value // 60))} min)"
    return f"{text} s"


def percent(value: Any, digits: int = 2) -> str | None:
    """``5.2%``: a share, two significant digits by default."""
    text = figure(float(value), digits) if _is_number(value) else None
    return None if text is None else f"{text}%"


def change(value: Any) -> str | None:
    """A signed change in percent: ``+73.4%``, ``−12.0%``, ``±0%``."""
    if not _is_number(value):
        return None
    if round(value, 1) == 0:
        return "±0%"
    sign = "+" if value > 0 else MINUS
    return f"{sign}{abs(value):,.1f}%"


def ratio(value: Any) -> str | None:
    """``1.73×``"""
    if not _is_number(value):
        return None
    return f"{value:,.2f}×"


def times(value: Any) -> str | None:
    """``2.0×``, ``0.52×``, ``14×``: how many times as much, two significant digits (a
    trailing zero kept: ``2.0×`` is not ``2×``)."""
    if not _is_number(value) or value <= 0:
        return None
    decimals = max(0, 1 - math.floor(math.log10(value)))
    return f"{format(value, _fixed(decimals))}×"
