"""Charts for the site, as SVG files written at build time (no JavaScript needed to see them).

- Comparison and curve charts: Vega-Lite specs. ``kb derive`` writes each spec into its output
  (``specs/<sha256 of the spec>.vl.json``) and names the chart after the same hash; the charts
  stage (``kb charts``, ``draw_charts``) then renders every spec with ``vl_convert`` through a
  cache (``build/cache/charts/``), so a rebuild redraws only the charts whose spec changed, and
  leaves exactly the current charts in ``build/charts/`` (mounted by Hugo at ``/charts/``).
  Vega-Lite's own default font is replaced by the reader's system font: an SVG never names an
  outside URL.
- The ``-P`` progress chart of each run (tps, and latency where pgbench logged it) and the
  runs of each comparison (a dot per run): drawn here as plain SVG (a few hundred bytes of
  code instead of one Vega call each: at about 15-20 ms of CPU a chart, measured, 10,000 runs
  would take minutes). Both are placed in their page itself (thousands of small files cost
  more to write and copy than to inline).

Every chart is laid out for a phone's column (336 px on a 360-px screen), so no text is scaled
below 11 px there; a wide screen shows it at that size.

Every chart is shown with a title, a text description and its data table beside it (layouts
``chart/figure.html``). Every text put into an SVG here is XML-escaped, so an SVG placed in
a page shows data as text; an SVG loaded through ``<img>`` runs no script whatever it
contains.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

from pgbench_kb import numbers as fmt
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
#: ... or from this many data rows in all: an overview of 300 comparisons takes about 1.2 s to
#: draw (measured on the 10,000-run tree: its 26 overviews took 30 s in one process), so a
#: few such charts are worth the workers' start.
PARALLEL_ROWS = 3000


def _rows(spec: dict[str, Any]) -> int:
    return len((spec.get("data") or {}).get("values") or [])


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
        # The heaviest first, so that the workers end together.
        names = sorted(self.pending, key=lambda name: (-_rows(self.pending[name]), name))
        specs = [self.pending[name] for name in names]
        heavy = sum(_rows(spec) for spec in specs) >= PARALLEL_ROWS
        if (len(specs) >= PARALLEL_FROM or heavy) and cores() > 1:
            # Spawned, not forked: vl-convert runs threads of its own, and a fork of a process
            # that has used it can hang in the child.
            workers = worker_count()
            chunk = 4 if len(specs) >= PARALLEL_FROM else 1
            svgs = map_in_workers(_draw, specs, workers=workers, chunksize=chunk, start="spawn")
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


#: Inline charts are drawn this wide, or narrower: a page's column is 336 px wide on a 360-px
#: screen, so an inline chart is never scaled down there and its text stays at its size.
NARROW = 336
#: Every text in a chart is at least this many pixels (at 360 px as on a wide screen).
TEXT_PX = 12


def nice_ticks(low: float, high: float, count: int = 4) -> list[float]:
    """Round values (1, 2 or 5 times a power of ten) from ``low`` to ``high``, about
    ``count`` of them; the first at or below ``low``, the last at or above ``high``."""
    if high <= low:
        high = low + (abs(low) or 1.0)
    raw = (high - low) / max(count - 1, 1)
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)
    first = math.floor(low / step) * step
    ticks = [first]
    while ticks[-1] < high - step * 1e-9:
        ticks.append(ticks[-1] + step)
    return [round(t, 10) for t in ticks]


def _svg_head(width: int, height: int, title: str) -> list[str]:
    return [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" '
        f'width="{width}" height="{height}" role="img" font-family="{FONT}" '
        f'font-size="{TEXT_PX}">',
        f"<title>{escape(title)}</title>",
        f'<rect width="{width}" height="{height}" fill="#fff"/>',
    ]


def _tick_text(value: float) -> str:
    return escape(fmt.figure(float(value), 3) or "")


def progress_svg(
    t_s: list[Any],
    tps: list[Any],
    *,
    title: str,
    latency_ms: list[Any] | None = None,
    checkpoints: list[tuple[float | None, float | None]] | None = None,
    width: int = NARROW,
) -> str | None:
    """tps over time from a ``-P`` progress series and, where pgbench logged it, the latency
    of each interval in a panel below on the same time axis; ``None`` with fewer than two
    points. ``checkpoints`` (start, end in seconds; None: before the first point, after the
    last) are shaded in every panel, a dashed line at each start. Drawn ``NARROW`` so that its
    text is never scaled down. Deterministic text (same series, same bytes)."""
    points = [
        (float(t), float(v))
        for t, v in zip(t_s or [], tps or [], strict=False)
        if isinstance(t, int | float) and isinstance(v, int | float)
    ]
    if len(points) < 2:
        return None
    lat = [
        (float(t), float(v))
        for t, v in zip(t_s or [], latency_ms or [], strict=False)
        if isinstance(t, int | float) and isinstance(v, int | float)
    ]
    panels = [("tps", points)] + ([("latency (ms)", lat)] if len(lat) >= 2 else [])
    left, right, top, panel_h, gap, bottom = 64, 14, 22, 110, 30, 34
    height = top + len(panels) * panel_h + (len(panels) - 1) * gap + bottom
    plot_w = width - left - right
    t_low, t_high = points[0][0], points[-1][0]
    t_span = (t_high - t_low) or 1.0
    parts = _svg_head(width, height, title)
    shaded = _checkpoint_spans(checkpoints or [], t_low, t_high)
    for number, (name, series) in enumerate(panels):
        y0 = top + number * (panel_h + gap)
        ticks = nice_ticks(0.0, max(v for _, v in series), 3)
        high = ticks[-1] or 1.0
        parts.append(f'<text x="{left}" y="{y0 - 8}" font-weight="600">{escape(name)}</text>')
        if shaded and number == 0:
            parts.extend(_checkpoint_key(width - right, y0 - 8))
        for start, end, marked in shaded:
            x0 = left + (start - t_low) / t_span * plot_w
            x1 = left + (end - t_low) / t_span * plot_w
            parts.append(
                f'<rect x="{x0:.1f}" y="{y0}" width="{max(x1 - x0, 1.0):.1f}" '
                f'height="{panel_h}" fill="{CHECKPOINT_FILL}"/>'
            )
            if marked:
                parts.append(
                    f'<line x1="{x0:.1f}" x2="{x0:.1f}" y1="{y0}" y2="{y0 + panel_h}" '
                    f'stroke="{CHECKPOINT_LINE}" stroke-dasharray="3 2"/>'
                )
        for value in ticks:
            y = y0 + panel_h - value / high * panel_h
            parts.append(
                f'<line x1="{left}" x2="{width - right}" y1="{y:.1f}" y2="{y:.1f}" '
                'stroke="#d9dee7"/>'
            )
            parts.append(
                f'<text x="{left - 5}" y="{y + 4:.1f}" text-anchor="end">{_tick_text(value)}</text>'
            )
        # x and y written out: the same arithmetic, without two calls for every point.
        line = " ".join(
            f"{left + (t - t_low) / t_span * plot_w:.1f},{y0 + panel_h - v / high * panel_h:.1f}"
            for t, v in series
        )
        colour = "#1f5fa8" if number == 0 else "#8a4b08"
        parts.append(
            f'<polyline points="{line}" fill="none" stroke="{colour}" stroke-width="1.5"/>'
        )
    axis_y = top + len(panels) * panel_h + (len(panels) - 1) * gap
    for index, t in enumerate((t_low, t_high)):
        anchor = "start" if index == 0 else "end"
        x = left if index == 0 else width - right
        parts.append(
            f'<text x="{x}" y="{axis_y + 16}" text-anchor="{anchor}">{_tick_text(t)} s</text>'
        )
    parts.append(
        f'<text x="{left + plot_w / 2:.1f}" y="{axis_y + 16}" text-anchor="middle">'
        "time into the run</text></svg>"
    )
    return "\n".join(parts) + "\n"


#: A checkpoint's span on a progress chart: a pale amber band, its start a dashed darker line
#: (the band's edge alone would be lost beside a grid line).
CHECKPOINT_FILL = "#f6dfb3"
CHECKPOINT_LINE = "#9a5b00"


def _checkpoint_spans(
    checkpoints: list[tuple[float | None, float | None]], t_low: float, t_high: float
) -> list[tuple[float, float, bool]]:
    """The part of each checkpoint inside the chart's time axis: (from, to, whether its start
    is on the chart), in time order; checkpoints wholly outside it are left out."""
    spans = []
    for start, end in checkpoints:
        begin = t_low if start is None else max(start, t_low)
        finish = t_high if end is None else min(end, t_high)
        if begin > t_high or finish < t_low or finish < begin:
            continue
        spans.append((begin, finish, start is not None and start >= t_low))
    return sorted(spans)


def _checkpoint_key(right_x: float, baseline: float) -> list[str]:
    """The key at the top right of the first panel (a swatch, then "checkpoint"): what the
    shading means."""
    label = "checkpoint"
    text_w = len(label) * TEXT_PX * 0.55
    swatch_x = right_x - text_w - 14
    return [
        f'<rect x="{swatch_x:.1f}" y="{baseline - 10}" width="10" height="10" '
        f'fill="{CHECKPOINT_FILL}" stroke="{CHECKPOINT_LINE}"/>',
        f'<text x="{right_x}" y="{baseline}" text-anchor="end">{label}</text>',
    ]


def runs_svg(sides: list[dict[str, Any]], *, title: str, width: int = NARROW) -> str | None:
    """Each side of a comparison on one tps axis: a dot per run, a line from its lowest to its
    highest run, and a tall mark at its centre (the median, or the published figure).
    ``sides``: ``{"name": "A", "runs": [tps…], "center": tps}``. ``None`` unless a side has
    two runs or more: then the table beside it says all the chart would."""
    sides = [s for s in sides if isinstance(s.get("center"), int | float)]
    if len(sides) != 2 or not any(len(s.get("runs") or []) >= 2 for s in sides):
        return None
    values = [float(v) for s in sides for v in [s["center"], *(s.get("runs") or [])]]
    ticks = nice_ticks(min(values), max(values), 4)
    low, high = ticks[0], ticks[-1]
    left, right, top, row = 40, 18, 8, 40
    height = top + row * len(sides) + 40
    plot_w = width - left - right

    def x(value: float) -> float:
        return left + (value - low) / ((high - low) or 1.0) * plot_w

    parts = _svg_head(width, height, title)
    axis_y = top + row * len(sides)
    for value in ticks:
        parts.append(
            f'<line x1="{x(value):.1f}" x2="{x(value):.1f}" y1="{top}" y2="{axis_y}" '
            'stroke="#e6e9ef"/>'
        )
    for index, side in enumerate(sides):
        y = top + index * row + row / 2
        parts.append(
            f'<text x="{left - 10}" y="{y + 4:.1f}" text-anchor="end" font-weight="600">'
            f"{escape(str(side['name']))}</text>"
        )
        runs = [float(v) for v in side.get("runs") or []]
        if len(runs) >= 2:
            parts.append(
                f'<line x1="{x(min(runs)):.1f}" x2="{x(max(runs)):.1f}" y1="{y:.1f}" '
                f'y2="{y:.1f}" stroke="#5b6577" stroke-width="1.5"/>'
            )
        # one group carries the dots' look: a comparison page holds dozens of these charts
        parts.append('<g fill="#1f5fa8" fill-opacity="0.75">')
        parts.extend(f'<circle cx="{x(value):.1f}" cy="{y:.1f}" r="4.5"/>' for value in runs)
        parts.append("</g>")
        centre = x(float(side["center"]))
        parts.append(
            f'<line x1="{centre:.1f}" x2="{centre:.1f}" y1="{y - 12:.1f}" y2="{y + 12:.1f}" '
            'stroke="#1d2430" stroke-width="2.5"/>'
        )
    parts.append(
        f'<line x1="{left}" x2="{left + plot_w}" y1="{axis_y}" y2="{axis_y}" stroke="#8a94a6"/>'
    )
    for index, value in enumerate(ticks):
        anchor = "start" if index == 0 else "end" if index == len(ticks) - 1 else "middle"
        parts.append(
            f'<text x="{x(value):.1f}" y="{axis_y + 16}" text-anchor="{anchor}">'
            f"{_tick_text(value)}</text>"
        )
    parts.append(
        f'<text x="{left + plot_w / 2:.1f}" y="{axis_y + 33}" text-anchor="middle">'
        "tps (the axis does not start at zero)</text></svg>"
    )
    return "\n".join(parts) + "\n"


#: How wide (pixels, as vl-convert measures) a bar label of an overview chart may be.
LABEL_LIMIT = 120

#: A verdict as the overview's legend says it.
VERDICT_LEGEND = {
    "higher": "B clearly higher",
    "lower": "B clearly lower",
    "within_noise": "within the noise",
    "spread_unknown": "not judged: spread unknown",
    "not_comparable": "not judged: measured apart",
}
VERDICT_COLOURS = {
    "higher": "#1b6b2a",
    "lower": "#a12a1e",
    "within_noise": "#8a94a6",
    "spread_unknown": "#c9ced8",
    "not_comparable": "#d9c9a3",
}

#: Vega-Lite charts are laid out this wide in all (labels and padding included), so that a
#: chart shown at 336 px on a 360-px screen is not scaled down and its text stays at 11 px
#: or more.
CHART_WIDTH = 180


def _narrow(spec: dict[str, Any]) -> dict[str, Any]:
    """Text sizes and a legend under the chart, for a chart no wider than a phone's column."""
    spec["config"] |= {
        "axis": {"labelFontSize": 11, "titleFontSize": 11, "titleFontWeight": "normal"},
        "legend": {"labelFontSize": 11, "titleFontSize": 11, "orient": "bottom",
                   "direction": "vertical", "labelLimit": 300},
        "header": {"labelFontSize": 12, "labelFontWeight": 600},
        "title": {"fontSize": 12, "anchor": "start", "limit": 300},
    }  # fmt: skip
    spec["padding"] = {"left": 8, "right": 16, "top": 6, "bottom": 6}
    return spec


