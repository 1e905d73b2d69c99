"""The kb CLI contract: every command has help with an example and a section in docs/cli.md;
domain errors are one line starting `error:` with no traceback."""

from __future__ import annotations

import re

import pytest

from kbtest import REPO, run_kb
from pgbench_kb.cli import COMMANDS


def test_top_level_help_lists_every_command():
    done = run_kb("--help", process=True)  # the installed entry point itself
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
    done = run_kb("plan", "no-such-profile", process=True)  # the status the shell sees
    assert done.returncode == 1
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("error: ")
    assert "no such profile 'no-such-profile'" in lines[0]
    assert "shipped profiles:" in lines[0]


def test_a_second_ctrl_c_while_interrupted_is_said_changes_nothing(monkeypatch, capsys):
    """Regression: a second Ctrl-C arriving while `error: interrupted` was being printed
    ended kb derive with a traceback. Once interrupted, further Ctrl-C are ignored."""
    import signal

    from pgbench_kb import cli

    def interrupted(_args):
        raise KeyboardInterrupt

    seen = []
    real_print = print

    def second_ctrl_c(*args, **kwargs):
        seen.append(signal.getsignal(signal.SIGINT))
        if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
            raise KeyboardInterrupt  # what the second Ctrl-C did before the fix
        real_print(*args, **kwargs)

    parser = cli.build_parser()
    args = parser.parse_args(["compare"])
    args.handler = interrupted
    monkeypatch.setattr(cli.argparse.ArgumentParser, "parse_args", lambda self, argv=None: args)
    monkeypatch.setattr("builtins.print", second_ctrl_c)
    before = signal.getsignal(signal.SIGINT)
    try:
        assert cli.main([]) == 130
    finally:
        signal.signal(signal.SIGINT, before)
    assert seen == [signal.SIG_IGN]
    assert capsys.readouterr().err == "error: interrupted\n"
