"""The fast reader of canonical run files gives exactly what the full YAML loader gives, or
gives up: on every run file and YAML fixture in the repository, on synthetic run files, and on
the planted set; and it gives up on what it does not handle."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from planted import planted_runs

from kbtest import REPO, random_synth_run
from pgbench_kb.errors import KbError
from pgbench_kb.runs.fastyaml import fast_load
from pgbench_kb.runs.runfile import dump_run, load_yaml_text

FILES = sorted(
    p
    for folder in ("data/runs", "tests", "scripts/profiles")
    for p in (REPO / folder).rglob("*.yaml")
)


def full(text: str):
    try:
        return load_yaml_text(text, path="x").data
    except KbError:
        return "error"


def same(text: str) -> bool:
    got = fast_load(text)
    return got is None or (got == full(text) and repr(got) == repr(full(text)))


@pytest.mark.parametrize("path", FILES, ids=[p.relative_to(REPO).as_posix() for p in FILES])
def test_same_data_as_the_full_loader_on_repository_files(path: Path):
    assert same(path.read_text(encoding="utf-8", errors="replace"))


def test_handles_the_canonical_form_itself():
    texts = [dump_run(run) for run in planted_runs()]
    rng = random.Random(5)
    for i in range(40):
        texts.append(dump_run(random_synth_run(rng, i)))
    for text in texts:
        assert fast_load(text) is not None
        assert same(text)


@pytest.mark.parametrize(
    "text",
    [
        "a: 1\na: 2\n",  # duplicate key
        "a: &x 1\nb: *x\n",  # anchors
        'a: "quoted \\n"\n',  # double quotes
        "a: |\n  text\n",  # literal block
        "a: [1, 2]\n",  # flow sequence
        "on: 1\n",  # a key YAML reads as a boolean
        "a: 012\n",  # octal in YAML 1.1
        "a: 1.0e+3\n",  # a float beyond plain decimals
        "a: b: c\n",
        "a:\n\t- 1\n",
        "a: x\x07y\n",
        "a: 'open\n",
    ],
)
def test_gives_up_outside_the_subset(text: str):
    assert fast_load(text) is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a: yes\nb: 'yes'\n", {"a": True, "b": "yes"}),
        ("a: 2025-01-02\n", {"a": "2025-01-02"}),
        ("a: 1e3\n", {"a": "1e3"}),
        ("a: 0.1.0\nb: -3\nc: 2.50\n", {"a": "0.1.0", "b": -3, "c": 2.5}),
        ("a:\n- 1\n- - 2\n  - 3\nb: {}\n", {"a": [1, [2, 3]], "b": {}}),
        ("a: one\n  two three\nb: ~\n", {"a": "one two three", "b": None}),
        ("x:\n  y:\n  - k: 1\n    l: it''s\n", {"x": {"y": [{"k": 1, "l": "it''s"}]}}),
    ],
)
def test_reads_like_yaml(text: str, expected):
    assert fast_load(text) == full(text) == expected


def test_skips_named_keys_unread():
    text = "a: 1\nresults:\n  tps: 5\n  progress:\n    t_s:\n    - 1\n  n: 2\nraw:\n- p: q\nz: 0\n"
    assert fast_load(text, frozenset({"raw", "results.progress"})) == {
        "a": 1,
        "results": {"tps": 5, "n": 2},
        "z": 0,
    }
