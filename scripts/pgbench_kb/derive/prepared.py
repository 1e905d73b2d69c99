"""Everything ``kb derive`` computes from one run file alone, computed once per file.

A run page is mostly the run's own: its figures, setup, facts, settings, raw output and progress
chart. Only its title (what sets it apart from its machine's other runs) and its links (group,
comparisons, stability, last change) need the other runs. ``prepare`` computes the part of one
run that needs nothing else — already written as JSON text — with the row lists show, the
record ``analyze`` reads, the features titles are made of, and the run's JSON for the download.

``Loading`` prepares every run file — when there are many, in two passes by worker processes
(what the analysis needs first, then the page texts while it runs) — and keeps what it
prepared in ``ROOT/build/cache/derive-runs.pickle``: a file is prepared again only when it, one
of its raw files, or the code changed. So a build after adding one run prepares one run.
"""

from __future__ import annotations

import hashlib
import os
import pickle
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from pgbench_kb import jsontext
from pgbench_kb import numbers as fmt
from pgbench_kb.derive import bottleneck, charts, checkpoints, os_chart, run_view
from pgbench_kb.derive.setup_text import title_features
from pgbench_kb.errors import KbError, RunFileError
from pgbench_kb.parallel import Forked, TwoSteps, cores, worker_count
from pgbench_kb.runs.files import run_files
from pgbench_kb.runs.runfile import RUNS_DIR, read_run
from pgbench_kb.runs.stamps import code_fingerprint, file_stamp

#: From this many files to prepare, preparing runs in parallel processes.
PARALLEL_FROM = 500
CACHE_NAME = "derive-runs.pickle"
#: What the last ``load`` did: run files prepared, and taken from the cache (for the summary).
LAST_LOAD: dict[str, int] = {"prepared": 0, "reused": 0}


@dataclass
class Progress:
    """A run's ``-P`` chart: the SVG (placed in the page), the rest of its description after
    the title, and its data rows as JSON text."""

    svg: str
    description_tail: str
    rows_json: str
    #: Whether the run records checkpoint times (its rows then have a ``checkpoint`` cell).
    marked: bool = False


@dataclass
class Prepared:
    """One run, prepared. Its two large texts (the facts and the rest of the page before the
    progress chart; the run's JSON for the download) are some 9 KB a run, 90 MB at 10,000
    runs: kept as they are (compressing them cost a cold derivation a second of CPU for
    some 60 MB less in memory and on disk)."""

    #: The run file's path as pages show it (relative to the root when it is inside).
    path: str
    row: dict[str, Any]
    record: Any
    features: dict[str, Any]
    before_progress: str
    progress: Progress | None
    after_progress: str
    download: str
    #: The raw files the run lists (the page shows its output): a change prepares it again.
    raw_paths: tuple[str, ...] = ()
    #: What search filters the run by (its configuration's page carries the same).
    facets: dict[str, str] = field(default_factory=dict)
    #: SHA-1 of the page's texts above: with the run's title and links, all a page is made of.
    page_digest: str = ""


def _dumps(value: Any) -> str:
    return jsontext.strict(value)


def _items(values: dict[str, Any]) -> str:
    """``"a": 1, "b": 2`` — a mapping's items as JSON text, to be put inside another mapping
    (``json.dumps`` of the whole would write the same bytes)."""
    return _dumps(values)[1:-1]


def progress_of(run: dict[str, Any]) -> Progress | None:
    progress = run_view._get(run, "results.progress") or {}
    t_s, tps = progress.get("t_s"), progress.get("tps")
    latency = progress.get("latency_ms") or []
    interval = progress.get("interval_s") or 1
    every = "every second" if progress.get("interval_s") == 1 else "per progress interval"
    spans = checkpoints.spans_of(run)
    shaded = " (checkpoints shaded)" if spans else ""
    svg = charts.progress_svg(
        t_s or [],
        tps or [],
        latency_ms=latency,
        checkpoints=[(span.start, span.end) for span in spans or []],
        title=(
            f"tps and latency {every}{shaded}"
            if any(isinstance(v, int | float) for v in latency)
            else f"tps {every}{shaded}"
        ),
    )
    if svg is None:
        return None
    rows = []
    for index, (t, value) in enumerate(zip(t_s, tps, strict=False)):
        lat = latency[index] if index < len(latency) else None
        row = {"t": fmt.figure(t), "tps": fmt.figure(value), "latency": fmt.figure(lat)}
        if spans is not None and isinstance(t, int | float):
            row["checkpoint"] = checkpoints.during(spans, float(t), float(interval))
        rows.append(row)
    values = [v for v in tps if isinstance(v, int | float)]
    tail = (
        f" as pgbench reported it every "
        f"{fmt.count(interval, 'second')}: "
        f"{fmt.count(len(values), 'point')}, from {fmt.figure(float(min(values)))} to "
        f"{fmt.tps(float(max(values)))}"
        + (
            "; below it, the average latency of each interval, in ms"
            if any(isinstance(v, int | float) for v in latency)
            else ""
        )
        + f". {checkpoints.words(run)}"
    )
    return Progress(svg, tail, _dumps(rows), marked=spans is not None)


