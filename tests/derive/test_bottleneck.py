"""Why a result happened (issue #36, items 3-5): the readers of ``results.wait_events``,
``results.os_series`` and ``storage.flush``, the bottleneck sentence and its thresholds, and
what the run, configuration, comparison and hardware pages are given (goldens).

The fixture runs (fixtures/why/, made by its make_fixtures.py) are four shipped runs of the
checkpoints campaign with realistic series added: the 30 s arm's backends wait more on WAL sync.
"""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path

import pytest
import yaml

from kbtest import assert_golden, shipped_root
from pgbench_kb.derive import bottleneck, hardware, os_chart
from pgbench_kb.derive.site import derive_site

WHY = Path(__file__).parent / "fixtures" / "why"
WHY_RUNS = sorted(WHY.glob("*.yaml"))
GOLDEN = Path(__file__).parent / "golden"


def read(path: Path) -> dict:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def with_waits(events: dict[str, int], samples: int | None = None, **rest) -> dict:
    """A run holding only ``results.wait_events`` (and whatever ``rest`` adds)."""
    listed = []
    for name, count in events.items():
        kind, _, event = name.partition(":")
        listed.append({"type": kind or None, "event": event or None, "count": count})
    waits = {
        "hz": 20,
        "instants": 1000,
        "backend_samples": samples or sum(events.values()),
        "events": listed,
        "unavailable": None,
    }
    return {"results": {"wait_events": waits, **rest}}


def cpu_series(busy: float, iowait: float = 0.0, seconds: int = 10) -> list[dict]:
    return [
        {
            "host": "server",
            "interval_s": 1,
            "t_s": list(range(1, seconds + 1)),
            "cpu_pct": {
                "user": [busy * 0.75] * seconds,
                "system": [busy * 0.25] * seconds,
                "iowait": [iowait] * seconds,
                "steal": [0.0] * seconds,
            },
            "devices": [],
        }
    ]


def sentence_of(run: dict) -> str | None:
    return bottleneck.sentence(bottleneck.combined([bottleneck.run_summary(run)]))


def test_an_event_is_named_as_postgres_names_it_and_null_is_active_on_cpu():
    assert bottleneck.event_name("IO", "WALSync") == "IO:WALSync"
    assert bottleneck.event_name(None, None) == "active (CPU)"
    assert [
        bottleneck.kind_of(n)
        for n in (
            "IO:WALSync",
            "LWLock:WALWriteLock",
            "IO:DataFileRead",
            "LWLock:BufferContent",
            "Lock:transactionid",
            "Client:ClientRead",
            "IPC:SyncRep",
            "active (CPU)",
        )
    ] == ["flush", "flush", "reads", "locks", "locks", "client", "other", "cpu"]


def test_wait_profile_shares_are_of_all_backend_samples_largest_first():
    run = with_waits({":": 300, "IO:WALSync": 600, "LWLock:WALWrite": 100}, samples=1000)
    profile = bottleneck.wait_profile(run)
    assert [(r["event"], r["share"], r["count"]) for r in profile["rows"]] == [
        ("IO:WALSync", "60%", "600"),
        ("active (CPU)", "30%", "300"),
        ("LWLock:WALWrite", "10%", "100"),
    ]
    assert profile["how"] == "From 1,000 backend samples, at 1,000 instants, 20 times a second."


def test_wait_profile_says_why_there_is_none():
    older = bottleneck.wait_profile({"results": {"tps": 1.0}})
    assert older["missing"].startswith("Not sampled: this run file records no wait events")
    run = with_waits({})
    run["results"]["wait_events"]["unavailable"] = "PostgreSQL 9.5 has no wait events"
    assert bottleneck.wait_profile(run) == {
        "missing": "Not recorded: PostgreSQL 9.5 has no wait events."
    }
    # Malformed parts are passed over, never a failure of the page.
    broken = {"results": {"wait_events": {"events": ["x", {"count": "many"}, None]}}}
    assert "missing" in bottleneck.wait_profile(broken)


