"""Answer pages (issue 21, item 1): the text of every answer as derived from the shipped data
(golden: tests/derive/golden/answers.txt, regenerate with KB_UPDATE_GOLDENS=1), the lead's
figures computed from the analysis (never typed in), and data/answers.yaml's mistakes as
one-line errors naming the line and field."""

from __future__ import annotations

import copy
import json
import re
import shutil
from pathlib import Path

import pytest
import yaml

from kbtest import assert_golden, copy_day_one, run_kb, shipped_root
from pgbench_kb.derive.answer_pages import LEAD_WORDS, build_answers, load_answers
from pgbench_kb.errors import DeriveError

GOLDEN = Path(__file__).parent / "golden" / "answers.txt"
#: The questions the project exists for (issue 21): every one has a page.
QUESTIONS = {
    "raid-level", "wal-placement", "write-cache", "commit-delay", "durability", "memory",
    "checkpoints", "versions", "os-filesystem", "clients-scale",
}  # fmt: skip


@pytest.fixture(scope="module")
def derived(shipped_derived: Path) -> Path:
    return shipped_derived


def front(path: Path) -> dict:
    text = path.read_text(encoding="utf-8")
    return json.JSONDecoder().raw_decode(text)[0]


def answers_of(derived: Path) -> list[dict]:
    pages = sorted((derived / "content" / "answers").glob("*.md"))
    return [front(p)["params"]["answer"] for p in pages if p.name != "_index.md"]


def as_text(answer: dict) -> str:
    """An answer page as a reader reads it, in plain lines."""
    lines = [f"# {answer['title']}", "", answer["lead"], ""]
    if answer.get("costs"):
        lines += [answer["costs"], ""]
    if answer.get("series"):
        lines += [answer["series"]["text"], f"({answer['series']['url']})", ""]
    lines.append("## What the sources concluded")
    for claim in answer["claims"]:
        lines.append(f"- {claim['claim']} ({claim['source']}): {claim['verdict']}")
        lines += [f"    {x}" for x in (claim["checked"], claim["reason"]) if x]
    lines.append("## Evidence")
    for machine in answer["evidence"]:
        lines.append(f"### {machine['machine']}")
        for item in machine["comparisons"]:
            tags = (" [same disks]" if item["same_disks"] else "") + (
                " [unsafe]" if item["unsafe"] else ""
            )
            context = f"[{item['context']}] " if item["context"] else ""
            lines.append(f"- {context}{item['title']}{tags}: {item['verdict']}")
            if item.get("costs"):
                lines.append(f"    per transaction, B against A: {item['costs']}")
            lines += [f"    {c}" for c in item["caveats"]]
    lines.append("## Not known")
    lines += [f"- {u}" for u in answer["unknown"]]
    lines.append("## Why")
    lines.append("".join(p.get("text") or f"[{p['cite']}]" for p in answer["why"]))
    lines += [f"[{c['n']}] {c['title']}" for c in answer["cites"]]
    lines.append("## Comparisons")
    lines += [f"- {link['title']}: {link['url']}" for link in answer["links"]]
    return "\n".join(lines) + "\n"


def test_every_answer_matches_golden(derived: Path):
    text = "\n".join(as_text(a) for a in answers_of(derived))
    assert_golden(GOLDEN, text)


def test_every_question_has_a_page_with_a_short_lead(derived: Path):
    answers = answers_of(derived)
    assert {a["slug"] for a in answers} == QUESTIONS
    for answer in answers:
        assert len(answer["lead"].split()) <= LEAD_WORDS, answer["lead"]
        assert "{" not in answer["lead"] and "}" not in answer["lead"]
        assert answer["evidence"] and answer["why"] and answer["cites"], answer["slug"]


def test_the_wal_answer_leads_with_the_same_disks_arranged_two_ways(derived: Path):
    wal = next(a for a in answers_of(derived) if a["slug"] == "wal-placement")
    first = wal["evidence"][0]["comparisons"][0]
    assert first["same_disks"]
    assert "RAID1+0" in first["title"]
    assert wal["lead"].startswith("On the same four disks")
    # The gains of a separate WAL disk are said to come with added disks, and shown so.
    later = [c for m in wal["evidence"] for c in m["comparisons"] if not c["same_disks"]]
    assert later and all(any("disk" in x for x in c["caveats"]) for c in later)


