"""The transcribed sources, exactly (issue 11): the rules that catch a run claiming more than its
source states, and the facts of the project's own transcribed runs as the corrected audit gives
them. Each test names the kind of mistake it guards."""

from __future__ import annotations

import functools
import re
from pathlib import Path

import frontmatter
import pytest

from checkkit import good_run, report_of, write
from kbtest import shipped_root
from pgbench_kb.parse import parse_text
from pgbench_kb.runs.check import rules_raw_output, run_rules
from pgbench_kb.runs.runfile import load_yaml_file, read_run

REPO = Path(__file__).resolve().parents[2]
TODAY = "20261122"


def transcribed() -> dict:
    return good_run("transcribed-figures")


def errors(run: dict) -> list[tuple[str, str]]:
    return [(i.field, i.message) for i in run_rules(run, today=TODAY) if i.severity == "error"]


# rules ---------------------------------------------------------------------------------------


def test_a_transcribed_run_may_not_claim_default_settings_its_source_does_not_state() -> None:
    """Kind: the talk runs claimed default settings (`settings: {}`) the talk never states."""
    run = transcribed()
    run["postgres"]["settings"] = {}
    run["postgres"]["settings_profile"] = None
    assert [f for f, _ in errors(run)] == ["postgres.settings"]
    run["postgres"]["settings"] = None
    assert errors(run) == []
    run["postgres"]["settings"] = {}
    run["postgres"]["settings_profile"] = "defaults"  # the source says "defaults"
    assert errors(run) == []


def test_raw_output_that_names_its_pgbench_version_must_be_followed() -> None:
    """Kind: pgbench_version null although the output states it."""
    run = good_run()
    raw = REPO / "tests/check/root/data/raw/2026/11"
    text = next(raw.glob("*.txt")).read_text(encoding="utf-8")
    parsed = parse_text(text, source="raw")
    run["benchmark"]["pgbench_version"] = None
    assert [(i.field, i.message) for i in rules_raw_output(run, parsed)] == [
        ("benchmark.pgbench_version", "null but the raw output says '18.6'")
    ]


def test_a_transcribed_run_says_whether_its_title_is_the_documents_own() -> None:
    """Kind: source titles paraphrased or made up, indistinguishable from real ones."""
    run = transcribed()
    del run["provenance"]["source"]["title_is_descriptive"]
    assert [f for f, _ in errors(run)] == ["provenance.source.title_is_descriptive"]
    run["provenance"]["source"]["title_is_descriptive"] = True
    assert errors(run) == []


def test_uncertain_values_are_fields_that_have_a_value_and_a_reason(project: Path) -> None:
    """Kind: a layout the source contradicts itself about, filed as a plain fact."""
    run = transcribed()
    run["provenance"]["uncertain"] = ["storage.data.array", "storage.data.arrey"]
    run["provenance"]["notes"] = None
    run["storage"]["data"]["array"] = None
    path = write(project, run)
    lines = report_of(project, path).splitlines()
    assert sorted(line.split(": ")[1] for line in lines[:-1]) == [
        "provenance.notes",
        "provenance.uncertain.1",
        "storage.data.array",
    ]


def test_a_contributed_run_carries_its_provenance() -> None:
    """Regression (issue 8): a run with no PostgreSQL version, no contributor, no storage and
    no settings passed make check."""
    run = good_run()
    run["provenance"]["contributor"] = None
    run["postgres"]["version"] = None
    run["postgres"]["settings"] = None
    run["storage"] = None
    assert [f for f, _ in errors(run)] == [
        "provenance.contributor",
        "postgres.version",
        "postgres.settings",
        "storage.data",
    ]
    # a transcribed run carries its source instead: no version or settings it does not state
    run = transcribed()
    run["postgres"]["version"] = None
    run["postgres"]["settings"] = None
    run["storage"] = None
    assert errors(run) == []


# the project's transcribed runs ---------------------------------------------------------------


@functools.cache
def _transcribed_runs() -> tuple[dict, ...]:
    """The shipped transcribed run files, read once (measured runs never carry a source)."""
    paths = sorted((shipped_root() / "data" / "runs").rglob("*.yaml"))
    return tuple(
        load_yaml_file(path).data
        for path in paths
        if "\norigin: transcribed\n" in path.read_text(encoding="utf-8")
    )


