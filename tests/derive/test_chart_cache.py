"""Vega-Lite charts are drawn with vl-convert once per spec: a rebuild draws only the charts
whose spec changed, many new charts are drawn in worker processes, and the charts stage
(``kb charts``) leaves exactly the charts of kb derive's current specs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from pgbench_kb.derive import charts
from pgbench_kb.errors import DeriveError


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


def test_many_new_charts_are_drawn_in_workers_alike(tmp_path: Path, monkeypatch) -> None:
    """Enough new charts to use worker processes: each file is the chart a single draw makes."""
    monkeypatch.setattr(charts, "PARALLEL_FROM", 8)
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


# The charts stage: kb derive writes specs, kb charts draws them.


def derived_specs(out: Path, numbers: list[int]) -> list[str]:
    """Specs written as kb derive writes them (``Site.chart_from_spec``); their chart names."""
    from pgbench_kb.derive.writer import Site, prepare_out

    prepare_out(out)
    site = Site(out.parent, out)
    names = [site.chart_from_spec(spec(n)).removeprefix("charts/") for n in numbers]
    site.write()
    return names


def test_the_charts_stage_draws_each_spec_once_and_keeps_only_current_charts(
    tmp_path: Path,
) -> None:
    out, drawn, cache = tmp_path / "site", tmp_path / "charts", tmp_path / "cache"
    names = derived_specs(out, [0, 1])
    first = charts.draw_charts(out / charts.SPECS_DIR, drawn, cache)
    assert (first.charts, first.drawn, first.reused, first.removed) == (2, 2, 0, 0)
    assert sorted(p.name for p in drawn.iterdir()) == sorted(names)
    assert (drawn / names[0]).read_text(encoding="utf-8").startswith("<svg")

    again = charts.draw_charts(out / charts.SPECS_DIR, drawn, cache)
    assert (again.drawn, again.reused, again.removed) == (0, 2, 0)

    # A derivation without chart 0 and with a new chart 2: one drawn, one removed.
    names = derived_specs(out, [1, 2])
    third = charts.draw_charts(out / charts.SPECS_DIR, drawn, cache)
    assert (third.drawn, third.reused, third.removed) == (1, 1, 1)
    assert sorted(p.name for p in drawn.iterdir()) == sorted(names)


def test_a_spec_edited_by_hand_is_refused_in_one_line(tmp_path: Path) -> None:
    out = tmp_path / "site"
    (name,) = derived_specs(out, [5])
    source = out / charts.SPECS_DIR / name.replace(".svg", charts.SPEC_SUFFIX)
    source.write_text(source.read_text(encoding="utf-8").replace("curve 5", "edited"))
    with pytest.raises(DeriveError, match="does not match its name") as caught:
        charts.draw_charts(out / charts.SPECS_DIR, tmp_path / "charts", tmp_path / "cache")
    assert str(source) in str(caught.value) and "\n" not in str(caught.value)
    assert not (tmp_path / "charts" / name).exists()


def test_kb_charts_before_kb_derive_says_what_to_run(tmp_path: Path) -> None:
    done = subprocess.run(
        [str(Path(sys.executable).parent / "kb"), "charts", "--root", str(tmp_path)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1 and "run `kb derive` first" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_file_where_the_charts_go_is_a_located_error(tmp_path: Path) -> None:
    """Regression: a file in the place of build/charts ended kb charts with a traceback."""
    out = tmp_path / "site"
    derived_specs(out, [7])
    blocker = tmp_path / "charts"
    blocker.write_text("not a folder", encoding="utf-8")
    with pytest.raises(DeriveError, match="cannot write a chart") as caught:
        charts.draw_charts(out / charts.SPECS_DIR, blocker, tmp_path / "cache")
    assert str(blocker) in str(caught.value)
    assert blocker.read_text(encoding="utf-8") == "not a folder"
