"""Charts for the site, as SVG files written at build time (no JavaScript needed to see them).

- Comparison and curve charts: Vega-Lite specs. ``kb derive`` writes each spec into its output
  (``specs/<sha256 of the spec>.vl.json``) and names the chart after the same hash; the charts
  stage (``kb charts``, ``draw_charts``) then renders every spec with ``vl_convert`` through a
  cache (``build/cache/charts/``), so a rebuild redraws only the charts whose spec changed, and
  leaves exactly the current charts in ``build/charts/`` (mounted by Hugo at ``/charts/``).
  Vega-Lite's own default font is replaced by the reader's system font: an SVG never names an
  outside URL.
- The ``-P`` progress chart of each run and the two bars of each comparison: drawn here as plain
  SVG (a few hundred bytes of code instead of one Vega call each: at about 15-20 ms of CPU a
  chart, measured, 10,000 runs would take minutes). Both are placed in their page itself
  (thousands of small files cost more to write and copy than to inline).

Every chart is shown with a title, a text description and its data table beside it (layouts
``chart/figure.html``). Every text put into an SVG here is XML-escaped, so an SVG placed in
a page shows data as text; an SVG loaded through ``<img>`` runs no script whatever it
contains.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

from pgbench_kb.derive import format as fmt
from pgbench_kb.errors import DeriveError
from pgbench_kb.parallel import cores, map_in_workers, worker_count

VEGA_LITE_SCHEMA = "https://vega.github.io/schema/vega-lite/v5.json"
FONT = "system-ui, -apple-system, Segoe UI, Roboto, sans-serif"
#: What an SVG must never contain: anything that makes a browser fetch from elsewhere.
OUTSIDE = re.compile(
    r"""(?i)(?:href\s*=\s*["']\s*(?:https?:)?//|url\(\s*["']?\s*(?:https?:)?//|@import)"""
)


#: In ``kb derive``'s output: one Vega-Lite spec per chart, ``<spec hash>.vl.json``.
SPECS_DIR = "specs"
SPEC_SUFFIX = ".vl.json"
#: The file ``kb derive`` leaves in every folder it writes (``writer.MARKER``).
DERIVED_MARKER = ".kb-derive"


def spec_text(spec: dict[str, Any]) -> str:
    """A spec as one canonical JSON text (keys sorted): what its hash is taken of."""
    return json.dumps(spec, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def spec_hash(spec: dict[str, Any]) -> str:
    return hashlib.sha256(spec_text(spec).encode("utf-8")).hexdigest()


def check_no_outside_reference(svg: str, name: str) -> None:
    if OUTSIDE.search(svg):
        raise DeriveError("the chart SVG refers to an outside URL", path=name)


#: From this many new charts on, they are drawn in worker processes (one per core, at most 4).
#: A spawned worker costs about a second before its first chart (Python, vl-convert's V8), and
#: a chart about 15 ms: fewer are drawn sooner in this process (the 20 charts of the day-one
#: data: 3.5 s in two workers, under 1 s alone).
PARALLEL_FROM = 150


def _draw(spec: dict[str, Any]) -> str:
    import vl_convert

    return str(vl_convert.vegalite_to_svg(spec))


class ChartRenderer:
    """Renders Vega-Lite specs to SVG through a cache folder keyed by spec hash.

    ``svg_file`` names a chart's file at once (the name is the spec's hash) and only notes a
    spec it has not drawn before; ``render_pending`` then draws all of those together, in
    worker processes when there are many (about 20 ms of CPU a chart in vl-convert), before
    the files are copied into the site. ``rendered``, ``reused`` and ``seconds`` count what
    one build did (printed by ``kb derive``).
    """

    def __init__(self, cache_dir: Path) -> None:
        self.cache_dir = cache_dir
        self.rendered = 0
        self.reused = 0
        self.seconds = 0.0
        self.pending: dict[str, dict[str, Any]] = {}

    def svg_file(self, spec: dict[str, Any]) -> tuple[str, Path]:
        """(file name, cached path) of the SVG for ``spec``; a new one is drawn by
        ``render_pending``."""
        name = f"{spec_hash(spec)}.svg"
        cached = self.cache_dir / name
        if name in self.pending:
            return name, cached
        if cached.is_file():
            self.reused += 1
        else:
            self.pending[name] = spec
        return name, cached

    def render_pending(self) -> None:
        """Draw every chart noted since the last call, each written whole into the cache."""
        if not self.pending:
            return
        started = time.perf_counter()
        names = sorted(self.pending)
        specs = [self.pending[name] for name in names]
        if len(specs) >= PARALLEL_FROM and cores() > 1:
            # Spawned, not forked: vl-convert runs threads of its own, and a fork of a process
            # that has used it can hang in the child.
            workers = worker_count()
            svgs = map_in_workers(_draw, specs, workers=workers, chunksize=4, start="spawn")
        else:
            svgs = [_draw(spec) for spec in specs]
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        for name, svg in zip(names, svgs, strict=True):
            check_no_outside_reference(svg, name)
            cached = self.cache_dir / name
            partial = cached.with_suffix(f".{os.getpid()}.tmp")
            partial.write_text(svg, encoding="utf-8")
            partial.replace(cached)
        self.rendered += len(names)
        self.seconds += time.perf_counter() - started
        self.pending.clear()


@dataclass
class Drawn:
    """What one charts stage did (``kb charts`` prints it)."""

    charts: int
    drawn: int
    reused: int
    removed: int
    seconds: float


def draw_charts(specs: Path, out: Path, cache_dir: Path) -> Drawn:
    """The charts stage: every Vega-Lite spec ``kb derive`` wrote into ``specs`` drawn as
    ``out/<spec hash>.svg`` — from ``cache_dir`` when drawn before, by vl-convert otherwise —
    and every other SVG in ``out`` removed, so ``out`` holds exactly the current charts.

    A spec whose content no longer matches its name (edited by hand) is refused with one line:
    the pages name charts by that hash. Files in ``out`` are hard links into the cache (a copy
    where links are not possible), each put in place by a rename."""
    started = time.perf_counter()
    if specs.is_dir():
        names = sorted(p.name[: -len(SPEC_SUFFIX)] for p in specs.glob(f"*{SPEC_SUFFIX}"))
    elif (specs.parent / DERIVED_MARKER).is_file():
        names = []  # kb derive ran and found nothing to chart
    else:
        raise DeriveError(
            "no chart specs here", path=str(specs), hint="run `kb derive` first: it writes them"
        )
    renderer = ChartRenderer(cache_dir)
    for name in names:
        if (cache_dir / f"{name}.svg").is_file():
            renderer.reused += 1
            continue
        source = specs / f"{name}{SPEC_SUFFIX}"
        try:
            spec = json.loads(source.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise DeriveError(
                f"cannot read the chart spec: {exc}", path=str(source), hint="run `kb derive` again"
            ) from exc
        if not isinstance(spec, dict) or spec_hash(spec) != name:
            raise DeriveError(
                "the chart spec does not match its name (was it edited by hand?)",
                path=str(source),
                hint="run `kb derive` again: it writes the specs",
            )
        renderer.svg_file(spec)
    try:
        renderer.render_pending()
        return _place_charts(names, out, cache_dir, renderer, started)
    except OSError as exc:
        raise DeriveError(
            f"cannot write a chart: {exc.strerror or exc}",
            path=str(exc.filename or out),
            hint="build/ must be a folder this user can write (remove a file in its place)",
        ) from exc


def _place_charts(
    names: list[str], out: Path, cache_dir: Path, renderer: ChartRenderer, started: float
) -> Drawn:
    """``out`` made to hold exactly the charts ``names`` (hard links into the cache)."""
    out.mkdir(parents=True, exist_ok=True)
    wanted = {f"{name}.svg" for name in names}
    for svg in sorted(wanted):
        target = out / svg
        if target.is_file():
            continue  # named by its spec's hash: the same name is the same chart
        partial = out / f".{svg}.{os.getpid()}.tmp"
        partial.unlink(missing_ok=True)
        try:
            os.link(cache_dir / svg, partial)
        except OSError:
            shutil.copyfile(cache_dir / svg, partial)
        partial.replace(target)
    removed = 0
    for old in out.iterdir():
        if old.name not in wanted and old.is_file():
            old.unlink()
            removed += 1
    return Drawn(len(names), renderer.rendered, renderer.reused, removed,
                 time.perf_counter() - started)  # fmt: skip


def base_spec(title: str, description: str, values: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "$schema": VEGA_LITE_SCHEMA,
        "title": title,
        "description": description,
        "data": {"values": values},
        "config": {
            "font": FONT,
            "view": {"stroke": None},
            "axis": {"labelFontSize": 11, "titleFontSize": 12},
        },
        "background": "white",
        # vl-convert measures text with its own font metrics, a little narrower than the
        # browser's: without room at the edges, axis labels and legend entries are clipped.
        "padding": {"left": 24, "right": 24, "top": 6, "bottom": 6},
    }


def comparison_spec(title: str, description: str, bars: list[dict[str, Any]]) -> dict[str, Any]:
    """Horizontal bars of each side's centre, with the spread (min to max) as a rule.

    ``bars``: ``{"side": label, "tps": centre, "min": …, "max": …}``.
    """
    spec = base_spec(title, description, bars)
    spec |= {
        "width": 420,
        "height": {"step": 34},
        "layer": [
            {
                "mark": {"type": "bar", "color": "#1f5fa8", "height": 18},
                "encoding": {
                    "y": {"field": "side", "type": "nominal", "title": None, "sort": None},
                    "x": {"field": "tps", "type": "quantitative", "title": "tps (median)"},
                },
            },
            {
                "mark": {"type": "rule", "color": "#1d2430", "strokeWidth": 2},
                "encoding": {
                    "y": {"field": "side", "type": "nominal", "sort": None},
                    "x": {"field": "min", "type": "quantitative"},
                    "x2": {"field": "max"},
                },
            },
        ],
    }
    return spec


def curve_spec(
    title: str, description: str, points: list[dict[str, Any]], x_title: str
) -> dict[str, Any]:
    """Lines of tps against a numeric factor (clients, scale…), one line per series."""
    spec = base_spec(title, description, points)
    spec |= {
        "width": 460,
        "height": 240,
        "mark": {"type": "line", "point": True},
        "encoding": {
            "x": {"field": "x", "type": "quantitative", "title": x_title},
            "y": {"field": "tps", "type": "quantitative", "title": "tps"},
        },
    }
    if len({p.get("series") for p in points}) > 1:
        spec["encoding"]["color"] = {"field": "series", "type": "nominal", "title": None}
    return spec


def _ticks(low: float, high: float) -> list[float]:
    if high <= low:
        return [low]
    return [low, (low + high) / 2, high]


def progress_svg(
    t_s: list[Any], tps: list[Any], *, title: str, width: int = 560, height: int = 200
) -> str | None:
    """A line of tps over time from a ``-P`` progress series; ``None`` with fewer than two
    points. Deterministic text (same series, same bytes)."""
    points = [
        (float(t), float(v))
        for t, v in zip(t_s or [], tps or [], strict=False)
        if isinstance(t, int | float) and isinstance(v, int | float)
    ]
    if len(points) < 2:
        return None
    left, right, top, bottom = 64, 12, 28, 34
    plot_w, plot_h = width - left - right, height - top - bottom
    t_low, t_high = points[0][0], points[-1][0]
    v_high = max(v for _, v in points) * 1.05 or 1.0
    t_span = (t_high - t_low) or 1.0

    def x(t: float) -> float:
        return left + (t - t_low) / t_span * plot_w

    def y(v: float) -> float:
        return top + plot_h - v / v_high * plot_h

    # x and y written out: the same arithmetic, without two calls for every point.
    line = " ".join(
        f"{left + (t - t_low) / t_span * plot_w:.1f},{top + plot_h - v / v_high * plot_h:.1f}"
        for t, v in points
    )
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" '
        f'width="{width}" height="{height}" role="img" font-family="{FONT}" font-size="11">',
        f"<title>{escape(title)}</title>",
        f'<rect width="{width}" height="{height}" fill="#fff"/>',
        f'<text x="{left}" y="16" font-size="12" font-weight="600">{escape(title)}</text>',
    ]
    for value in _ticks(0.0, v_high / 1.05):
        parts.append(
            f'<line x1="{left}" x2="{width - right}" y1="{y(value):.1f}" y2="{y(value):.1f}" '
            'stroke="#d9dee7"/>'
        )
        parts.append(
            f'<text x="{left - 6}" y="{y(value) + 4:.1f}" text-anchor="end">'
            f"{escape(fmt.figure(float(value), 3) or '')}</text>"
        )
    for t in _ticks(t_low, t_high):
        parts.append(
            f'<text x="{x(t):.1f}" y="{height - bottom + 16}" text-anchor="middle">'
            f"{escape(fmt.figure(float(t), 3) or '')} s</text>"
        )
    parts.append(
        f'<text x="14" y="{top + plot_h / 2:.1f}" transform="rotate(-90 14 {top + plot_h / 2:.1f})"'
        ' text-anchor="middle">tps</text>'
    )
    parts.append(
        f'<polyline points="{line}" fill="none" stroke="#1f5fa8" stroke-width="1.5"/></svg>'
    )
    return "\n".join(parts) + "\n"


def bars_svg(title: str, bars: list[dict[str, Any]], *, width: int = 520) -> str | None:
    """Horizontal bars (``{"side", "tps", "min", "max"}``) from zero, each with its figure and,
    when the runs are known, a line from the lowest to the highest run. ``None`` without bars.
    Drawn here rather than by Vega: one per comparison, and there may be thousands."""
    bars = [b for b in bars if isinstance(b.get("tps"), int | float)]
    if not bars:
        return None
    left, right, top, row = 150, 70, 30, 30
    height = top + row * len(bars) + 24
    plot_w = width - left - right
    high = max(max(b["tps"], b.get("max") or 0) for b in bars) or 1.0

    def x(value: float) -> float:
        return left + value / high * plot_w

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" '
        f'width="{width}" height="{height}" role="img" font-family="{FONT}" font-size="11">',
        f"<title>{escape(title)}</title>",
        f'<rect width="{width}" height="{height}" fill="#fff"/>',
        f'<text x="4" y="16" font-size="12" font-weight="600">{escape(title[:90])}</text>',
    ]
    for index, bar in enumerate(bars):
        y = top + index * row
        label = str(bar["side"])
        label = label if len(label) <= 24 else label[:23] + "…"
        parts.append(f'<text x="{left - 6}" y="{y + 15}" text-anchor="end">{escape(label)}</text>')
        parts.append(
            f'<rect x="{left}" y="{y + 4}" width="{x(bar["tps"]) - left:.1f}" height="16" '
            'fill="#1f5fa8"/>'
        )
        low, top_value = bar.get("min"), bar.get("max")
        if isinstance(low, int | float) and isinstance(top_value, int | float) and low < top_value:
            parts.append(
                f'<line x1="{x(low):.1f}" x2="{x(top_value):.1f}" y1="{y + 12}" y2="{y + 12}" '
                'stroke="#1d2430" stroke-width="2"/>'
            )
        parts.append(
            f'<text x="{max(x(bar["tps"]), x(top_value or 0)) + 4:.1f}" y="{y + 15}">'
            f"{escape(fmt.figure(float(bar['tps'])) or '')}</text>"
        )
    axis_y = top + row * len(bars) + 4
    parts.append(
        f'<line x1="{left}" x2="{left + plot_w}" y1="{axis_y}" y2="{axis_y}" stroke="#d9dee7"/>'
    )
    parts.append(f'<text x="{left}" y="{axis_y + 14}" text-anchor="middle">0</text>')
    parts.append(
        f'<text x="{left + plot_w}" y="{axis_y + 14}" text-anchor="middle">'
        f"{escape(fmt.figure(float(high), 3) or '')} tps</text></svg>"
    )
    return "\n".join(parts) + "\n"


#: How wide (pixels, as vl-convert measures) a bar label of an overview chart may be.
LABEL_LIMIT = 260


def changes_spec(title: str, description: str, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """One chart per comparison page: each comparison's change of B against A, in percent,
    coloured by verdict. ``rows``: ``{"comparison", "change_pct", "verdict"}``."""
    spec = base_spec(title, description, rows)
    # The browser's font is wider than the metrics vl-convert lays labels out with, by some
    # 10-20% on a 260-pixel label: the left margin takes what a long label overflows by.
    spec["padding"] = {**spec["padding"], "left": LABEL_LIMIT // 4}
    spec |= {
        "width": 460,
        "height": {"step": 16},
        "mark": {"type": "bar"},
        "encoding": {
            "y": {"field": "comparison", "type": "nominal", "title": None, "sort": None,
                  "axis": {"labelLimit": LABEL_LIMIT}},
            "x": {"field": "change_pct", "type": "quantitative",
                  "title": "change of B against A (%)"},
            "color": {
                "field": "verdict",
                "type": "nominal",
                "title": "verdict",
                "scale": {
                    "domain": ["higher", "lower", "within_noise", "spread_unknown",
                               "not_comparable"],
                    "range": ["#1b6b2a", "#a12a1e", "#8a94a6", "#c9ced8", "#e2d9c4"],
                },
            },
        },
    }  # fmt: skip
    return spec
