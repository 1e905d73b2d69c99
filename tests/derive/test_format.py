"""pgbench_kb/numbers.py: one way to write numbers and units, against a golden table.

Regenerate after an intended change with ``KB_UPDATE_GOLDENS=1`` and read the diff.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kbtest import assert_golden
from pgbench_kb import numbers as fmt

GOLDEN = Path(__file__).parent / "golden" / "format.txt"

CASES = [
    ("figure", (8987.65,)),
    ("figure", (285.127666,)),
    ("figure", (80.244181,)),
    ("figure", (0.231663,)),
    ("figure", (124885,)),
    ("figure", (124885.8,)),
    ("figure", (3.5,)),
    ("figure", (-3.5,)),
    ("figure", (0.0,)),
    ("figure", (0.0000123,)),
    ("figure", (None,)),
    ("figure", ("fast",)),
    ("figure", (True,)),
    ("figure", (float("nan"),)),
    ("count", (1, "client")),
    ("count", (2, "client")),
    ("count", (0, "client")),
    ("count", (1000, "transaction")),
    ("count", (1, "repeat")),
    ("count", (3, "checkpoint")),
    ("count", (2, "series", "series")),
    ("count", (None, "client")),
    ("size", (2147483648,)),
    ("size", (160000000000,)),
    ("size", (38000000,)),
    ("size", (16777216000,)),
    ("size", (134217728,)),
    ("size", (1536,)),
    ("size", (512,)),
    ("size", (1,)),
    ("size", (1000000000, "binary")),
    ("size", (1073741824, "decimal")),
    ("tps", (124.885813,)),
    ("tps", (8987,)),
    ("ms", (0.907,)),
    ("ms", (5015.483,)),
    ("seconds", (60,)),
    ("seconds", (600,)),
    ("seconds", (2.5,)),
    ("percent", (5.2,)),
    ("percent", (21.2345,)),
    ("change", (73.44,)),
    ("change", (-12.04,)),
    ("change", (0.01,)),
    ("ratio", (1.7344,)),
]


def render() -> str:
    lines = []
    for name, args in CASES:
        shown = ", ".join(repr(a) for a in args)
        lines.append(f"{name}({shown}) -> {getattr(fmt, name)(*args)!r}")
    return "\n".join(lines) + "\n"


def test_formats_match_golden():
    text = render()
    assert_golden(GOLDEN, text)


@pytest.mark.parametrize("value", [1, 2, 999, 1000, 1024, 10**12, 2**40, 5 * 10**9])
def test_sizes_read_back_to_the_same_bytes_when_round(value):
    number, unit = fmt.size(value).split(" ")
    units = {u: 1024**i for i, u in enumerate(fmt.BINARY_UNITS)}
    units |= {u: 1000**i for i, u in enumerate(fmt.DECIMAL_UNITS)}
    units |= {"byte": 1}
    assert float(number.replace(",", "")) * units[unit] == pytest.approx(value, rel=0.005)
