"""The Sources page (issue 32, item 3): every transcribed post listed with its runs, machines
and checked claims; a source none of whose figures a run can hold is listed with its claims
alone; a claim naming its source with a description in parentheses is shown with it."""

from __future__ import annotations

import json

import pytest

from kbtest import copy_day_one
from pgbench_kb.derive.site import derive_site

STRIPING = "Striping Postgres data volumes - a free lunch?"
PGBOUNCER = "pgbouncer: Proving the point"
SYNC_COMMIT = "Synchronous Commit (an OpenSCG blog post, 2014)"
TALK = "Using pgbench well (a conference talk, PostgreSQL 17 development cycle)"


@pytest.fixture(scope="module")
def sources(tmp_path_factory) -> list[dict]:
    root = copy_day_one(tmp_path_factory.mktemp("sources") / "kb", transcribed_only=True)
    derive_site(root=root)
    page = root / "build" / "site" / "content" / "sources" / "_index.md"
    front = json.JSONDecoder().raw_decode(page.read_text(encoding="utf-8"))[0]
    return front["params"]["sources"]


def by_title(sources: list[dict]) -> dict[str, dict]:
    return {s["title"]: s for s in sources}


def test_each_source_is_listed_once_in_title_order(sources):
    titles = [s["title"] for s in sources]
    assert titles == sorted(titles) and len(set(titles)) == len(titles)
    assert {STRIPING, PGBOUNCER, SYNC_COMMIT, TALK, "PgBench"} <= set(titles)


def test_the_striping_post_lists_its_runs_machines_and_claims(sources):
    striping = by_title(sources)[STRIPING]
    assert len(striping["runs"]) == 8
    assert striping["taken"].startswith("8 runs transcribed")
    assert striping["machines"] == [
        "aws-m6idn-xlarge",
        "aws-x2iedn-2xlarge",
        "kmoppel-workstation-990-evo-plus",
    ]
    assert [c["verdict"] for c in striping["claims"]] == ["holds", "holds", "cannot be checked"]
    assert all(r["locator"].startswith("summary table, row ") for r in striping["runs"])


def test_a_source_without_runs_is_listed_with_its_claims_alone(sources):
    sync = by_title(sources)[SYNC_COMMIT]
    assert sync["runs"] == [] and sync["machines"] == []
    assert sync["taken"].startswith("no run taken from it")
    [claim] = sync["claims"]
    assert claim["verdict"] == "cannot be checked" and "percentages" in claim["reason"]
    # a source with runs is never listed again as one without
    assert [s["title"] for s in sources if s["title"].startswith(PGBOUNCER)] == [PGBOUNCER]


def test_a_claim_whose_source_is_the_runs_full_title_is_shown_with_them(sources):
    """Regression: claims were matched to runs by the part of their source before " (", so the
    talk's claim (its title holds parentheses) was listed with no source."""
    talk = by_title(sources)[TALK]
    assert talk["runs"] and talk["claims"]
    assert {c["verdict"] for c in talk["claims"]} == {"holds"}


def test_an_imported_result_tree_lists_the_claims_made_of_its_figures(shipped_derived):
    """The claims checked against an imported set's figures (data/claims.yaml, section J) are
    listed under that set on the Sources page, with their verdicts; they were only in
    `kb compare` and its download."""
    page = shipped_derived / "content" / "sources" / "_index.md"
    front = json.JSONDecoder().raw_decode(page.read_text(encoding="utf-8"))[0]
    imported = {s["title"]: s for s in front["params"]["imported"]}
    assert {"kernel-bench", "tvondra/postgres-archaeology"} <= set(imported)
    for title in ("kernel-bench", "tvondra/postgres-archaeology"):
        claims = imported[title]["claims"]
        assert claims and all(c["verdict"] == "holds" for c in claims), (title, claims)
    # and never again as a source with no run
    assert not any(s["title"] == "kernel-bench" for s in front["params"]["sources"])


def test_search_and_the_explorer_facet_by_source_and_author(shipped_derived):
    """Issue 32, item 4: every run and configuration carries its source and author as facets
    (a publication or result tree and its author; this project's bench and its contributor),
    and the explorer offers both; an author the source does not name is left out."""
    from pgbench_kb.derive.run_view import HARNESS_SOURCE, source_facets

    results = shipped_derived / "content" / "results" / "_index.md"
    front = json.JSONDecoder().raw_decode(results.read_text(encoding="utf-8"))[0]
    assert {"Source", "Author"} <= set(front["params"]["facets"])
    rows = front["params"]["rows"]
    sources = {r["facets"].get("Source") for r in rows}
    authors = {r["facets"].get("Author") for r in rows}
    assert {"kernel-bench", "PgBench", HARNESS_SOURCE} <= sources
    assert {"Tomas Vondra", "Kaarel Moppel", "pgbench-kb maintainers"} <= authors
    wiki = {"provenance": {"source": {"title": "PgBench", "author": None}}}
    assert source_facets(wiki) == {"Source": "PgBench", "Author": None}
