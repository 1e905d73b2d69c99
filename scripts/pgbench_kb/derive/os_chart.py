"""The run page's chart of the machine, second by second (``results.os_series``).

Drawn as plain SVG, like the progress chart above it (``charts.progress_svg``) and on the same
kind of time axis, ``charts.NARROW`` wide so that no text is scaled down on a phone: the CPU
(user, system, iowait and steal, in percent of all CPUs) in the first panel, then for each
device its writes per second and its average wait per I/O. Checkpoints are shaded as on the
progress chart. A long series is drawn with at most ``LINE_POINTS`` points a line (each the
mean of the seconds it covers) and tabled in at most ``TABLE_ROWS`` rows: the run file's
download holds every second.
"""

from __future__ import annotations

from typing import Any
from xml.sax.saxutils import escape

from pgbench_kb import numbers as fmt
from pgbench_kb.derive import checkpoints
from pgbench_kb.derive.charts import (
    CHECKPOINT_FILL,
    CHECKPOINT_LINE,
    NARROW,
    TEXT_PX,
    _checkpoint_key,
    _checkpoint_spans,
    _svg_head,
    _tick_text,
    nice_ticks,
)

#: The CPU lines: field, legend, colour (told apart by more than hue: steal is dashed).
CPU_LINES = (
    ("user", "user", "#1f5fa8", ""),
    ("system", "system", "#8a4b08", ""),
    ("iowait", "iowait", "#7b2d8e", ""),
    ("steal", "steal", "#a12a1e", ' stroke-dasharray="4 2"'),
)
#: Devices drawn (their panels); the table holds every device.
DEVICES_DRAWN = 2
#: The data table under the chart has at most this many rows, and each line of the chart at
#: most this many points (one every two pixels): a long trial's page stays light (a run page
#: has a budget: tests/browser/test_site_browser.py).
TABLE_ROWS = 60
LINE_POINTS = 130
LEFT, RIGHT, TOP, PANEL_H, GAP, BOTTOM = 64, 14, 40, 80, 30, 34


def _values(series: list[Any], count: int) -> list[float | None]:
    values = list(series or [])[:count]
    return [
        float(v) if isinstance(v, int | float) and not isinstance(v, bool) else None for v in values
    ] + [None] * (count - len(values))


def host_series(run: dict[str, Any], host: str = "server") -> dict[str, Any] | None:
    """A host's entry of ``results.os_series``: the server's (the first entry when none is
    named), or the client's (pgbench's, sampled when it ran on another host)."""
    found = [s for s in (run.get("results") or {}).get("os_series") or [] if isinstance(s, dict)]
    for series in found:
        if series.get("host") == host:
            return series
    named = any(s.get("host") for s in found)
    return found[0] if found and host == "server" and not named else None


def _panels(series: dict[str, Any], count: int) -> list[tuple[str, list[tuple]]]:
    """(title, [(legend, colour, dash, values)…]) of each panel."""
    cpu = series.get("cpu_pct") if isinstance(series.get("cpu_pct"), dict) else {}
    lines = []
    for key, legend, colour, dash in CPU_LINES:
        values = _values(cpu.get(key), count)
        if key == "steal" and not any(values):
            continue  # no steal at all: one line fewer to tell apart
        if any(v is not None for v in values):
            lines.append((legend, colour, dash, values))
    panels = [("CPU (% of all CPUs)", lines)] if lines else []
    for device in _devices(series)[:DEVICES_DRAWN]:
        name = str(device.get("name"))
        writes = _values(device.get("writes"), count)
        waits = _values(device.get("await_ms"), count)
        if any(v is not None for v in writes):
            panels.append((f"{name}: writes per second", [("", "#1f5fa8", "", writes)]))
        if any(v is not None for v in waits):
            panels.append((f"{name}: average wait per I/O (ms)", [("", "#8a4b08", "", waits)]))
    return panels


def _devices(series: dict[str, Any]) -> list[dict[str, Any]]:
    return [d for d in series.get("devices") or [] if isinstance(d, dict) and d.get("name")]


