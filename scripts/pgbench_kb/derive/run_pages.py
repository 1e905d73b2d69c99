"""Run pages (``content/runs/<id>.md``) and the lists of runs."""

from __future__ import annotations

import hashlib
from collections import defaultdict
from typing import Any

from pgbench_kb import jsontext
from pgbench_kb import numbers as fmt
from pgbench_kb.derive import (
    prepared,
)
from pgbench_kb.derive.list_pages import table_row
from pgbench_kb.derive.setup_text import distinguishing_features
from pgbench_kb.derive.writer import GENERATED_NOTE, SAFE_ID, Site, hugo_date
from pgbench_kb.errors import DeriveError
from pgbench_kb.runs.check.content import RESERVED_NAMES
from pgbench_kb.runs.stamps import code_fingerprint

#: The package's code: a run page made by other code is made again (``page_inputs``).
CODE = code_fingerprint()


def page_name(row: dict[str, Any]) -> str:
    """The page's file name; refuses ids that are not plain slugs (``../x`` would escape)."""
    run_id = str(row["id"])
    if not SAFE_ID.match(run_id) or run_id.lower() in RESERVED_NAMES:
        raise DeriveError(
            f"id {run_id!r} is not a plain slug"
            + (" (Hugo gives that name a meaning)" if SAFE_ID.match(run_id) else ""),
            path=row["file"],
            field="id",
            hint="run `kb check` first: it names every problem in the run files",
        )
    return f"{run_id}.md"


def distinct_names(rows: list[dict[str, Any]]) -> None:
    """Refuse two run ids that differ only in case: Hugo lowercases addresses, so one page
    would replace the other (issue #22)."""
    seen: dict[str, dict[str, Any]] = {}
    for row in rows:
        folded = str(row["id"]).lower()
        if folded in seen:
            raise DeriveError(
                f"id {row['id']!r} differs only in case from that of {seen[folded]['file']}",
                path=row["file"],
                field="id",
                hint="run `kb check` first: it names every problem in the run files",
            )
        seen[folded] = row


def run_url(run_id: str) -> str:
    return f"runs/{run_id.lower()}/"


class RunJson:
    """A run's row and links (with the generated note) as JSON text, made once for both the
    page (``run_page``) and the digest of its inputs (``page_inputs``)."""

    __slots__ = ("_texts", "links", "row")

    def __init__(self, row: dict[str, Any], links: dict[str, Any]) -> None:
        self.row = row
        self.links = links
        self._texts: tuple[str, str] | None = None

    def texts(self) -> tuple[str, str]:
        """``(row, tail)``: the row's JSON, and the links' with the note last."""
        if self._texts is None:
            tail = {**self.links, "generated": GENERATED_NOTE}
            self._texts = (jsontext.strict(self.row), jsontext.strict(tail))
        return self._texts


def run_page(
    run: prepared.Prepared,
    row: dict[str, Any],
    links: dict[str, Any],
    made: RunJson | None = None,
) -> str:
    """A run page's text: what the run alone gives (prepared once, as JSON text) around its
    title, row and links (``made``: their JSON, if it was made already). The bytes are those
    ``page_text`` writes for the same front matter (``{"title", "date", "params": {"kind",
    "run", …, **links, "generated"}}``)."""
    head: dict[str, Any] = {"title": row["title"]}
    date = hugo_date(row["recorded_at"])
    if date:
        head["date"] = date
    progress = "null"
    if run.progress is not None:
        description = f"Throughput of {row['title']}{run.progress.description_tail}"
        # The line is placed in the page itself: one file and one request fewer per run.
        progress = (
            f'{{"svg": {jsontext.strict(run.progress.svg)}, '
            f'"description": {jsontext.strict(description)}, '
            f'"rows": {run.progress.rows_json}, '
            f'"checkpoints": {jsontext.strict(run.progress.marked)}}}'
        )
    row_json, tail_json = (made or RunJson(row, links)).texts()
    return (
        f"{jsontext.strict(head)[:-1]}, "
        f'"params": {{"kind": "run", "run": {row_json}'
        f", {run.before_progress}, "
        f'"progress": {progress}, {run.after_progress}, '
        f"{tail_json[1:]}}}\n"
    )


def page_inputs(run: prepared.Prepared, made: RunJson) -> str:
    """A digest of everything ``run_page`` makes a run's page from: the prepared texts (their
    digest), the row with the title, the links, and the code that puts them together."""
    row_json, tail_json = made.texts()
    return hashlib.sha1(f"{CODE}\0{run.page_digest}\0{row_json}\0{tail_json}".encode()).hexdigest()


#: Runs on one page of the list of all runs.
RUNS_PER_LIST_PAGE = 200


def write_run_lists(site: Site, rows: list[dict[str, Any]]) -> None:
    """The list of every run, newest first, ``RUNS_PER_LIST_PAGE`` to a page: ``/runs/``,
    then ``/runs/page/2/``…. Made here, not by Hugo's paginator over the run pages, so that
    laying out the lists never needs the run pages themselves (``kb render`` lays those out
    apart, and only the ones that changed)."""
    pages = [rows[i : i + RUNS_PER_LIST_PAGE] for i in range(0, len(rows), RUNS_PER_LIST_PAGE)]
    pages = pages or [[]]

    def url(number: int) -> str | None:
        if not 1 <= number <= len(pages):
            return None
        return "runs/" if number == 1 else f"runs/page/{number}/"

    for number, chunk in enumerate(pages, start=1):
        params = {
            "kind": "runs",
            "count": fmt.count(len(rows), "run"),
            "rows": [table_row(row) for row in chunk],
            "pager": {
                "number": number,
                "total": len(pages),
                "prev": url(number - 1),
                "next": url(number + 1),
            },
        }
        if number == 1:
            site.page(
                "runs/_index.md",
                {"title": "All runs", "params": params},
                "Every run in the knowledge base, newest first. The [results explorer]"
                "(/results/) shows the same runs by configuration, with repeats together.\n",
            )
        else:
            site.page(
                f"runs/page/{number}.md",
                {
                    "title": "All runs",
                    "url": f"/{url(number)}",
                    "layout": "list-page",
                    "params": {**params, "not_searched": True, "generated": GENERATED_NOTE},
                },
            )


def titles_apart(runs: list[Any]) -> list[list[str]]:
    """For each run, what sets it apart from the other runs of its machine."""
    by_machine: dict[Any, list[int]] = defaultdict(list)
    for index, run in enumerate(runs):
        by_machine[run.row["machine"]].append(index)
    words: list[list[str]] = [[] for _ in runs]
    for indexes in by_machine.values():
        for index, shown in zip(
            indexes, distinguishing_features([runs[i].features for i in indexes]), strict=True
        ):
            words[index] = shown
    return words