def test_evidence_of_several_workloads_names_each_and_groups_by_it(derived: Path):
    """Our clients and versions runs cover select-only and TPC-B-like on one machine: each line
    says which, and a workload's lines are together; a machine of one workload names none."""
    answers = {a["slug"]: a for a in answers_of(derived)}
    for slug in ("clients-scale", "versions"):
        ours = next(m for m in answers[slug]["evidence"] if m["machine"] == "kb-dev-epyc-2c")
        contexts = [c["context"] for c in ours["comparisons"]]
        assert set(contexts) == {"select-only", "tpcb-like"}, slug
        assert contexts == sorted(contexts), slug
    # the 2010 study's machine: its TPC-B table and its TPC-C table (not pgbench, issue 31)
    study = next(m for m in answers["versions"]["evidence"] if m["machine"].startswith("e4600"))
    contexts = [c["context"] for c in study["comparisons"]]
    assert set(contexts) == {"tpcb-like", "tpc-c (a commercial tool, not pgbench)"}
    assert contexts == sorted(contexts)
    os = next(m for m in answers["os-filesystem"]["evidence"] if m["machine"].startswith("xeon"))
    assert all(c["context"] is None for c in os["comparisons"])


def test_the_versions_answer_cites_the_release_series(derived: Path):
    """The star-join series across releases is cited in a sentence of its own, named by its
    workload and its one pgbench client, with its verdicts; its steps are not listed one by one
    as evidence but counted."""
    versions = next(a for a in answers_of(derived) if a["slug"] == "versions")
    text = versions["series"]["text"]
    assert "{" not in text and "}" not in text
    assert "the star-join script star-1.sql, run by one pgbench 18devel client" in text
    assert "20 releases, 8.0.26 to 18devel" in text and "1 to 256 clients" in text
    assert "of 228 steps from one release to the next" in text
    assert "48 of the steps cross bench sessions" in text
    assert "not comparable across sessions" in text
    assert versions["series"]["url"] == "comparisons/release-series/"
    machines = [m["machine"] for m in versions["evidence"]]
    assert not any(m.startswith("tvondra-archaeology") for m in machines), machines
    assert any(u.startswith("228 more comparisons pair releases") for u in versions["unknown"])


def test_home_page_leads_with_the_answers(derived: Path):
    home = json.loads((derived / "data" / "home.json").read_text(encoding="utf-8"))
    assert [a["url"] for a in home["answers"]] == [
        f"answers/{a['slug']}/" for a in load_answers(shipped_root())["answers"]
    ]


@pytest.fixture(scope="module")
def known(shipped_knowledge: dict) -> dict:
    return shipped_knowledge


def test_the_lead_s_figures_come_from_the_analysis(known: dict):
    """Planted: the RAID claim's checks moved to other figures; the lead follows them."""
    before = {a["slug"]: a["lead"] for a in build_answers(known, {"families": {}}, shipped_root())}
    assert "50.6–73.4%" in before["raid-level"]
    planted = copy.deepcopy(known)
    claim = next(c for c in planted["claims"] if c["id"] == "raid10-beats-raid5")
    for check, value in zip(claim["checks"], (31.0, 44.4, 52.25), strict=False):
        check["change_pct"] = value
    after = {a["slug"]: a["lead"] for a in build_answers(planted, {"families": {}}, shipped_root())}
    assert "31.0–52.2%" in after["raid-level"] or "31.0–52.3%" in after["raid-level"]
    assert "50.6" not in after["raid-level"]
    assert after["wal-placement"] == before["wal-placement"]


def test_a_lead_whose_claim_changed_verdict_stops_the_build(known: dict):
    """A lead is written for what its claims say: a verdict that flips is an error naming the
    line to rewrite, never a sentence the figures no longer bear."""
    planted = copy.deepcopy(known)
    claim = next(c for c in planted["claims"] if c["id"] == "write-cache-makes-flushes-cheap")
    claim["verdict"] = "not supported by its own figures"
    with pytest.raises(DeriveError) as error:
        build_answers(planted, {"families": {}}, shipped_root())
    message = str(error.value)
    assert "data/answers.yaml" in message and "expects" in message
    assert "write-cache-makes-flushes-cheap" in message and "rewrite the lead" in message
    line = int(re.search(r"answers\.yaml:(\d+)", message).group(1))
    text = (shipped_root() / "data" / "answers.yaml").read_text(encoding="utf-8").splitlines()
    assert text[line - 1].strip() == "write-cache-makes-flushes-cheap: holds"


