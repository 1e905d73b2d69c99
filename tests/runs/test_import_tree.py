"""``kb import TREE --mapping MAPPING.yaml`` through the real CLI, on a small result tree laid
out like a published one (tests/runs/tree: two sessions, repeats, a custom script, a README
that is not an output): one run per output, repeats grouped, sessions told apart, raw kept or
referenced by address and sha256, figures equal to the outputs re-read; a bad mapping is a
located error and nothing is written."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pgbench_kb.analyze.load import bench_session
from pgbench_kb.runs import tryout
from pgbench_kb.runs.runfile import load_yaml_file

KB = str(Path(sys.executable).parent / "kb")
TREE = Path(__file__).resolve().parent / "tree"
REVISION = "0123456789abcdef0123456789abcdef01234567"
PATTERN = (
    r"^(?P<session>(?P<started>\d{8}-\d{6})-tpcb)/results/(?P<clients>\d+)/(?P<repeat>\d+)/"
    r"(?P<mode>simple|prepared)\.log$"
)
MAPPING = f"""\
set: fixture-tree
source:
  title: someone/results
  kind: measurement
  author: Some One
  year: 2026
  url: https://github.com/someone/results
  revision: {REVISION}
  terms: KEEP_TERMS
keep_raw: KEEP
session: directory
files:
  pattern: '{PATTERN}'
  repeats: 2
run:
  machine: box
  client:
    same_as_server: true
  benchmark:
    command: pgbench -c {{clients}} -M {{mode}}
  postgres:
    settings: {{}}