def subtitle(row: dict[str, Any]) -> str:
    machine_words = f"on {row['machine']}"
    if row["client_machine"]:
        machine_words += f" (pgbench on {row['client_machine']})"
    origin = {"measured": "measured", "transcribed": "transcribed from a publication"}.get(
        str(row["origin"]), str(row["origin"])
    )
    return f"{machine_words} · recorded {row['recorded_at']} · {origin}"


@dataclass
class Light:
    """What the analysis, the titles and the links need of a run: the first of ``Loading``'s
    two passes. ``Prepared`` has the same fields (and the page's texts besides)."""

    path: str
    row: dict[str, Any]
    record: Any
    features: dict[str, Any]
    facets: dict[str, str]
    raw_paths: tuple[str, ...]


@dataclass
class PageParts:
    """The texts of a run's page and download: the second of ``Loading``'s two passes."""

    before_progress: str
    progress: Progress | None
    after_progress: str
    download: str
    page_digest: str


def prepare_light(run: dict[str, Any], shown: Path, root: Path | None = None) -> Light:
    """One run file's data (``shown`` is its path as pages show it) → what the analysis,
    titles and links need of it (with ``root``, its transaction logs are read there for the
    record's ``latency_trust``)."""
    from pgbench_kb.analyze.load import record_of

    row = run_view.run_row(run, shown)
    return Light(
        path=shown.as_posix(),
        row=row,
        record=record_of(run, shown.as_posix(), root),
        features=title_features(run),
        facets=run_view.facets(run, row),
        raw_paths=tuple(
            str(item["path"])
            for item in run.get("raw") or []
            if isinstance(item, dict) and item.get("path")
        ),
    )


def prepare_page(
    run: dict[str, Any], shown: Path, root: Path, light: Light | None = None
) -> PageParts:
    """One run file's data → the texts of its page and of its download (``light``: what
    ``prepare_light`` made of it already)."""
    results = run.get("results") or {}
    row = light.row if light else run_view.run_row(run, shown)
    front = {
        "subtitle": subtitle(row),
        "figures": run_view.figures(run, row)
        + run_view.latency_trust_rows(light.record.latency_trust if light else None),
        "setup": run_view.setup(run, row),
        "percentiles": run_view.ordered_percentiles(
            results.get("latency_percentiles_ms"), results.get("latency_percentiles_from")
        ),
        "percentiles_source": run_view.describe_percentile_source(
            results.get("latency_percentiles_from")
        ),
        "statements": run_view.statements(results),
        "counters": run_view.counters(run),
        "settings": run_view.split_settings(
            run_view._get(run, "postgres.settings"),
            run_view._get(run, "postgres.build.block_size_bytes"),
            transcribed=run.get("origin") == "transcribed",
        ),
        "facts": run_view.facts(run),
    }
    after = {
        "raw": run_view.raw_output(run, root),
        "facets": light.facets if light else run_view.facets(run, row),
        "sort_tps": f"{row['tps']:.6f}" if isinstance(row["tps"], int | float) else None,
        "notes": run_view._get(run, "provenance.notes"),
        "source": run_view._get(run, "provenance.source")
        if row["origin"] == "transcribed"
        else None,
        # What the machine and the backends were doing (issue #36): the chart, the wait
        # profile, the flush line and the run's bottleneck sentence.
        "why": bottleneck.run_view(run)
        | {"chart": os_chart.os_chart(run), "client_chart": os_chart.os_chart(run, "client")},
    }
    before_progress = _items(front)
    progress = progress_of(run)
    after_progress = _items(after)
    digest = hashlib.sha1(before_progress.encode("utf-8"))
    if progress is not None:
        for text in (progress.svg, progress.description_tail, progress.rows_json):
            digest.update(b"\0" + text.encode("utf-8"))
    digest.update(b"\0" + after_progress.encode("utf-8"))
    return PageParts(
        before_progress=before_progress,
        progress=progress,
        after_progress=after_progress,
        download=jsontext.lenient(run),
        page_digest=digest.hexdigest(),
    )


