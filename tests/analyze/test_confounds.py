"""Confounds named in words, and findings ranked for tuners (#19 items 5 and 8)."""

from __future__ import annotations

from typing import Any

from planted import records

from pgbench_kb.analyze import knowledge_from_runs

SESSION = {"repeat.session": "20261201T100000Z-aaaa01"}
BASE = {
    "benchmark.workload.name": "tpcb-like",
    "benchmark.scale": 100,
    "benchmark.clients": 8,
    "storage.data.array.level": "raid10",
    "storage.data.array.disks": 4,
    "storage.wal.placement": "with-data",
}
OWN_WAL = {"storage.wal.placement": "own-array", "storage.wal.array.disks": 2}


def group(name: str, center: float, **changes: Any) -> list:
    factors = {k: v for k, v in {**BASE, **changes}.items() if v is not None}
    values = [center * s for s in (1.0, 1.01, 0.99, 1.005, 0.995)]
    return records(name, values, factors, incidental=SESSION)


def only(knowledge: dict[str, Any], factor_part: str) -> dict[str, Any]:
    (c,) = [
        c for c in knowledge["comparisons"] if c["metric"] == "tps" and factor_part in c["factor"]
    ]
    return c


def kinds(c: dict[str, Any]) -> list[str]:
    return [x["kind"] for x in c["confounds"]]


def test_wal_on_its_own_array_that_adds_disks_says_so() -> None:
    known = knowledge_from_runs(group("one", 1000) + group("two", 1200, **OWN_WAL))
    c = only(known, "storage.wal.placement")
    assert kinds(c) == ["disks_added"] and c["same_disks"] is False
    assert "4 disks on one side and 6 on the other" in c["confounds"][0]["text"]
    (finding,) = known["findings"]
    assert "Confound: the machine has 4 disks on one side and 6" in finding["text"]


def test_the_same_disks_arranged_two_ways_leads_the_wal_question() -> None:
    split = {**OWN_WAL, "storage.data.array.level": "raid1", "storage.data.array.disks": 2}
    raid5 = {**OWN_WAL, "storage.data.array.level": "raid5"}
    known = knowledge_from_runs(
        group("raid10", 1000) + group("split", 600, **split) + group("raid5-wal", 1200, **raid5)
    )
    wal = [f for f in known["findings"] if f["question"] == "storage.wal.placement"]
    (key,) = [f for f in wal if f["key"]]
    assert "the same 4 disks, arranged two ways" in key["text"]
    same = next(c for c in known["comparisons"] if c.get("same_disks"))
    assert "compound_storage" not in kinds(same)


def test_compound_storage_change_is_named() -> None:
    known = knowledge_from_runs(
        group("slow", 1000, **{"storage.data.array.rpm": 10000})
        + group(
            "fast", 1500, **{"storage.data.array.level": "raid5", "storage.data.array.rpm": 15000}
        )
    )
    c = only(known, "storage.data.array.level")
    assert kinds(c) == ["compound_storage"]
    assert "RAID level and rpm at once" in c["confounds"][0]["text"]


def test_tpcb_like_with_fewer_branches_than_clients_is_named() -> None:
    known = knowledge_from_runs(
        group("c8", 1000, **{"benchmark.scale": 5})
        + group("c4", 700, **{"benchmark.scale": 5, "benchmark.clients": 4})
    )
    c = only(known, "benchmark.clients")
    assert kinds(c) == ["branch_contention"]
    assert "scale 5 with 8 clients" in c["confounds"][0]["text"]
    fits = knowledge_from_runs(group("c8", 1000) + group("c4", 700, **{"benchmark.clients": 4}))
    assert only(fits, "benchmark.clients")["confounds"] == []