@pytest.fixture(scope="module")
def transcribed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The published history alone, copied once for the module (each test copies it)."""
    return copy_day_one(tmp_path_factory.mktemp("transcribed") / "kb", transcribed_only=True)


def _tree_with(tmp_path: Path, transcribed: Path, edit) -> Path:
    root = shutil.copytree(transcribed, tmp_path / "kb")
    path = root / "data" / "answers.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    edit(data)
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return root


@pytest.mark.parametrize(
    ("edit", "words"),
    [
        (lambda d: d["answers"][0].update(lead="{nothing.range} and more"), "{nothing"),
        (lambda d: d["answers"][0].update(lead="{raid10-beats-raid5.colour}"), "placeholder"),
        (lambda d: d["answers"][0].update(why="Because [nowhere]."), "[nowhere]"),
        (lambda d: d["answers"][0].update(families=["raid"]), "unknown comparison family"),
        (lambda d: d["answers"][0].update(lead="word " * 46), "at most 45"),
        (lambda d: d["answers"][0].update(claims=["no-such-claim"]), "no-such-claim"),
        (lambda d: d["answers"][1].update(slug="raid-level"), "unique"),
        (lambda d: d["answers"][0].pop("why"), "why: missing (required)"),
        (
            lambda d: d["answers"][0].update(sets={"x": {"family": "raid-level", "os": "x"}}),
            "sets.x.os: unknown key",
        ),
        (lambda d: d["answers"][0].update(sets={"x": {"machine": "a"}}), "x.family: missing"),
        (
            lambda d: d["answers"][0].update(series={"machine": "nowhere", "text": "x"}),
            "no hardware note for machine 'nowhere'",
        ),
        (
            lambda d: d["answers"][0].update(sets={"x": {"family": "raid"}}),
            "set 'x' has no known family",
        ),
    ],
    ids=[
        "set",
        "placeholder",
        "cite",
        "family",
        "long",
        "claim",
        "slug",
        "why",
        "set-key",
        "set-family",
        "set-unknown-family",
        "series-machine",
    ],
)
def test_mistakes_in_answers_yaml_are_one_line_errors(
    tmp_path: Path, transcribed: Path, edit, words: str
):
    root = _tree_with(tmp_path, transcribed, edit)
    done = run_kb("derive", "--root", str(root))
    assert done.returncode != 0
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert lines[0].startswith("error: data/answers.yaml:") and words in lines[0], lines[0]
    assert not (root / "build" / "site" / "content" / "answers").exists()


def test_a_set_within_the_noise_is_bounded_by_its_intervals():
    """``{set.bound}``: where the 95% intervals of comparisons within the noise, inside one
    session, leave any difference — from the lowest low to the highest high; comparisons with
    a verdict, across sessions or without an interval do not bound it."""
    from pgbench_kb.derive.answer_leads import SetFigures as _Set

    one = {"shared": True}
    items = [
        {"verdict": "within_noise", "test": {"ci95_ratio": [0.97, 1.02]}, "sessions": one},
        {"verdict": "within_noise", "test": {"ci95_ratio": [0.99, 1.05]}, "sessions": one},
        {"verdict": "higher", "test": {"ci95_ratio": [1.2, 1.4]}, "sessions": one},
        {"verdict": "within_noise", "test": {"ci95_ratio": None}, "sessions": one},
        # across sessions: a wider interval, not the bound of one session's noise
        {"verdict": "within_noise", "test": {"ci95_ratio": [0.6, 1.6]}, "sessions": {}},
    ]
    assert _Set(items, {}).bound == "between −3.0% and +5.0%"
    assert _Set(items[2:], {}).bound == "not bounded"


def test_a_sets_ranges_and_counts_take_only_their_own_verdict():
    """``{set.higher_range}`` and ``{set.lower_range}``: the signed changes of the comparisons
    with that verdict, lowest to highest; one figure when they round alike; ``none`` without.
    A set's ``workload`` keeps the comparisons that held that workload equal."""
    from pgbench_kb.derive.answer_leads import SetFigures as _Set
    from pgbench_kb.derive.answer_pages import _selected

    survives = {"family": {"significant": True}}
    items = [
        {"verdict": "lower", "change_pct": -57.46, **survives},
        {"verdict": "lower", "change_pct": -55.01, **survives},
        {"verdict": "within_noise", "change_pct": 1.2},
        {"verdict": "higher", "change_pct": 3.04, **survives},
        # #31: higher before the family-wise adjustment, not after: not counted as higher
        {"verdict": "higher", "change_pct": 9.9, "family": {"significant": False}},
    ]
    made = _Set(items, {})
    assert (made.lower, made.higher) == ("2", "1")
    assert made.verdicts == (
        "1 of 5 higher, 2 of 5 lower, 1 of 5 within the noise and 1 of 5 not significant once "
        "adjusted for the other tests"
    )
    assert made.lower_range == "−57.5% to −55.0%"
    tpcb = {"held_equal": {"benchmark.workload.name": "tpcb-like"}}
    picked = _selected([*items, {**items[0], **tpcb}], {"workload": "tpcb-like"})
    assert picked == [{**items[0], **tpcb}]
    assert made.higher_range == "+3.0%"
    assert _Set(items[2:], {}).lower_range == "none"