def test_flush_line_names_the_tool_and_method_or_the_emulation():
    run = read(WHY_RUNS[0])
    assert bottleneck.flush_line(bottleneck.flush_facts(run)) == (
        "WAL flush 0.251 ms here (pg_test_fsync, fdatasync)"
    )
    emulated = copy.deepcopy(run)
    emulated["storage"]["flush"]["emulated"] = {
        "method": "strace-inject",
        "added_us": 1750,
        "target_ms": 2.0,
    }
    assert bottleneck.flush_line(bottleneck.flush_facts(emulated)) == (
        "WAL flush emulated: 2 ms by strace-inject, 1.75 ms added to each; the device itself: "
        "0.251 ms (pg_test_fsync, fdatasync)"
    )
    emulated["storage"]["flush"]["emulated"]["measured_ms"] = 2.33
    assert bottleneck.flush_line(bottleneck.flush_facts(emulated)) == (
        "WAL flush emulated: 2 ms by strace-inject, 1.75 ms added to each; 2.33 ms measured "
        "under it; the device itself: 0.251 ms (pg_test_fsync, fdatasync)"
    )
    traced = copy.deepcopy(run)
    traced["storage"]["flush"]["emulated"] = {
        "method": "strace-inject",
        "added_us": 0,
        "target_ms": None,
        "traced_only": True,
        "measured_ms": 0.183,
    }
    assert bottleneck.flush_line(bottleneck.flush_facts(traced)) == (
        "WAL flush traced by strace-inject with no delay added; 0.183 ms measured under it; "
        "the device itself: 0.251 ms (pg_test_fsync, fdatasync)"
    )
    eight_k = copy.deepcopy(run)
    eight_k["storage"]["flush"]["wal"]["sync_method_ms"] = None
    assert bottleneck.flush_line(bottleneck.flush_facts(eight_k)) == (
        "WAL flush 0.262 ms here (an 8 kB write and fdatasync)"
    )
    assert bottleneck.flush_facts({"storage": {"data": {}}}) is None
    assert bottleneck.flush_line(None) is None


def test_commit_flush_waits_that_stand_out_are_said_as_evidence():
    run = with_waits(
        {":": 400, "IO:WALSync": 350, "LWLock:WALWrite": 60, "Client:ClientRead": 190},
        os_series=cpu_series(80, 6),
    )
    assert sentence_of(run) == (
        "Evidence of waiting on commit flushes: during this run, 41% of backend samples waited "
        "on WAL writes and syncs (IO:WALSync 35%, LWLock:WALWrite 6%); the CPUs of the "
        "server's host were 80% busy (user and system) and 6% waiting on I/O."
    )


@pytest.mark.parametrize(
    ("events", "start"),
    [
        ({":": 500, "IO:DataFileRead": 450, "IO:WALSync": 50}, "Evidence of waiting on reads"),
        (
            {":": 500, "Lock:transactionid": 200, "LWLock:BufferContent": 150},
            "Evidence of waiting on locks",
        ),
        ({":": 300, "Client:ClientRead": 700}, "Evidence of waiting on the client"),
        ({":": 600, "IPC:SyncRep": 400}, "Evidence of waiting on other events"),
    ],
)
def test_the_kind_of_wait_that_stands_out_names_the_sentence(events, start):
    assert sentence_of(with_waits(events)).startswith(start)


def test_cpu_bound_needs_busy_cpus_and_few_waits_on_the_server():
    busy = with_waits(
        {":": 850, "IO:WALSync": 100, "Client:ClientRead": 50}, os_series=cpu_series(95)
    )
    assert sentence_of(busy).startswith(
        "Evidence of being CPU-bound: during this run, the CPUs of the server's host were 95% "
        "busy (user and system), and the backends waited on the server in only 10%"
    )
    # Just below either threshold: nothing stands out.
    lukewarm = with_waits({":": 850, "IO:WALSync": 150}, os_series=cpu_series(89))
    assert sentence_of(lukewarm).startswith("No one kind of wait stands out")
    waiting = with_waits({":": 750, "IO:WALSync": 250}, os_series=cpu_series(95))
    assert sentence_of(waiting).startswith("No one kind of wait stands out")