def runs_of(title: str) -> list[dict]:
    return [
        run
        for run in _transcribed_runs()
        if (run["provenance"].get("source") or {}).get("title") == title
    ]


TALK = "Using pgbench well (a conference talk, PostgreSQL 17 development cycle)"
OS_STUDY = "PostgreSQL benchmark on FreeBSD, CentOS, Ubuntu Debian and openSUSE"


def note(slug: str) -> frontmatter.Post:
    return frontmatter.load(shipped_root() / "content" / "hardware" / f"{slug}.md")


def test_the_talk_runs_state_no_settings_and_pgbench_17devel() -> None:
    copy_runs = [r for r in runs_of(TALK) if r["raw"]]
    assert len(copy_runs) == 2
    for run in copy_runs:
        assert run["postgres"]["settings"] is None
        assert run["benchmark"]["pgbench_version"] == "17devel"
        assert run["provenance"]["source"]["title_is_descriptive"] is True


#: A summary line of pgbench's output and the run file's field it fills, read here with plain
#: patterns, apart from the parser: a parser or mapping that read the wrong line is caught.
PRINTED = (
    ("tps", re.compile(r"^tps = ([\d.]+)(?: \((?:excluding|without)\b.*)?$", re.M)),
    ("latency_avg_ms", re.compile(r"^latency average = ([\d.]+) ms$", re.M)),
    ("latency_stddev_ms", re.compile(r"^latency stddev = ([\d.]+) ms$", re.M)),
    ("initial_connection_time_ms", re.compile(r"^initial connection time = ([\d.]+) ms$", re.M)),
    ("transactions_processed",
     re.compile(r"^number of transactions (?:actually )?processed: (\d+)", re.M)),
)  # fmt: skip


def _printed(text: str) -> dict[str, float]:
    found = {}
    for field, pattern in PRINTED:
        values = pattern.findall(text)
        if len(values) == 1:  # a run's one summary (a log of several runs is not read here)
            found[field] = float(values[0])
    return found


def test_every_imported_figure_is_the_one_its_output_prints() -> None:
    """Kind: the talk's COPY runs read 0.1994 tps beside 5,015 ms, as if tps and latency had
    been swapped (issue 31). They were not: each COPY took about 5 s. Every run file that
    keeps its output, measured or transcribed, has the figures that output prints."""
    root = shipped_root()
    checked = []
    for path in sorted((root / "data" / "runs").rglob("*.yaml")):
        run = read_run(path).data
        outputs = [r for r in run.get("raw") or [] if r["kind"] == "output"]
        if len(outputs) != 1:  # (a median's kept output is the median run's: the same test)
            continue
        printed = _printed((root / outputs[0]["path"]).read_text(encoding="utf-8"))
        for field, value in printed.items():
            assert run["results"][field] == value, (path.name, field)
        if "tps" in printed:
            checked.append(run["origin"])
    assert checked.count("measured") > 250 and checked.count("transcribed") >= 14, checked
    assert {r["id"] for r in runs_of(TALK) if r["raw"]} <= {
        p.stem for p in (root / "data" / "runs").rglob("*talk-17devel*.yaml")
    }


def test_the_talks_copy_runs_are_under_one_tps_because_each_copy_took_seconds() -> None:
    """The figures are right and only look odd: 1 client ÷ about 5 s per COPY is about 0.2 tps
    (the run pages say so)."""
    copy_runs = [r for r in runs_of(TALK) if r["raw"]]
    for run in copy_runs:
        res, clients = run["results"], run["benchmark"]["clients"]
        assert res["tps"] < 1 < res["latency_avg_ms"] / 1000
        assert clients * 1000 / res["latency_avg_ms"] == pytest.approx(res["tps"], rel=0.001)
        assert res["latency_total_ms"] / res["transactions_processed"] == pytest.approx(
            res["latency_avg_ms"], rel=0.001
        )


