"""``kb derive``: everything Hugo lays out that is computed from run files.

Reads ``data/runs/**.yaml``, the hand-written ``content/`` and what ``pgbench_kb.analyze``
found, and writes under ``build/site/`` (git-ignored, mounted into Hugo by config.toml):

- ``content/runs/<id>.md`` — one page per run (JSON front matter only; the layout places it);
- ``content/groups/<id>.md`` — one page per configuration (a group of repeats);
- ``content/comparisons/<family>.md`` — one page per family of comparisons;
- ``content/{results,sources,downloads,changes}/_index.md`` — the explorer and other lists;
- ``content/compare/_index.md``, ``static/compare/data/`` — compare any N (``explorer``);
- ``content/matrix/<machine>.md`` — every configuration of one machine, side by side
  (``matrix``);
- ``content/answers/<question>.md`` — one page per question of ``data/answers.yaml``;
- ``data/*.json`` — what hand-written pages show (a machine's runs, backlinks, key findings);
- ``specs/*.vl.json`` — the Vega-Lite spec of each chart, which ``kb charts`` draws (see
  ``charts.py``; the bars of a comparison and a run's -P line are SVG placed in their page);
- ``static/downloads/`` — the data; ``static/feed.xml`` — the Atom feed.

Every sentence and figure a reader sees is composed in this stage; templates only place them.
This module orders the work; each kind of page has its module (``run_pages``, ``group_pages``,
``comparison_pages``, ``answer_pages``, ``list_pages``, ``source_pages``, ``downloads``,
``feed``), and ``writer`` writes the files. Every generated file says so. The folder is
replaced as a whole, so a run file that was removed leaves no page behind. Two derivations of
the same data write the same bytes.
"""

from __future__ import annotations

import contextlib
import gc
import time
from functools import partial
from pathlib import Path

from pgbench_kb import numbers as fmt
from pgbench_kb.derive import (
    gitlog,
    handwritten,
    knowledge,
    prepared,
    run_view,
)
from pgbench_kb.derive.answer_pages import build_answers, write_answers
from pgbench_kb.derive.downloads import comparisons_text, runs_json, write_downloads
from pgbench_kb.derive.explorer import write_explorer
from pgbench_kb.derive.feed import feed_text
from pgbench_kb.derive.group_pages import place_knowledge, write_group_list
from pgbench_kb.derive.list_pages import write_lists, write_machines
from pgbench_kb.derive.matrix import write_matrices
from pgbench_kb.derive.run_pages import (
    RunJson,
    distinct_names,
    page_inputs,
    page_name,
    run_page,
    run_url,
    titles_apart,
    write_run_lists,
)
from pgbench_kb.derive.writer import Site, prepare_out
from pgbench_kb.errors import DeriveError

#: How a figure is written on the pages (tests compare the pages against it).
format_figure = fmt.figure


def derive_site(*, root: Path, out: Path | None = None, runs_dir: Path | None = None) -> str:
    """Derive everything under ``out`` (default ``ROOT/build/site``); returns the summary line.

    Hundreds of thousands of small acyclic objects are made on 10,000 runs: the cycle
    collector would only walk them again and again, so it is off until the derivation ends."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _derive(root=root, out=out, runs_dir=runs_dir)
    except OSError as exc:  # a file in the place of a folder, a full disk, a read-only tree
        raise DeriveError(
            f"{exc.strerror or exc}",
            path=str(exc.filename or out or root),
            hint="the build folder must be writable and hold folders where kb derive writes "
            "them; remove what is in the way, or run `make clean`",
        ) from exc
    finally:
        if enabled:
            gc.enable()


def _derive(*, root: Path, out: Path | None, runs_dir: Path | None) -> str:
    default = root / "build" / "site"
    out = out or default
    started = time.perf_counter()
    handwritten.check_pages(root)
    with contextlib.ExitStack() as stack:
        loading = stack.enter_context(prepared.Loading(root, runs_dir))
        # While workers make the run pages' texts (the second pass), the analysis.
        light = loading.light()
        # Copies: titles and links are added to these rows, never to what the cache keeps.
        rows = [dict(run.row) | {"raw_kept": bool(run.raw_paths)} for run in light]
        names = [page_name(row) for row in rows]
        distinct_names(rows)
        known = knowledge.from_records([run.record for run in light], root)
        history = gitlog.history(root)
        prepare_out(out, owned=out.resolve() == default.resolve())
        site = stack.enter_context(Site(root, out))
        # Made from the analysis alone: by a process of its own while this one goes on.
        site.early("static/downloads/comparisons.json", partial(comparisons_text, known))
        analysed = time.perf_counter()
        apart = titles_apart(light)
        for row, words in zip(rows, apart, strict=True):
            row["title"] = run_view.run_title(row, words)
            row["apart"] = ", ".join(words)
            row["url"] = run_url(str(row["id"]))
        facets = {str(r.row["id"]): r.facets for r in light}
        placed = place_knowledge(site, known, rows, facets)
        rows_by_date = sorted(rows, key=lambda r: (r["recorded_at"], str(r["id"])), reverse=True)
        write_run_lists(site, rows_by_date)
        write_group_list(site, placed["groups"])
        write_machines(site, rows_by_date, placed, known, write_matrices(site, known, placed))
        write_explorer(site, rows_by_date, placed, known, facets)
        answers = build_answers(known, placed, root)
        write_answers(site, answers)
        results = [r for r in rows_by_date if not r.get("smoke")]  # smoke runs: no result
        site.static("feed.xml", feed_text(results, answers, history))
        write_lists(site, rows_by_date, placed, known, history, answers)
        write_downloads(site, rows_by_date)
        # Written while the workers end the second pass (none of it needs the pages' texts);
        # the rest, once they are done, beside the run pages.
        site.write_until(loading.ready)
        runs = loading.prepared()
        for run, row, name in zip(runs, rows, names, strict=True):
            links = placed["run_links"].get(str(row["id"]), {"comparisons": []})
            links = links | {"last_change": history["files"].get(run.path)}
            made = RunJson(row, links)
            site.defer(
                f"content/runs/{name}",
                partial(run_page, run, row, links, made),
                inputs=partial(page_inputs, run, made),
            )
        # Made beside the run pages.
        site.defer("static/downloads/runs.json", partial(runs_json, runs), large=True)
        site.write()
    done = time.perf_counter()
    return (
        f"derived {fmt.count(len(rows), 'run page')}, {fmt.count(len(placed['groups']), 'group')}"
        f", {fmt.count(len(placed['families']), 'comparison page')} into {out} in "
        f"{done - started:.1f} s (read and analyse {analysed - started:.1f} s: "
        f"{fmt.count(prepared.LAST_LOAD['prepared'], 'run file')} prepared, "
        f"{prepared.LAST_LOAD['reused']:,} from the cache; {site.chart_specs:,} chart specs for "
        f"`kb charts`, {sum(run.progress is not None for run in runs):,} progress lines)"
    )
