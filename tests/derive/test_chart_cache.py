"""Vega-Lite charts are drawn with vl-convert once per spec: a rebuild draws only the charts
whose spec changed, many new charts are drawn in worker processes, and a chart's file exists
before the site's files are copied."""

from __future__ import annotations

from pathlib import Path

from pgbench_kb.derive import charts


def spec(n: int, title: str = "tps against clients") -> dict:
    values = [{"clients": c, "tps": 100.0 * c + n} for c in (1, 2, 4, 8)]
    return charts.curve_spec(title, f"curve {n}", values, "clients")


def test_a_rebuild_draws_only_the_changed_chart(tmp_path: Path) -> None:
    first = charts.ChartRenderer(tmp_path)
    names = [first.svg_file(spec(n))[0] for n in range(3)]
    assert not any((tmp_path / name).exists() for name in names)  # noted, not yet drawn
    first.render_pending()
    assert (first.rendered, first.reused) == (3, 0)
    for name in names:
        svg = (tmp_path / name).read_text(encoding="utf-8")
        assert svg.startswith("<svg") and "tps against clients" in svg

    again = charts.ChartRenderer(tmp_path)
    for n in range(3):
        again.svg_file(spec(n))
    again.render_pending()
    assert (again.rendered, again.reused) == (0, 3)

    changed = charts.ChartRenderer(tmp_path)
    for n in (0, 1, 3):  # spec 3 is new: only it is drawn
        changed.svg_file(spec(n))
    changed.render_pending()
    assert (changed.rendered, changed.reused) == (1, 2)


def test_the_same_spec_twice_is_drawn_once(tmp_path: Path) -> None:
    renderer = charts.ChartRenderer(tmp_path)
    assert renderer.svg_file(spec(1)) == renderer.svg_file(spec(1))
    renderer.render_pending()
    assert renderer.rendered == 1


def test_many_new_charts_are_drawn_in_workers_alike(tmp_path: Path) -> None:
    """Enough new charts to use worker processes: each file is the chart a single draw makes."""
    count = charts.PARALLEL_FROM + 2
    renderer = charts.ChartRenderer(tmp_path / "pool")
    names = [renderer.svg_file(spec(n))[0] for n in range(count)]
    renderer.render_pending()
    assert renderer.rendered == count
    alone = charts.ChartRenderer(tmp_path / "alone")
    name, _ = alone.svg_file(spec(count - 1))
    alone.render_pending()
    assert (tmp_path / "pool" / names[-1]).read_bytes() == (tmp_path / "alone" / name).read_bytes()
    assert not list((tmp_path / "pool").glob("*.tmp"))