def test_the_talks_example_summary_is_kept_as_figures() -> None:
    """Kind: a pgbench result the source printed, missing from the data."""
    [run] = [r for r in runs_of(TALK) if not r["raw"]]
    bench, res = run["benchmark"], run["results"]
    assert (bench["scale"], bench["clients"], bench["threads"], bench["duration_s"]) == (
        1,
        1,
        1,
        4,
    )
    assert bench["query_mode"] == "simple" and bench["workload"]["name"] is None
    assert (res["tps"], res["transactions_processed"]) == (39.459091, 158)
    assert (res["latency_avg_ms"], res["latency_stddev_ms"]) == (25.341, 3.607)
    assert res["initial_connection_time_ms"] == 4.897
    assert run["postgres"]["version"] is None and run["postgres"]["settings"] is None


def test_the_2017_follow_up_carries_only_what_its_table_states() -> None:
    """Kind: benchmark fields the source states only for another table (the sweep's -j 8,
    -T 1800, -v and warm-up); the ZFS layout the source contradicts itself about."""
    runs = runs_of(OS_STUDY)
    assert len(runs) == 3
    for run in runs:
        bench = run["benchmark"]
        assert [bench[k] for k in ("command", "threads", "duration_s", "vacuum", "warmup")] == [
            None
        ] * 5
        assert bench["clients"] == 100
        # Issue 19: the post's own title, and a repetition it never states marked uncertain.
        assert run["provenance"]["source"]["title_is_descriptive"] is False
        assert run["provenance"]["source"]["author"] == "Martin Kováčik"
        assert run["provenance"]["uncertain"][:2] == ["results.of_runs", "results.statistic"]
        assert "does not say how many runs" in " ".join(run["provenance"]["notes"].split())
    by_fs = {r["storage"]["data"]["filesystem"]: r for r in runs}
    assert by_fs["zfs"]["provenance"]["uncertain"][2:] == ["storage.data.array"]
    assert by_fs["ufs"]["provenance"]["uncertain"][2:] == []
    assert by_fs["ufs"]["storage"]["data"]["array"]["level"] == "single"
    assert by_fs["ext4"]["storage"]["data"]["array"]["level"] == "single"
    assert by_fs["ext4"]["server"]["os"]["kernel"] == "3.10.0-693.2.2.el7.x86_64"


def test_the_2006_page_is_named_by_its_title_and_not_attributed() -> None:
    """Kind: a paraphrased title, an owner the page does not name, a method it does not state."""
    runs = runs_of("PgBench")
    assert len(runs) == 11
    for run in runs:
        assert run["provenance"]["source"]["title_is_descriptive"] is False
        # Issue 19: no restore the page does not state, the kernel in full, no interface.
        assert run["benchmark"]["reset"] is None
        assert run["server"]["os"]["kernel"] == "2.4.27-2-686-smp"
        assert run["storage"]["data"]["array"]["interface"] is None
        assert (run["storage"]["wal"]["array"] or {}).get("interface") is None
        assert "backup\n    before every test" not in run["provenance"]["notes"]
        assert "backup before every test" not in run["provenance"]["notes"]
        assert "restored between runs" in run["provenance"]["notes"]
    post = note("hp-proliant-dl380-g4")
    assert "users' group" not in post.content
    assert [s["title"] for s in post["sources"]] == ["PgBench"]


@pytest.mark.parametrize(
    ("slug", "claim"),
    [
        ("e4600-2x160gb-sata", "biggest single change"),
        ("xeon-e5-1650v3-256gb", "same\nPostgreSQL 10.1 build"),
        ("xeon-e5-1650v3-256gb", "same PostgreSQL 10.1 build"),
        ("hp-proliant-dl380-g4", "for a users' group"),
    ],
)
def test_hardware_notes_make_no_claim_their_source_contradicts(slug: str, claim: str) -> None:
    """Kind: hardware-note prose that says more than, or the opposite of, its source."""
    assert claim not in note(slug).content