def _thinned(t_s: list[float], values: list[float | None], columns: int) -> list[tuple]:
    """(t, value) points, at most ``columns`` of them: consecutive seconds averaged."""
    points = [(t, v) for t, v in zip(t_s, values, strict=False) if v is not None]
    if len(points) <= columns:
        return points
    step = len(points) / columns
    out = []
    for index in range(columns):
        chunk = points[int(index * step) : int((index + 1) * step)] or [points[-1]]
        out.append((sum(t for t, _ in chunk) / len(chunk), sum(v for _, v in chunk) / len(chunk)))
    return out


def os_svg(
    run: dict[str, Any], *, title: str, width: int = NARROW, host: str = "server"
) -> tuple[str, dict[str, Any]] | None:
    """The chart of a host's series with checkpoints shaded, and the series it drew (``t_s``,
    its panels); None with fewer than two seconds recorded."""
    series = host_series(run, host)
    if series is None:
        return None
    t_s = [float(t) for t in series.get("t_s") or [] if isinstance(t, int | float)]
    if len(t_s) < 2 or len(t_s) != len(series.get("t_s") or []):
        return None
    panels = _panels(series, len(t_s))
    if not panels:
        return None
    spans = checkpoints.spans_of(run)
    height = TOP + len(panels) * PANEL_H + (len(panels) - 1) * GAP + BOTTOM
    plot_w = width - LEFT - RIGHT
    t_low, t_high = t_s[0], t_s[-1]
    t_span = (t_high - t_low) or 1.0
    parts = _svg_head(width, height, title)
    shaded = _checkpoint_spans([(s.start, s.end) for s in spans or []], t_low, t_high)
    parts.extend(_legend(panels[0][1] if panels[0][0].startswith("CPU") else [], width))
    for number, (name, lines) in enumerate(panels):
        y0 = TOP + number * (PANEL_H + GAP)
        if name.startswith("CPU"):
            ticks = [0.0, 50.0, 100.0]
        else:
            high = max((v for *_, values in lines for v in values if v is not None), default=0)
            ticks = nice_ticks(0.0, high or 1.0, 3)
        top = ticks[-1] or 1.0
        parts.append(f'<text x="{LEFT}" y="{y0 - 8}" font-weight="600">{escape(name)}</text>')
        if shaded and number == 0:
            parts.extend(_checkpoint_key(width - RIGHT, y0 - 8))
        for start, end, marked in shaded:
            x0 = LEFT + (start - t_low) / t_span * plot_w
            x1 = LEFT + (end - t_low) / t_span * plot_w
            parts.append(
                f'<rect x="{x0:.1f}" y="{y0}" width="{max(x1 - x0, 1.0):.1f}" '
                f'height="{PANEL_H}" fill="{CHECKPOINT_FILL}"/>'
            )
            if marked:
                parts.append(
                    f'<line x1="{x0:.1f}" x2="{x0:.1f}" y1="{y0}" y2="{y0 + PANEL_H}" '
                    f'stroke="{CHECKPOINT_LINE}" stroke-dasharray="3 2"/>'
                )
        for value in ticks:
            y = y0 + PANEL_H - value / top * PANEL_H
            parts.append(
                f'<line x1="{LEFT}" x2="{width - RIGHT}" y1="{y:.1f}" y2="{y:.1f}" '
                'stroke="#d9dee7"/>'
            )
            parts.append(
                f'<text x="{LEFT - 5}" y="{y + 4:.1f}" text-anchor="end">{_tick_text(value)}</text>'
            )
        for _legend_text, colour, dash, values in lines:
            points = _thinned(t_s, values, min(plot_w, LINE_POINTS))
            if len(points) < 2:
                continue
            line = " ".join(
                f"{LEFT + (t - t_low) / t_span * plot_w:.1f},"
                f"{y0 + PANEL_H - min(v, top) / top * PANEL_H:.1f}"
                for t, v in points
            )
            parts.append(
                f'<polyline points="{line}" fill="none" stroke="{colour}" '
                f'stroke-width="1.5"{dash}/>'
            )
    axis_y = TOP + len(panels) * PANEL_H + (len(panels) - 1) * GAP
    for index, t in enumerate((t_low, t_high)):
        anchor = "start" if index == 0 else "end"
        x = LEFT if index == 0 else width - RIGHT
        parts.append(
            f'<text x="{x}" y="{axis_y + 16}" text-anchor="{anchor}">{_tick_text(t)} s</text>'
        )
    parts.append(
        f'<text x="{LEFT + plot_w / 2:.1f}" y="{axis_y + 16}" text-anchor="middle">'
        "time into the run</text></svg>"
    )
    return "\n".join(parts) + "\n", {"t_s": t_s, "series": series}