"""


def mapping_text(*, keep: bool = True, **replace: str) -> str:
    text = MAPPING.replace("KEEP_TERMS", "the author allows copies" if keep else "none stated")
    text = text.replace("KEEP", "true" if keep else "false")
    for old, new in replace.items():
        assert old in text, old
        text = text.replace(old, new)
    return text


@pytest.fixture
def root(tmp_path: Path) -> Path:
    notes = tmp_path / "root" / "content" / "hardware"
    notes.mkdir(parents=True)
    (notes / "box.md").write_text(
        "---\nschema_version: 1\ntitle: Box\ndescription: A box.\nroles: [server]\n---\nA box.\n",
        encoding="utf-8",
    )
    return tmp_path / "root"


def kb(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [KB, *args], capture_output=True, text=True, cwd=root, timeout=300, check=False
    )


def write_mapping(root: Path, text: str) -> Path:
    path = root / "data" / "imports" / "fixture-tree" / "mapping.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def runs(root: Path) -> dict[str, dict]:
    """Each run file written, by the output it came from (provenance.source.locator)."""
    found = {}
    for path in sorted((root / "data" / "runs").rglob("*.yaml")):
        data = load_yaml_file(path).data
        found[data["provenance"]["source"]["locator"]] = data
    return found


def test_a_tree_becomes_one_run_per_output_with_its_figures(root: Path) -> None:
    mapping = write_mapping(root, mapping_text())
    done = kb(root, "import", str(TREE), "--mapping", str(mapping))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == (
        "imported 4 runs in 3 repeat groups and 2 sessions; 1 files did not match files.pattern"
    )
    imported = runs(root)
    assert sorted(imported) == sorted(p.relative_to(TREE).as_posix() for p in TREE.rglob("*.log"))
    for rel, run in imported.items():
        # The kept raw copy is the output's exact bytes, and every figure is what it says.
        (kept,) = run["raw"]
        assert (root / kept["path"]).read_bytes() == (TREE / rel).read_bytes()
        parsed = json.loads(kb(root, "parse", str(root / kept["path"])).stdout)
        assert run["results"]["tps"] == parsed["tps"]
        assert run["results"]["transactions_processed"] == parsed["transactions_processed"]
        assert run["results"]["latency_avg_ms"] == parsed["latency_avg_ms"]
        assert run["benchmark"]["clients"] == parsed["clients"]
        assert run["benchmark"]["command"] == (
            f"pgbench -c {parsed['clients']} -M {parsed['query_mode']}"
        )
        source = run["provenance"]["source"]
        assert source["url"] == f"https://github.com/someone/results/blob/{REVISION}/{rel}"
        assert source["revision"] == REVISION
        assert source["terms"] == "the author allows copies"
        assert source.get("sha256") is None
        assert run["provenance"]["recorded_at"] == "2026-11"
    first = "20261127-014210-tpcb/results/4/{}/simple.log"
    one, two = imported[first.format(1)], imported[first.format(2)]
    other = imported["20261127-020000-tpcb/results/4/1/simple.log"]
    # Repeats as the author ran them: same group, their own index.
    assert one["repeat"]["group"] == two["repeat"]["group"]
    assert (one["repeat"]["index"], two["repeat"]["index"], one["repeat"]["of"]) == (1, 2, 2)
    # The same configuration in another directory is another session, which the analysis reads.
    assert other["repeat"]["group"] != one["repeat"]["group"]
    assert bench_session(one["repeat"]).startswith("20261127T014210-")
    assert bench_session(other["repeat"]).startswith("20261127T020000-")
    # A custom script is named as its "transaction type:" line gives it.
    custom = imported["20261127-020000-tpcb/results/1/1/simple.log"]
    assert custom["benchmark"]["workload"]["name"] == "aset.sql"
    # Its page says where it comes from, not that someone ran it by hand.
    assert "imported from a result tree its author published (someone/results)" in (
        tryout.label(one) or ""
    )
    assert "run by hand" not in (tryout.label(one) or "")
    check = kb(root, "check")
    assert check.returncode == 0, check.stdout
    assert " 0 error(s)" in check.stdout
    # Importing again is refused, and writes nothing more.
    before = sorted(p for p in root.rglob("*") if p.is_file())
    again = kb(root, "import", str(TREE), "--mapping", str(mapping))
    assert again.returncode != 0
    assert "is already kept by" in again.stderr
    assert sorted(p for p in root.rglob("*") if p.is_file()) == before


def test_series_makes_the_whole_tree_one_session(root: Path) -> None:
    mapping = write_mapping(root, mapping_text(**{"session: directory": "session: series"}))
    done = kb(root, "import", str(TREE), "--mapping", str(mapping), "--dry-run")
    assert done.returncode == 0, done.stderr
    assert "would import 4 runs in 3 repeat groups and 1 sessions" in done.stdout
    assert not (root / "data" / "runs").exists()


def test_without_leave_to_keep_raw_the_address_and_hash_are_kept(root: Path) -> None:
    mapping = write_mapping(root, mapping_text(keep=False))
    done = kb(root, "import", str(TREE), "--mapping", str(mapping))
    assert done.returncode == 0, done.stderr
    assert not (root / "data" / "raw").exists()
    for rel, run in runs(root).items():
        assert run["raw"] == []
        source = run["provenance"]["source"]
        assert source["sha256"] == hashlib.sha256((TREE / rel).read_bytes()).hexdigest()
        assert source["url"].endswith(f"/blob/{REVISION}/{rel}")
        assert run["id"].endswith(source["sha256"][:8])
    assert kb(root, "check").returncode == 0
    # An output referenced by its hash is imported once too: a second import is refused
    # before anything is written.
    before = sorted(p for p in root.rglob("*") if p.is_file())
    again = kb(root, "import", str(TREE), "--mapping", str(mapping))
    assert again.returncode != 0
    assert "is already kept by" in again.stderr, again.stderr
    assert sorted(p for p in root.rglob("*") if p.is_file()) == before


def test_a_copied_output_in_the_tree_is_refused(root: Path, tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    shutil.copytree(TREE, tree)
    first = tree / "20261127-014210-tpcb" / "results" / "4" / "1" / "simple.log"
    copy = tree / "20261127-014210-tpcb" / "results" / "4" / "1" / "prepared.log"
    copy.write_bytes(first.read_bytes().replace(b"query mode: simple", b"query mode: prepared"))
    (tree / "20261127-014210-tpcb" / "results" / "4" / "2" / "prepared.log").write_bytes(
        copy.read_bytes()
    )
    mapping = write_mapping(root, mapping_text())
    done = kb(root, "import", str(tree), "--mapping", str(mapping))
    assert done.returncode != 0
    assert (
        "20261127-014210-tpcb/results/4/2/prepared.log: files: is the same output, byte for "
        "byte, as 20261127-014210-tpcb/results/4/1/prepared.log"
    ) in done.stderr, done.stderr
    assert not (root / "data" / "runs").exists()


def test_a_custom_script_is_not_short_for_its_scale() -> None:
    """pgbench prints scaling factor 1 beside a custom script that reads none of its tables:
    only a built-in script's run is short for its scale."""
    run = {
        "origin": "measured",
        "benchmark": {
            "duration_s": 60,
            "scale": 1,
            "workload": {"scripts": [{"builtin": None, "file": "star-1.sql"}]},
        },
    }
    assert tryout.shortness(run) is None
    run["benchmark"]["workload"]["scripts"] = [{"builtin": "tpcb-like", "file": None}]
    assert tryout.shortness(run) == "at scale 1 (under 5)"
    run["benchmark"]["duration_s"] = 10
    run["benchmark"]["workload"]["scripts"] = [{"builtin": None, "file": "star-1.sql"}]
    assert tryout.shortness(run) == "10 s long (under 15 s)"