def changes_spec(title: str, description: str, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """One chart per comparison page: each comparison's change of B against A, in percent,
    coloured by verdict (the legend in words), in one panel per machine and workload (a
    percent on one workload does not read against one on another), each panel titled from its
    left edge. ``rows``: ``{"comparison", "change_pct", "verdict", "panel"}``."""
    present = [v for v in VERDICT_LEGEND if any(r.get("verdict") == v for r in rows)]
    values = [r | {"verdict_words": VERDICT_LEGEND.get(str(r.get("verdict")), "")} for r in rows]
    spec = _narrow(base_spec(title, description, values))
    spec.pop("title")
    # The browser's font is wider than the metrics vl-convert lays text out with (by some
    # 10-20%): a margin takes what a label cut at LABEL_LIMIT may overflow by.
    spec["padding"] = {"left": LABEL_LIMIT // 4, "right": 24, "top": 6, "bottom": 6}
    panels = list(dict.fromkeys(str(r.get("panel")) for r in rows))
    spec |= {
        "vconcat": [
            {
                "title": {"text": panel, "anchor": "start", "frame": "bounds", "fontSize": 12,
                          "limit": CHART_WIDTH + LABEL_LIMIT - 110},
                "transform": [{"filter": {"field": "panel", "equal": panel}}],
                "width": CHART_WIDTH - 60,
                "height": {"step": 18},
                "mark": {"type": "bar"},
                "encoding": {
                    "y": {"field": "comparison", "type": "nominal", "title": None, "sort": None,
                          "axis": {"labelLimit": LABEL_LIMIT}},
                    "x": {"field": "change_pct", "type": "quantitative",
                          "title": "change of B against A (%)", "axis": {"tickCount": 3}},
                    "color": {
                        "field": "verdict_words",
                        "type": "nominal",
                        "title": "verdict",
                        "scale": {"domain": [VERDICT_LEGEND[v] for v in present],
                                  "range": [VERDICT_COLOURS[v] for v in present]},
                    },
                },
            }
            for panel in panels
        ],
        "resolve": {"scale": {"color": "shared"}},
    }  # fmt: skip
    return spec


def curve_spec(
    title: str,
    description: str,
    points: list[dict[str, Any]],
    x_title: str,
    *,
    log2: bool = False,
) -> dict[str, Any]:
    """Lines of tps against a numeric factor (clients, scale…), one line per series, on a
    log₂ axis for clients as pgbench-tools draws them (1, 2, 4 … evenly spaced)."""
    spec = _narrow(base_spec(title, description, points))
    xs = sorted({p["x"] for p in points if isinstance(p.get("x"), int | float)})
    x: dict[str, Any] = {"field": "x", "type": "quantitative", "title": x_title}
    if log2 and xs and xs[0] > 0:
        x |= {"scale": {"type": "log", "base": 2}, "axis": {"values": xs, "format": "d"}}
    spec |= {
        "width": CHART_WIDTH,
        "height": 160,
        "mark": {"type": "line", "point": True},
        "encoding": {
            "x": x,
            "y": {"field": "tps", "type": "quantitative", "title": "tps",
                  "axis": {"tickCount": 4}},
        },
    }  # fmt: skip
    if len({p.get("series") for p in points}) > 1:
        spec["encoding"]["color"] = {"field": "series", "type": "nominal", "title": None}
    return spec


def latency_spec(title: str, description: str, points: list[dict[str, Any]]) -> dict[str, Any]:
    """Average latency against tps, each series' points joined in the order of the swept
    factor (pgbench-tools' latency-against-throughput plot): where tps stops rising and
    latency climbs is the knee. ``points``: ``{"tps", "latency", "x", "series"}``."""
    spec = _narrow(base_spec(title, description, points))
    spec |= {
        "width": CHART_WIDTH,
        "height": 160,
        "mark": {"type": "line", "point": True},
        "encoding": {
            "x": {"field": "tps", "type": "quantitative", "title": "tps",
                  "axis": {"tickCount": 4}},
            "y": {"field": "latency", "type": "quantitative", "title": "latency avg (ms)",
                  "axis": {"tickCount": 4}},
            "order": {"field": "x", "type": "quantitative"},
        },
    }  # fmt: skip
    if len({p.get("series") for p in points}) > 1:
        spec["encoding"]["color"] = {"field": "series", "type": "nominal", "title": None}
    return spec