def joined(light: Light, parts: PageParts) -> Prepared:
    """A run prepared whole, from its two passes."""
    return Prepared(
        path=light.path,
        row=light.row,
        record=light.record,
        features=light.features,
        before_progress=parts.before_progress,
        progress=parts.progress,
        after_progress=parts.after_progress,
        download=parts.download,
        raw_paths=light.raw_paths,
        facets=light.facets,
        page_digest=parts.page_digest,
    )


def prepare(run: dict[str, Any], shown: Path, root: Path) -> Prepared:
    """One run file's data (``shown`` is its path as pages show it) → what its page and the
    lists need from it alone."""
    light = prepare_light(run, shown, root)
    return joined(light, prepare_page(run, shown, root, light))


def _read(path: Path) -> Any:
    return read_run(path, follow_links=False).data


def _prepare_file(job: tuple[str, str, str]) -> Prepared | str | None:
    """One run file prepared whole, ``None`` for a file that holds no mapping, or the one-line
    error."""
    path, shown, root = job
    try:
        data = _read(Path(path))
        if not isinstance(data, dict):
            return None
        return prepare(data, Path(shown), Path(root))
    except KbError as exc:
        return str(exc)


def _light_file(job: tuple[str, str, str]) -> tuple[Light | str | None, Any]:
    """Worker, first pass: the run's ``Light`` (or ``None``, or its error), kept with its
    data for the second pass."""
    path, shown, root = job
    try:
        data = _read(Path(path))
        if not isinstance(data, dict):
            return None, None
        light = prepare_light(data, Path(shown), Path(root))
        return light, (data, light)
    except KbError as exc:
        return str(exc), None


def _page_file(job: tuple[str, str, str], kept: Any) -> PageParts | str | None:
    """Worker, second pass: the texts of the run's page, from the data and ``Light`` the first
    kept."""
    if kept is None:
        return None
    try:
        return prepare_page(kept[0], Path(job[1]), Path(job[2]), kept[1])
    except KbError as exc:
        return str(exc)


def _checked(result: Any) -> Any:
    if isinstance(result, str):
        raise RunFileError(result)
    return result


def _parts(path: str) -> list[str]:
    return path.split(os.sep)


def shown_path(path: Path, root: Path) -> Path:
    return path.relative_to(root) if path.is_relative_to(root) else path


class Loading:
    """Every run file under ``runs_dir`` (default ``ROOT/data/runs``) prepared, in path order;
    files that hold no mapping are left out (``kb check`` names them).

    Many files to prepare are prepared in two passes by worker processes, each keeping its
    share of the files' data in between (``parallel.TwoSteps``): first what the analysis needs
    (``light``: fast, sent in parts), then — at a lower priority, while this process analyses
    — the texts of each page (``prepared`` waits for them). The cache of many runs is then
    saved by a forked process while this one goes on. Use it as a context manager: leaving the
    block waits for that save, or — by an exception (Ctrl-C included) — stops the workers and
    the save, whose partial file is removed."""

    def __init__(self, root: Path, runs_dir: Path | None = None) -> None:
        folder = runs_dir or root / RUNS_DIR
        # In the order of the paths (their parts compared in turn), as strings: 10,000 paths
        # are sorted and shown a good deal faster so.
        self.paths = sorted((str(p) for p in run_files(root, folder)), key=_parts)
        self.cache = PreparedCache(root)
        found: dict[str, Any] = {}
        self.todo = []
        inside = str(root).rstrip(os.sep) + os.sep
        for path in self.paths:
            hit = self.cache.get(path)
            if hit is self.cache.MISS:
                shown = path[len(inside) :] if path.startswith(inside) else path
                self.todo.append((path, shown, str(root)))
            else:
                found[path] = hit
        self.found = found
        self.pages: TwoSteps | None = None
        #: The workers, once they sent all they had to (joined when the block ends).
        self.ended: TwoSteps | None = None
        self.saving: Forked | None = None
        self.lights: dict[str, Light | None] = {}
        fresh = len(self.todo)
        if len(self.todo) >= PARALLEL_FROM and worker_count() > 1:
            workers = worker_count()
            self.pages = TwoSteps(_light_file, _page_file, self.todo, workers=workers, behind=True)
            try:
                done = self.pages.first_results()
                self.lights = {job[0]: _checked(r) for job, r in zip(self.todo, done, strict=True)}
            except BaseException:
                self.pages.stop()
                raise
        else:
            for job in self.todo:
                found[job[0]] = _checked(_prepare_file(job))
                self.cache.put(job[0], found[job[0]])
            self.todo = []
        LAST_LOAD.update(prepared=fresh, reused=len(self.paths) - fresh)

    def light(self) -> list[Any]:
        """Every run's ``Light`` (or its ``Prepared``, from the cache), in path order."""
        return [
            run
            for run in (self.found.get(p) or self.lights.get(p) for p in self.paths)
            if run is not None
        ]

    def ready(self) -> bool:
        """Whether ``prepared`` would not wait for the workers' second pass."""
        return self.pages is None or self.pages.second_ready()

    def prepared(self) -> list[Prepared]:
        """Every run prepared whole, in path order, once the second pass is done; the cache
        being saved (the block's end waits for it)."""
        if self.pages is not None:
            parts = self.pages.second_results()
            self.ended, self.pages = self.pages, None
            for job, part in zip(self.todo, parts, strict=True):
                light = self.lights[job[0]]
                whole = None if light is None else joined(light, _checked(part))
                self.found[job[0]] = whole
                self.cache.put(job[0], whole)
        # Saving forks whatever ran here before (``parallel.fork_safe``): it parses no log.
        if len(self.paths) < PARALLEL_FROM or cores() < 2:
            self.cache.save(self.paths)
        elif self.saving is None and self.cache.needs_saving(self.paths):
            self.saving = Forked(partial(self.cache.save, self.paths), behind=True)
        return [run for run in (self.found[p] for p in self.paths) if run is not None]

    def __enter__(self) -> Loading:
        return self

    def __exit__(self, kind: object, _value: object, _trace: object) -> None:
        if kind is not None and self.pages is not None:
            self.pages.stop()
        if self.ended is not None:
            self.ended.join()
        if self.saving is None:
            return
        try:
            if kind is None:
                self.saving.result()
        finally:
            self.saving.stop()  # nothing left to stop once it is done
            self.cache.partial_file(self.saving.process.pid).unlink(missing_ok=True)