def _legend(lines: list[tuple], width: int) -> list[str]:
    """The CPU lines' key along the top: a short stroke, then its name."""
    parts = []
    x = float(LEFT)
    for legend, colour, dash, _ in lines:
        parts.append(
            f'<line x1="{x:.1f}" x2="{x + 14:.1f}" y1="10" y2="10" stroke="{colour}" '
            f'stroke-width="2"{dash}/>'
        )
        parts.append(f'<text x="{x + 18:.1f}" y="14">{escape(legend)}</text>')
        x += 18 + len(legend) * TEXT_PX * 0.55 + 10
    return parts if x <= width else []


def _every(interval: Any) -> str:
    if interval in {None, 1}:
        return "every second"
    return f"every {fmt.count(interval, 'second')}"


def _mean(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return round(sum(present) / len(present), 2) if present else None


#: How the chart and its description name each host.
HOST_WORDS = {
    "server": ("The server's", "The server's host"),
    "client": ("pgbench's", "pgbench's host"),
}


def os_chart(run: dict[str, Any], host: str = "server") -> dict[str, Any] | None:
    """The run page's chart of the machine: its SVG, description, data rows and their
    columns; None when the run records no such series. The table has at most
    ``TABLE_ROWS`` rows (each the mean of as many whole seconds as needed), so that a long
    trial does not weigh down its page; the run file's download holds every second."""
    spans = checkpoints.spans_of(run)
    shaded = " (checkpoints shaded)" if spans else ""
    whose, name = HOST_WORDS[host]
    drawn = os_svg(run, title=f"{whose} CPU and disks every second{shaded}", host=host)
    if drawn is None:
        return None
    svg, used = drawn
    series, t_s = used["series"], used["t_s"]
    count = len(t_s)
    cpu = series.get("cpu_pct") if isinstance(series.get("cpu_pct"), dict) else {}
    columns, keys = ["Time (s)"], ["t"]
    cells: list[list[float | None]] = []
    for key, legend, *_ in CPU_LINES:
        values = _values(cpu.get(key), count)
        if key == "steal" and not any(values):
            continue
        columns.append(f"{legend} %")
        keys.append(key)
        cells.append(values)
    devices = _devices(series)
    for number, device in enumerate(devices):
        for field, what in (("writes", "writes/s"), ("reads", "reads/s"),
                            ("await_ms", "wait (ms)")):  # fmt: skip
            columns.append(f"{device['name']} {what}")
            keys.append(f"d{number}_{field}")
            cells.append(_values(device.get(field), count))
    step = -(-count // TABLE_ROWS)
    interval = float(series.get("interval_s") or 1)
    rows = []
    for first in range(0, count, step):
        last = min(first + step, count)
        t = t_s[last - 1]
        row = {"t": fmt.figure(t)}
        for key, values in zip(keys[1:], cells, strict=True):
            row[key] = fmt.figure(_mean(values[first:last]))
        if spans is not None:
            row["checkpoint"] = checkpoints.during(spans, t, t - t_s[first] + interval)
        rows.append(row)
    if spans is not None:
        columns.append("Checkpoint")
        keys.append("checkpoint")
    drawn_devices = ", ".join(str(d["name"]) for d in devices[:DEVICES_DRAWN])
    more = len(devices) - DEVICES_DRAWN
    description = (
        f"{name} {_every(series.get('interval_s'))} over "
        f"{fmt.count(count, 'point')}: CPU time by kind in percent of all its CPUs"
        + (f"; below, writes per second and the average wait per I/O of {drawn_devices}"
           if drawn_devices else "")
        + (f" ({fmt.count(more, 'more device')} in the data only)" if more > 0 else "")
        + (". Checkpoints are shaded as on the throughput chart." if spans else ".")
        + (f" In the data, each row is the mean of the {fmt.count(step * interval, 'second')} "
           "up to its time." if step > 1 else "")
    )  # fmt: skip
    return {"svg": svg, "description": description, "rows": rows, "columns": columns,
            "keys": keys}  # fmt: skip