BAD_MAPPINGS = [
    pytest.param(
        {"keep_raw: true": "keep_raw: yes please"},
        "mapping.yaml:10: keep_raw: ",
        id="schema",
    ),
    pytest.param(
        {"(?P<repeat>\\d+)": "(\\d+)"},
        "mapping.yaml:13: files.pattern: has no named group 'repeat'",
        id="group-missing",
    ),
    pytest.param(
        {"(?P<clients>\\d+)": "(?P<clients>\\d+"},
        "mapping.yaml:13: files.pattern: not a regular expression",
        id="regex",
    ),
    pytest.param(
        {"same_as_server: true": "same_as_server: maybe"},
        "mapping.yaml:18: run.client.same_as_server: ",
        id="run-fact",
    ),
    pytest.param(
        {"-c {clients}": "-c {threads}"},
        "mapping.yaml:20: run.benchmark.command: {threads} is not a named group",
        id="command-placeholder",
    ),
]


@pytest.mark.parametrize(("change", "expected"), BAD_MAPPINGS)
def test_a_bad_mapping_is_a_located_error_and_nothing_is_written(
    root: Path, change: dict[str, str], expected: str
) -> None:
    mapping = write_mapping(root, mapping_text(**change))
    done = kb(root, "import", str(TREE), "--mapping", str(mapping))
    assert done.returncode != 0
    assert expected in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
    assert not (root / "data" / "runs").exists()
    # kb check finds the same problem in the shipped mapping file.
    check = kb(root, "check")
    assert check.returncode != 0
    assert expected.split(": ", 1)[1].split(":")[0] in check.stdout


