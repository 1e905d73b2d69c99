"""``fmt.figure`` takes shortcuts for plain ints and floats (it is called some 250,000 times by
one ``kb derive`` of 10,000 runs): it must still write every number exactly as the plain
algorithm below does, the one it replaced."""

from __future__ import annotations

import math
import random
from typing import Any

import pytest

from pgbench_kb import numbers as fmt


def reference_figure(value: Any, digits: int = fmt.SIGNIFICANT) -> str | None:
    """The straightforward ``figure``, as written before the shortcuts."""
    finite = isinstance(value, int | float) and not isinstance(value, bool)
    if not finite or not math.isfinite(value):
        return None
    if isinstance(value, int):
        return f"{value:,}".replace("-", fmt.MINUS)
    if value == 0:
        return "0"
    magnitude = math.floor(math.log10(abs(value)))
    decimals = max(0, digits - 1 - magnitude)
    text = f"{value:,.{decimals}f}"
    text = text.rstrip("0").rstrip(".") if "." in text else text
    return text.replace("-", fmt.MINUS)


def random_values(seed: int, count: int) -> list[Any]:
    rnd = random.Random(seed)
    values: list[Any] = []
    for _ in range(count):
        scale = 10.0 ** rnd.randint(-8, 16)
        sign = rnd.choice((1, -1))
        values.append(sign * rnd.random() * scale)
        values.append(sign * round(rnd.random() * scale, rnd.randint(0, 4)))
        values.append(sign * rnd.randint(0, 10 ** rnd.randint(0, 18)))
        values.append(float(sign * rnd.randint(0, 10 ** rnd.randint(0, 6))))
    # Boundaries where rounding carries into one more digit, and odd types.
    for power in range(-6, 13):
        for near in (10.0**power, 10.0**power - 10.0 ** (power - 5), 9.9995 * 10.0**power):
            values += [near, -near, math.nextafter(near, 0), math.nextafter(near, math.inf)]
    values += [0, 0.0, -0.0, True, False, None, "12", math.nan, math.inf, -math.inf, 2**70]
    return values


@pytest.mark.parametrize("seed", range(4))
def test_figure_writes_what_the_plain_algorithm_writes(seed: int) -> None:
    for value in random_values(seed, 5000):
        for digits in (2, 3, 4):
            assert fmt.figure(value, digits) == reference_figure(value, digits), (value, digits)


def test_figure_of_subclasses_goes_the_plain_way() -> None:
    class Tps(float):
        pass

    class Count(int):
        pass

    assert fmt.figure(Tps(1234.5678)) == reference_figure(1234.5678) == "1,235"
    assert fmt.figure(Count(-1234567)) == reference_figure(-1234567) == "\u22121,234,567"
