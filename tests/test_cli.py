"""The kb CLI contract: every command has help with an example and a section in docs/cli.md;
domain errors are one line starting `error:` with no traceback."""

from __future__ import annotations

import re

import pytest

from kbtest import REPO, run_kb
from pgbench_kb.cli import COMMANDS


def test_top_level_help_lists_every_command():
    done = run_kb("--help")
    assert done.returncode == 0
    for command in COMMANDS:
        assert re.search(rf"^\s+{command.name}\s", done.stdout, re.M), command.name


@pytest.mark.parametrize("name", [c.name for c in COMMANDS])
def test_command_help_has_an_example(name):
    done = run_kb(name, "--help")
    assert done.returncode == 0, done.stderr
    assert "example:" in done.stdout
    example = done.stdout.split("example:", 1)[1]
    assert f"kb {name}" in example


@pytest.mark.parametrize("name", [c.name for c in COMMANDS])
def test_command_is_documented(name):
    docs = (REPO / "docs" / "cli.md").read_text(encoding="utf-8")
    assert re.search(rf"^## `kb {name}", docs, re.M), f"docs/cli.md has no section for kb {name}"


def test_unknown_profile_is_one_line_without_traceback():
    done = run_kb("plan", "no-such-profile")
    assert done.returncode == 1
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("error: ")
    assert "no such profile 'no-such-profile'" in lines[0]
    assert "shipped profiles:" in lines[0]
