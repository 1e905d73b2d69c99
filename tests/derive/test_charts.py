"""The plain-SVG throughput curve (drawn without Vega: one per curve, hundreds of them)."""

from __future__ import annotations

import re

from pgbench_kb.derive import charts


def test_a_curve_marks_every_point_and_labels_the_measured_x_values():
    svg = charts.curve_svg(
        "tps against clients", [(32, 31000.0), (1, 1200.5), (8, 9000.0)], "clients"
    )
    assert svg is not None
    assert svg.count("<circle") == 3
    labels = re.findall(r'text-anchor="middle">([^<]+)</text>', svg)
    assert labels[:3] == ["1", "8", "32"] and "clients" in labels
    # The line runs left to right whatever order the points came in.
    xs = [float(p.split(",")[0]) for p in re.search(r'points="([^"]+)"', svg)[1].split()]
    assert xs == sorted(xs)
    assert charts.curve_svg("tps against clients", [(1, 1200.5), (8, 9000.0), (32, 31000.0)],
                            "clients") == svg  # fmt: skip


def test_a_curve_escapes_its_text_and_refers_to_nothing_outside():
    svg = charts.curve_svg('<script>alert("x")</script> & co', [(1, 1.0), (2, 2.0)], "<b>")
    assert "<script>" not in svg and "&lt;script&gt;" in svg and "<b>" not in svg
    charts.check_no_outside_reference(svg, "curve")


def test_a_curve_of_one_point_is_not_drawn():
    assert charts.curve_svg("t", [(4, 10.0)], "clients") is None