def load(root: Path, runs_dir: Path | None = None) -> list[Prepared]:
    """Every run file under ``runs_dir`` (default ``ROOT/data/runs``) prepared, in path order;
    files that hold no mapping are left out (``kb check`` names them)."""
    with Loading(root, runs_dir) as loading:
        return loading.prepared()


class PreparedCache:
    """Prepared runs by path, reused while the run file (size, modification time, inode), each
    raw file it lists and the package's code are unchanged. A build after one run was added,
    edited or removed prepares only that one (tests/derive/test_derive_cache.py)."""

    MISS = object()

    def __init__(self, root: Path) -> None:
        self.root = root
        folder = root / "build" / "cache"
        self.file = folder / CACHE_NAME
        self.context = (code_fingerprint(), str(root))
        self.before: dict[str, Any] = {}
        self.entries: dict[str, Any] = {}
        self.changed = False
        try:
            with self.file.open("rb") as stream:
                saved = pickle.load(stream)
        except (OSError, pickle.PickleError, EOFError, ValueError, TypeError, AttributeError):
            saved = None
        if isinstance(saved, dict) and saved.get("context") == self.context:
            self.entries = saved.get("entries") or {}

    def _raw_files(self, prepared: Prepared | None) -> tuple[tuple[str, Any], ...]:
        if prepared is None:
            return ()
        return tuple((raw, file_stamp(self.root / raw)) for raw in prepared.raw_paths)

    def get(self, path: str) -> Any:
        self.before[path] = now = file_stamp(path)
        entry = self.entries.get(path)
        if entry is None:
            return self.MISS
        stamp, raws, prepared = entry
        if stamp != now or any(file_stamp(self.root / raw) != was for raw, was in raws):
            return self.MISS
        return prepared

    def put(self, path: str, prepared: Prepared | None) -> None:
        self.changed = True
        self.entries[path] = (self.before.get(path), self._raw_files(prepared), prepared)

    def needs_saving(self, paths: list[str]) -> bool:
        """Whether an entry was put, or one is no longer among ``paths``."""
        return self.changed or sum(p in self.entries for p in paths) != len(self.entries)

    def partial_file(self, pid: int) -> Path:
        """Where the process ``pid`` writes the cache before putting it in place."""
        return self.file.with_suffix(f".{pid}.tmp")

    def save(self, paths: list[str]) -> None:
        """The entries of ``paths`` written in place of the last cache, whole or not at all."""
        if not self.needs_saving(paths):
            return
        kept = {p: self.entries[p] for p in paths if p in self.entries}
        self.file.parent.mkdir(parents=True, exist_ok=True)
        unfinished = self.partial_file(os.getpid())
        try:
            with unfinished.open("wb") as stream:
                pickle.dump(
                    {"context": self.context, "entries": kept},
                    stream,
                    protocol=pickle.HIGHEST_PROTOCOL,
                )
            unfinished.replace(self.file)
        except OSError:
            unfinished.unlink(missing_ok=True)