def test_a_path_that_contradicts_its_output_is_refused(root: Path, tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    shutil.copytree(TREE, tree)
    moved = tree / "20261127-020000-tpcb" / "results" / "8" / "1"
    moved.mkdir(parents=True)
    (tree / "20261127-020000-tpcb" / "results" / "4" / "1" / "simple.log").rename(
        moved / "simple.log"
    )
    mapping = write_mapping(root, mapping_text())
    done = kb(root, "import", str(tree), "--mapping", str(mapping))
    assert done.returncode != 0
    assert (
        "20261127-020000-tpcb/results/8/1/simple.log: files.pattern: the path says clients 8 "
        "but the output says 4"
    ) in done.stderr
    assert not (root / "data" / "runs").exists()


def test_a_skipped_file_is_named_with_its_reason(root: Path) -> None:
    skipped = "20261127-020000-tpcb/results/1/1/simple.log"
    mapping = write_mapping(
        root,
        mapping_text(**{"  repeats: 2\n": f"  repeats: 2\n  skip:\n    {skipped}: not a run\n"}),
    )
    done = kb(root, "import", str(TREE), "--mapping", str(mapping), "--dry-run")
    assert done.returncode == 0, done.stderr
    assert "would import 3 runs" in done.stdout
    assert f"left out {skipped}: not a run" in done.stdout


NO_START = r"^(?P<session>\d{8}-\d{6}-tpcb)/results/"
STARTED = (
    "  repeats: 2\n  started:\n"
    "    20261127-014210-tpcb: 20261127-050000\n    20261127-020000-tpcb: 20261127-060000\n"
)
ARCHIVE = "  address: '{url}/blob/{revision}/archives/{session}.tar'\n  terms:"


def test_files_started_gives_the_start_the_path_does_not_hold(root: Path) -> None:
    # The session's start from the mapping (read from the tree's own logs), not from the path;
    # and an address that names a group of the pattern (outputs published inside an archive).
    mapping = write_mapping(
        root,
        mapping_text(
            **{
                r"^(?P<session>(?P<started>\d{8}-\d{6})-tpcb)/results/": NO_START,
                "  repeats: 2\n": STARTED,
                "  terms:": ARCHIVE,
            }
        ),
    )
    done = kb(root, "import", str(TREE), "--mapping", str(mapping))
    assert done.returncode == 0, done.stderr
    imported = runs(root)
    assert len(imported) == 4
    for rel, run in imported.items():
        session = rel.split("/", 1)[0]
        start = "20261127T050000-" if session.startswith("20261127-0142") else "20261127T060000-"
        assert bench_session(run["repeat"]).startswith(start)
        assert run["provenance"]["source"]["url"] == (
            f"https://github.com/someone/results/blob/{REVISION}/archives/{session}.tar"
        )
        assert run["provenance"]["source"]["locator"] == rel
    assert kb(root, "check").returncode == 0


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        pytest.param(
            {"  repeats: 2\n": STARTED},
            "files.started: is given, but files.pattern has a started group too",
            id="both",
        ),
        pytest.param(
            {r"^(?P<session>(?P<started>\d{8}-\d{6})-tpcb)/results/": NO_START},
            "files.pattern: has no named group 'started'",
            id="neither",
        ),
        pytest.param(
            {
                r"^(?P<session>(?P<started>\d{8}-\d{6})-tpcb)/results/": NO_START,
                "  repeats: 2\n": STARTED.replace("20261127-060000", "2026-11-27"),
            },
            "files.started.20261127-020000-tpcb: '2026-11-27' is not in the form",
            id="bad-start",
        ),
        pytest.param(
            {"  terms:": ARCHIVE.replace("{session}", "{archive}")},
            "source.address: {archive} is neither url, revision, path nor a named group",
            id="address-group",
        ),
    ],
)
def test_a_bad_start_or_address_is_a_located_error(
    root: Path, change: dict[str, str], expected: str
) -> None:
    mapping = write_mapping(root, mapping_text(**change))
    done = kb(root, "import", str(TREE), "--mapping", str(mapping))
    assert done.returncode != 0
    assert expected in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
    assert not (root / "data" / "runs").exists()


def test_a_session_missing_from_files_started_is_named(root: Path) -> None:
    mapping = write_mapping(
        root,
        mapping_text(
            **{
                r"^(?P<session>(?P<started>\d{8}-\d{6})-tpcb)/results/": NO_START,
                "  repeats: 2\n": STARTED.replace(
                    "    20261127-020000-tpcb: 20261127-060000\n", ""
                ),
            }
        ),
    )
    done = kb(root, "import", str(TREE), "--mapping", str(mapping))
    assert done.returncode != 0
    assert (
        "20261127-020000-tpcb/results/4/1/simple.log: files.started: its session "
        "'20261127-020000-tpcb' has no start in files.started"
    ) in done.stderr
    assert not (root / "data" / "runs").exists()


def test_unstated_settings_stay_null_only_when_the_notes_say_so(root: Path) -> None:
    # A published tree whose author lists no settings: null (unknown), never {} (defaults);
    # the run must say why in its notes.
    unstated = {"  postgres:\n    settings: {}\n": ""}
    mapping = write_mapping(root, mapping_text(**unstated))
    done = kb(root, "import", str(TREE), "--mapping", str(mapping), "--dry-run")
    assert done.returncode != 0
    assert "provenance.notes: missing: postgres.settings is null" in done.stderr, done.stderr
    explained = {
        "  postgres:\n    settings: {}\n": (
            "  provenance:\n    notes: The author lists no settings.\n"
        )
    }
    mapping = write_mapping(root, mapping_text(**explained))
    done = kb(root, "import", str(TREE), "--mapping", str(mapping))
    assert done.returncode == 0, done.stderr
    assert all(run["postgres"]["settings"] is None for run in runs(root).values())
    assert kb(root, "check").returncode == 0