def test_a_pooled_estimate_is_one_test_and_reads_with_its_interval():
    """#31 item 5: the comparisons of one pooled estimate count once, as the estimate, and a
    range of pooled estimates reads each with its 95% interval."""
    from pgbench_kb.derive.answer_leads import SetFigures as _Set

    pooled = {
        "p1": {
            "id": "p1", "verdict": "higher", "change_pct": 154.5, "ci95_pct": [140.6, 169.3],
            "family": {"significant": True},
        }
    }  # fmt: skip
    evidence = {"verdict": "higher", "family": {"significant": True, "pooled": "p1"}}
    items = [{**evidence, "change_pct": 158.0}, {**evidence, "change_pct": 158.2}]
    made = _Set(items, {}, pooled=pooled)
    assert (made.n, made.higher) == ("1", "1")
    assert made.higher_range == "+154.5% [+140.6%, +169.3%]"


def test_pairs_of_sessions_run_differently_are_left_out_of_answers_and_counted(known: dict):
    """Regression: the durability campaign's 90-second runs paired with the checkpoints
    campaign's 120-second runs (both profiles share a configuration), and the answers counted
    those verdict-less pairs as "4 of 8 not comparable". An incidental pair answers nothing:
    sets and evidence leave it out, the page says how many were left out."""
    planted = copy.deepcopy(known)
    durability = [
        c
        for c in planted["comparisons"]
        if c.get("factor") == "postgres.settings.fsync" and c.get("metric") == "tps"
    ]
    judged = [
        c for c in durability
        if c.get("verdict") == "higher" and str(c.get("machine")).startswith("kb-dev-epyc-2c")
    ]  # fmt: skip
    assert judged, "the shipped data has judged fsync comparisons"
    before = {a["slug"]: a for a in build_answers(planted, {"families": {}}, shipped_root())}
    for comparison in judged:
        comparison["verdict"] = "not_comparable"
        comparison["sessions"] = {"basis": "none", "how_run_differs": ["benchmark.duration_s"]}
    after = {a["slug"]: a for a in build_answers(planted, {"families": {}}, shipped_root())}
    # Pairs compared inside two sessions read as their pooled estimate (#31).
    pooled = {p["id"]: p for p in planted["pooled"]}
    estimates = {
        pooled[c["family"]["pooled"]]["change_pct"] for c in judged if c["family"].get("pooled")
    }
    figure = f"{min(estimates or {c['change_pct'] for c in judged}):+.1f}%"
    assert figure in before["durability"]["lead"]
    assert figure not in after["durability"]["lead"]
    said = [u for u in after["durability"]["unknown"] if "run differently" in u]
    count = int(said[0].split()[0])
    assert count == int(
        next(u for u in before["durability"]["unknown"] if "run differently" in u).split()[0]
    ) + len(judged)