def test_invocation_fields_agree_with_the_command_the_source_gives() -> None:
    """Kind: a transcribed run carrying invocation fields (-j 8, -T 1800, -v) its source gives
    only for another table: with the source's command recorded, a declared field its command
    does not state is an error, and so is one that contradicts it."""
    run = transcribed()
    assert run["benchmark"]["command"] == "pgbench -c 20 -t 2000"
    assert errors(run) == []
    run["benchmark"]["threads"] = 8
    run["benchmark"]["vacuum"] = "all"
    run["provenance"]["declared"] += ["benchmark.threads", "benchmark.vacuum"]
    assert errors(run) == [
        (
            "benchmark.threads",
            "8 but benchmark.command has no -j: a transcribed run records the invocation its "
            "source gives for these figures (make it null, or complete the command as the "
            "source gives it)",
        ),
        (
            "benchmark.vacuum",
            "'all' but benchmark.command has no -v or -n: a transcribed run records the "
            "invocation its source gives for these figures (make it null, or complete the "
            "command as the source gives it)",
        ),
    ]
    run["benchmark"]["command"] = "pgbench -v -c 20 -j 4 -t 2000"
    assert errors(run) == [("benchmark.threads", "8 but benchmark.command says 4")]
    run["benchmark"]["threads"] = None
    assert errors(run) == [("benchmark.threads", "null but benchmark.command says 4 (record it)")]


def test_a_measured_run_whose_fields_contradict_its_command_is_refused() -> None:
    run = good_run()
    run["benchmark"]["command"] = "pgbench --client=4 --jobs=2 -T 6 -P 1 pgbench_kb"
    run["benchmark"]["progress_interval_s"] = 1
    assert [f for f, _ in errors(run)] == []
    run["benchmark"]["command"] = "pgbench --client=8 --jobs=2 -T 6 pgbench_kb"
    assert errors(run) == [("benchmark.clients", "4 but benchmark.command says 8")]


# Blog figures printed as text (issue 32, item 3): each post's figures as the post prints them,
# parsed here and compared with what the run files hold.

STRIPING = "Striping Postgres data volumes - a free lunch?"
#: The post's summary table as printed (its Markdown source at commit 0fc5fcec7b70 of
#: kmoppel/kmoppel.github.io): setup, key-read TPS and latency (ms), batch-read TPS and latency
#: (ms), full-scan MB/s (the cells as printed, their padding left out).
STRIPING_TABLE = """\
| gp3 16 stripes | 28871 | 1.053 | 510 | 27.737 | 2025 |
| io2 40k provisioned IOPS | 24338 | 0.607 | 573 | 13.479 | 704 |
| local NVMe | 48059 | 0.267 | 866 | 9.26 | 1987 |
| single gp3 in-memory | 147669 | 0.012 | 1508 | 4.281 | 6789 |
"""
PGBOUNCER = "pgbouncer: Proving the point"
#: What the post prints for its run straight to PostgreSQL: the command line, then the output.
PGBOUNCER_PRINTED = """\
hs@VM:test$ pgbench -t 1000 -c 20 -S p1 -C -f select.sql
starting vacuum\u2026end.
transaction type: Custom query
scaling factor: 1
query mode: simple
number of clients: 20
number of threads: 1
number of transactions per client: 1000
number of transactions actually processed: 20000/20000
tps = 67.540663 (including connections establishing)
tps = 15423.090062 (excluding connections establishing)
"""


def _notes(run: dict) -> str:
    return " ".join(run["provenance"]["notes"].split())