def test_too_few_samples_or_nothing_recorded_gives_no_sentence():
    assert sentence_of(with_waits({":": 50, "IO:WALSync": 40})) is None
    assert sentence_of({"results": {"tps": 10.0}}) is None
    assert bottleneck.run_summary({"results": {"tps": 10.0}}) is None
    unavailable = {
        "results": {
            "wait_events": {"unavailable": "PostgreSQL 9.5 has no wait events"},
            "os_series": cpu_series(97),
        }
    }
    assert sentence_of(unavailable) == (
        "Evidence of being CPU-bound: during this run, the CPUs of the server's host were 97% "
        "busy (user and system) (wait events: PostgreSQL 9.5 has no wait events)."
    )


def test_a_configuration_adds_up_its_runs_samples():
    one = bottleneck.run_summary(with_waits({":": 100, "IO:WALSync": 100}))
    two = bottleneck.run_summary(with_waits({":": 700, "IO:WALSync": 100}))
    both = bottleneck.combined([one, two, None])
    assert both["samples"] == 1000
    assert both["waits"] == {"active (CPU)": 800, "IO:WALSync": 200}
    assert both["runs"] == 2
    assert bottleneck.sentence(both).startswith(
        "No one kind of wait stands out: during 2 of its 3 runs (the others recorded none of "
        "it), backends were active on CPU in 80% of their samples"
    )
    assert bottleneck.combined([None, None]) is None


def test_a_comparison_names_the_kinds_either_side_has_enough_of():
    a = bottleneck.combined(
        [
            bottleneck.run_summary(
                with_waits({":": 500, "IO:WALSync": 410, "Lock:tuple": 40, "IPC:x": 50})
            )
        ]
    )
    b = bottleneck.combined(
        [
            bottleneck.run_summary(
                with_waits({":": 920, "IO:WALSync": 30, "Lock:tuple": 20, "IPC:x": 30})
            )
        ]
    )
    assert bottleneck.wait_change(a, b) == [
        "Active (CPU) 50% → 92% of samples",
        "WAL sync waits 41% → 3% of samples",
        "Other waits 5% → 3% of samples",
    ]
    assert bottleneck.wait_change(a, None) is None


def test_flush_of_a_machine_is_counted_once_per_bench_session():
    def row(machine, day, ms):
        flush = {
            "ms": ms,
            "how": "sync_method",
            "tool": "pg_test_fsync",
            "method": "fdatasync",
            "device": "/dev/vda1",
            "measured_at": day,
        }
        return {"machine": machine, "evidence": {"flush": flush}}

    # Two runs of one session share its fingerprint; two sessions of one day are two.
    rows = [
        row("m", "2026-11-27T01:42:10Z", 0.251),
        row("m", "2026-11-27T01:42:10Z", 0.251),
        row("m", "2026-11-28T06:46:02Z", 0.27),
        row("m", "2026-11-28T09:54:19Z", 0.151),
        {"machine": "old", "recorded_at": "2006-06-01"},
    ]
    assert hardware.flush_lines(rows) == {
        "m": [
            "WAL flush 0.151 to 0.27 ms (pg_test_fsync, fdatasync) on /dev/vda1: 3 bench "
            "sessions, 2026-11-27 to 2026-11-28"
        ]
    }