def test_unsafe_setting_is_marked_and_never_a_key_finding() -> None:
    known = knowledge_from_runs(
        group("safe", 1000)
        + group("nofsync", 3000, **{"postgres.settings.fsync": "off"})
        + group("delay", 1100, **{"postgres.settings.commit_delay": 1000})
    )
    unsafe = next(f for f in known["findings"] if "fsync" in f["text"])
    assert unsafe["unsafe"] is True and unsafe["key"] is False
    assert "fsync = off can lose or corrupt data in a crash" in unsafe["text"]
    delay = next(f for f in known["findings"] if "commit_delay" in f["text"])
    assert delay["key"] is True and delay["topic"] == "durability"


def test_findings_put_storage_before_pgbench_parameters() -> None:
    known = knowledge_from_runs(
        group("base", 1000)
        + group("raid5", 700, **{"storage.data.array.level": "raid5"})
        + group("c16", 1400, **{"benchmark.clients": 16})
    )
    topics = [f["topic"] for f in known["findings"]]
    assert topics == ["storage", "benchmark"]
    assert all(f["key"] for f in known["findings"])


def test_a_commit_delay_that_could_never_apply_is_named() -> None:
    """Found in the campaign: commit_delay 1000 with commit_siblings 4 at 4 clients never
    delayed a commit (at most 3 other transactions), so its comparison measured noise."""
    delay = {"postgres.settings.commit_delay": 1000, "benchmark.clients": 4}
    inert = knowledge_from_runs(
        group("base", 1000, **{"benchmark.clients": 4})
        + group("delay", 1010, **delay, **{"postgres.settings.commit_siblings": 4})
    )
    c = only(inert, "commit_delay")
    assert kinds(c) == ["inert_commit_delay"]
    assert c["confounds"][0]["text"] == (
        "commit_delay inert in B: commit_siblings 4 ≥ clients 4, so the delay never applied (a "
        "commit waits only when at least commit_siblings other transactions are active, and 4 "
        "clients leave at most 3 others)"
    )
    can = knowledge_from_runs(
        group("base", 1000, **{"benchmark.clients": 4})
        + group("delay", 1010, **delay, **{"postgres.settings.commit_siblings": 2})
    )
    assert only(can, "commit_delay")["confounds"] == []
    # Not recorded (a source that does not state it): nothing is assumed.
    unstated = knowledge_from_runs(
        group("base", 1000, **{"benchmark.clients": 4}) + group("delay", 1010, **delay)
    )
    assert only(unstated, "commit_delay")["confounds"] == []


def test_commit_siblings_that_only_switches_the_delay_off_is_named_and_told_nowhere() -> None:
    """#31 item 4, the bogus tip: a key finding read "commit_siblings 2 → 4: tps +134% higher"
    with no confound, yet at 4 clients commit_siblings 4 only stops the 1 ms commit_delay from
    firing (at most 3 other transactions are ever active). The comparison names the inert
    side, and no finding tells it as a commit_siblings effect."""
    delay = {"postgres.settings.commit_delay": 1000, "benchmark.clients": 4}
    known = knowledge_from_runs(
        group("s2", 500, **delay, **{"postgres.settings.commit_siblings": 2})
        + group("s4", 1170, **delay, **{"postgres.settings.commit_siblings": 4})
    )
    c = only(known, "commit_siblings")
    assert c["verdict"] == "higher"
    assert kinds(c) == ["inert_commit_delay"]
    assert c["confounds"][0]["text"].startswith(
        "commit_delay inert in B: commit_siblings 4 ≥ clients 4"
    )
    assert not [f for f in known["findings"] if c["id"] in f["comparisons"]]


def test_more_clients_that_wake_an_inert_delay_say_so() -> None:
    """Either side: 4 → 8 clients with commit_siblings 4 turns the delay on at 8 clients."""
    setting = {"postgres.settings.commit_delay": 1000, "postgres.settings.commit_siblings": 4}
    known = knowledge_from_runs(
        group("c4", 1000, **setting, **{"benchmark.clients": 4})
        + group("c8", 1400, **setting, **{"benchmark.clients": 8})
    )
    c = only(known, "benchmark.clients")
    assert [x["text"][:27] for x in c["confounds"]] == ["commit_delay inert in A: co"]