def test_the_striping_posts_table_is_transcribed_cell_by_cell() -> None:
    """Kind: a figure mistyped or moved to another row; key-read and batch-read figures
    swapped; a latency column the post never defines filed as pgbench's average latency; a
    setting, version or run length the post does not give."""
    runs = runs_of(STRIPING)
    assert len(runs) == 8
    by_locator = {r["provenance"]["source"]["locator"]: r for r in runs}
    rows = [
        [c.strip() for c in line.strip(" |").split("|")] for line in STRIPING_TABLE.splitlines()
    ]
    for n, (setup, key_tps, key_ms, batch_tps, batch_ms, scan) in enumerate(rows, 1):
        key = by_locator.pop(f"summary table, row {n}: {setup} (key read columns)")
        batch = by_locator.pop(f"summary table, row {n}: {setup} (batch read columns)")
        assert (key["results"]["tps"], batch["results"]["tps"]) == (int(key_tps), int(batch_tps))
        assert key["benchmark"]["workload"]["scripts"][0]["builtin"] == "select-only"
        assert batch["benchmark"]["workload"]["scripts"][0]["builtin"] is None
        assert (key["benchmark"]["clients"], batch["benchmark"]["clients"]) == (16, 8)
        for run, latency in ((key, key_ms), (batch, batch_ms)):
            assert run["results"]["latency_avg_ms"] is None
            assert f"({latency} ms for this row)" in _notes(run)
            assert f"({scan} MB/s)" in _notes(run)
            assert run["raw"] == [] and run["origin"] == "transcribed"
            assert (run["results"]["statistic"], run["results"]["of_runs"]) == ("single", 1)
            assert run["postgres"]["version"] is None and run["postgres"]["settings"] is None
            bench = run["benchmark"]
            assert [bench[k] for k in ("command", "duration_s", "query_mode", "threads")] == [
                None
            ] * 4
            source = run["provenance"]["source"]
            assert (source["author"], source["year"], source["title_is_descriptive"]) == (
                "Kaarel Moppel",
                2025,
                False,
            )
    assert by_locator == {}


def test_the_striping_post_tells_three_machines_apart_and_the_io2_instance_is_uncertain() -> None:
    """Kind: a run put on a machine its source does not name, as a plain fact; a scale the
    source gives for another machine."""
    runs = runs_of(STRIPING)
    row = {
        int(r["provenance"]["source"]["locator"].split("row ")[1].split(":")[0]): r for r in runs
    }
    assert [row[n]["machine"] for n in (1, 2, 3, 4)] == [
        "aws-m6idn-xlarge",
        "aws-m6idn-xlarge",
        "kmoppel-workstation-990-evo-plus",
        "aws-x2iedn-2xlarge",
    ]
    assert [row[n]["benchmark"]["scale"] for n in (1, 2, 3, 4)] == [8000, 8000, 16000, None]
    assert row[2]["provenance"]["uncertain"] == ["machine", "server.ram_bytes", "benchmark.scale"]
    assert "does not name the instance of its io2 run" in _notes(row[2])
    assert row[1]["provenance"]["uncertain"] == ["results.of_runs", "results.statistic"]
    assert [row[n]["storage"]["data"]["array"]["disk_model"] for n in (1, 2, 4)] == [
        "gp3",
        "io2",
        "gp3",
    ]
    assert row[1]["storage"]["data"]["array"]["disks"] == 16
    assert row[1]["storage"]["data"]["array"].get("stripe_size_bytes") is None
    for slug in ("aws-m6idn-xlarge", "aws-x2iedn-2xlarge", "kmoppel-workstation-990-evo-plus"):
        assert [s["title"] for s in note(slug)["sources"]] == [STRIPING]
        assert note(slug)["described_from"] == "transcribed"
    # the post gives the drive, never the workstation's processor or memory
    workstation = note("kmoppel-workstation-990-evo-plus")
    assert workstation["cpu"] is None and workstation["ram"] is None


def test_the_pgbouncer_posts_run_keeps_the_output_it_prints() -> None:
    """Kind: a printed output retyped with a changed figure; the command line's -C lost."""
    [run] = runs_of(PGBOUNCER)
    prompt, *output = PGBOUNCER_PRINTED.splitlines()
    assert run["benchmark"]["command"] == prompt.split("$ ", 1)[1]
    [raw] = run["raw"]
    assert (shipped_root() / raw["path"]).read_text(encoding="utf-8").splitlines() == output
    printed = {
        m[2]: float(m[1])
        for m in re.finditer(r"tps = ([\d.]+) \((\w+) connections", PGBOUNCER_PRINTED)
    }
    assert run["results"]["tps"] == printed["excluding"]
    assert run["results"]["tps_including_connections"] == printed["including"]
    assert run["benchmark"]["connect_per_transaction"] is True
    assert (run["postgres"]["version"], run["postgres"]["settings"]) == ("9.2.4", None)
    assert run["benchmark"]["workload"]["scripts"][0]["text"] == "SELECT 1;"
    assert run["provenance"]["uncertain"] == ["client.same_as_server"]
    assert run["machine"] == "cybertec-virtualbox-1-core"