def test_os_chart_draws_each_second_and_thins_a_long_series():
    run = read(WHY_RUNS[-1])
    chart = os_chart.os_chart(run)
    assert len(chart["rows"]) == len(run["results"]["os_series"][0]["t_s"]) // 2
    assert chart["keys"][:5] == ["t", "user", "system", "iowait", "steal"]
    assert chart["svg"].count("<polyline") == 6  # user, system, iowait, steal; writes; wait
    long = copy.deepcopy(run)
    series = long["results"]["os_series"][0]
    series["t_s"] = list(range(1, 3601))
    series["cpu_pct"] = {k: [50.0] * 3600 for k in ("user", "system", "iowait", "steal")}
    series["devices"] = []
    assert len(os_chart.os_chart(long)["rows"]) == 60
    assert os_chart.os_chart(long)["rows"][0]["t"] == "60"  # seconds 1 to 60
    svg, _ = os_chart.os_svg(long, title="t")
    first = svg.split('<polyline points="', 1)[1].split('"', 1)[0]
    assert len(first.split()) == os_chart.LINE_POINTS
    assert os_chart.os_chart({"results": {"os_series": [{"t_s": [1]}]}}) is None
    assert os_chart.os_chart({"results": {}}) is None


def why_root(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    runs = root / "data" / "runs"
    runs.mkdir(parents=True)
    for fixture in WHY_RUNS:
        shutil.copy(fixture, runs / fixture.name)
        for item in read(fixture)["raw"]:
            target = root / item["path"]
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(shipped_root() / item["path"], target)
    return root


def test_pages_are_given_what_the_runs_recorded(tmp_path):
    """Golden: what kb derive gives each page of the fixture runs (the run page's section
    without its SVG, which has its own golden; each configuration's sentence; the
    comparison's change of waits; the machine's flush)."""
    root = why_root(tmp_path)
    derive_site(root=root)
    site = root / "build" / "site"
    shown: dict = {"runs": {}, "groups": {}}
    for page in sorted((site / "content" / "runs").glob("2026*.md")):
        why = json.loads(page.read_text(encoding="utf-8"))["params"]["why"]
        chart = why.pop("chart")
        why["chart"] = {
            "description": chart["description"],
            "columns": chart["columns"],
            "first_row": chart["rows"][0],
            "rows": len(chart["rows"]),
        }
        shown["runs"][page.stem] = why
    for page in sorted((site / "content" / "groups").glob("kb-*.md")):
        shown["groups"][page.stem] = json.loads(page.read_text(encoding="utf-8"))["params"].get(
            "bottleneck"
        )
    comparisons = (site / "content" / "comparisons" / "checkpoints.md").read_text("utf-8")
    shown["comparison"] = [
        item.get("waits") for item in json.loads(comparisons)["params"]["comparisons"]
    ]
    machines = json.loads((site / "data" / "machines.json").read_text(encoding="utf-8"))
    shown["hardware"] = {m: v.get("flush") for m, v in machines["machines"].items()}
    assert all(shown["comparison"]) and all(shown["groups"].values())
    assert_golden(GOLDEN / "why.json", json.dumps(shown, ensure_ascii=False, indent=1) + "\n")
    svg = os_chart.os_chart(read(WHY_RUNS[-1]))["svg"]
    assert_golden(GOLDEN / "why-os-chart.svg", svg)


def test_pgbench_s_host_is_drawn_and_said_when_it_ran_elsewhere():
    run = read(WHY_RUNS[-1])
    server = run["results"]["os_series"][0]
    client = copy.deepcopy(server) | {"host": "client", "devices": []}
    client["cpu_pct"] = {
        k: [96.0 if k == "user" else 0.0] * len(server["t_s"])
        for k in ("user", "system", "iowait", "steal")
    }
    run["results"]["os_series"].append(client)
    run["client"]["same_as_server"] = False
    chart = os_chart.os_chart(run, "client")
    assert chart["svg"].count("<polyline") == 3  # user, system, iowait: no steal, no device
    assert chart["description"].startswith("pgbench's host every second over 120 points")
    assert os_chart.os_chart(run)["description"].startswith("The server's host")
    assert "pgbench's host 96%." in sentence_of(run)
    assert "(pgbench's too)" not in sentence_of(run)
    assert os_chart.os_chart(read(WHY_RUNS[-1]), "client") is None
