"""The fast reader (``runs/fastyaml.py``) either gives up or reads a text exactly as the full
loader (``runfile.load_yaml_text``) does: the same data, types included, and the same line for
every key and list item. ``kb check`` relies on it to place its findings, so the report is the
same whichever reader read a file."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from fuzzyaml import random_texts
from trickyyaml import GIVES_UP, READS

from kbtest import REPO, random_synth_run
from pgbench_kb.errors import KbError
from pgbench_kb.runs.fastyaml import fast_load, fast_load_lines
from pgbench_kb.runs.runfile import dump_run, load_yaml_text

RUN_FILES = sorted((REPO / "data" / "runs").rglob("*.yaml"))
TEST_FILES = sorted((REPO / "tests").rglob("*.yaml"))


def full(text: str):
    """(data, lines) from the full loader, or None when it refuses the text."""
    try:
        loaded = load_yaml_text(text, path="x")
    except KbError:
        return None
    return loaded.data, loaded.lines


def assert_exact(text: str) -> bool:
    """The fast reader gives up, or agrees with the full loader; True when it read the text."""
    fast = fast_load_lines(text)
    assert (fast is None) == (fast_load(text) is None)
    if fast is None:
        return False
    expected = full(text)
    assert expected is not None, "the fast reader accepted a text the full loader refuses"
    data, lines = expected
    assert fast.data == data
    assert repr(fast.data) == repr(data)  # 1 and 1.0 and True are equal, but not the same
    assert fast.lines == lines
    assert fast_load(text) == data
    return True


@pytest.mark.parametrize(
    "path",
    RUN_FILES + TEST_FILES,
    ids=[p.relative_to(REPO).as_posix() for p in RUN_FILES + TEST_FILES],
)
def test_same_data_and_lines_on_repository_files(path: Path):
    assert_exact(path.read_text(encoding="utf-8", errors="replace").removeprefix("\ufeff"))


def test_every_committed_run_file_takes_the_fast_path():
    """The run files in data/runs are what ``kb import`` writes: all of them must be read fast
    (else the speed-up silently vanishes; multi-line quoted text was the last case)."""
    refused = [
        p.relative_to(REPO).as_posix()
        for p in RUN_FILES
        if fast_load_lines(p.read_text(encoding="utf-8")) is None
    ]
    assert RUN_FILES and refused == []


def test_synthetic_run_files_take_the_fast_path():
    rng = random.Random(11)
    for index in range(8):
        run = random_synth_run(rng, index)
        assert assert_exact(dump_run(run))


@pytest.mark.parametrize("text", GIVES_UP.values(), ids=GIVES_UP.keys())
def test_gives_up(text: str):
    assert fast_load_lines(text) is None
    assert fast_load(text) is None


@pytest.mark.parametrize(("text", "expected"), READS.values(), ids=READS.keys())
def test_reads_like_the_full_loader(text: str, expected):
    assert assert_exact(text)
    if expected is not None:
        assert fast_load(text) == expected


def test_lines_follow_the_full_loader_where_names_collide():
    """A dotted key ``a.0`` and the first item of ``a`` share a path: the full loader keeps the
    key's line over the item's, and the item's first line over later ones."""
    assert assert_exact("a:\n- x\na.0: y\n")
    assert assert_exact("a.0: y\na:\n- x\n")
    assert assert_exact("a:\n  b: 1\na.b: 2\n")


def test_random_texts_near_the_canonical_form():
    """Mutated dumps and line soups: whatever is read is read exactly (a few thousand texts;
    many are refused, enough are read)."""
    read = sum(assert_exact(text) for text in random_texts(random.Random(2026), 3000))
    assert read > 300


# Texts the fast reader of session 3 (then analyze/fastyaml.py) read differently from the full
# loader, or read where the full loader refuses them; found by the random texts above.
MISREAD_BEFORE = {
    "a tab after the colon read the mapping as the text 'a:<TAB>1'": "a:\t1\n",
    "two spaces after the colon kept a leading space in the value": "a:  x\n",
    "a value '- x' read as text (YAML refuses it)": "a: - x\n",
    "a figure over 40 digits read (the full loader refuses it)": f"a: {'1' * 41}\n",
    "a blank line inside plain text read as a space (YAML: a line break)": "a: one\n\n  two\n",
    "a comment line inside plain text skipped (YAML refuses it)": "a: one\n# c\n  two\n",
    "nesting deeper than the full loader's limit read": GIVES_UP["nested deeper than the limit"],
    "a key over 1024 characters read (YAML refuses it)": f"{'k' * 1100}: 1\n",
    "a document marker read as text": "---\ntwo words\n",
}


@pytest.mark.parametrize("text", MISREAD_BEFORE.values(), ids=MISREAD_BEFORE.keys())
def test_regression_texts_the_old_fast_reader_misread(text: str):
    """Regression: each of these was read by the fast reader into data the full loader does
    not give (kb compare and kb derive would have used it); now each is exact or refused."""
    assert_exact(text)
