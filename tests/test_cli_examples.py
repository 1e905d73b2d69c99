"""Every `kb COMMAND --help` example runs as written (issue 8: `kb import --help`'s example
failed as written). Each example line is run in a copy of the repository, with the files it
names put there from the test fixtures, and must exit 0: its `kb` commands through the CLI's
main in this process (kbtest.run_kb), its other commands (hugo) as processes, joined by `&&`
with `<` and `>` files as the shell does; any other shell syntax fails the test until it is
handled here."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from kbtest import REFERENCE_OUTPUTS, REPO, VENV_BIN, copy_day_one, run_kb
from pgbench_kb.cli import COMMANDS

#: The files the examples name, as a user would have them: from the parser's fixtures.
EXAMPLE_FILES = {
    "pgbench-output.txt": REFERENCE_OUTPUTS / "pg18-tpcb-P1-r.txt",
    "out.txt": REFERENCE_OUTPUTS / "pg18-tpcb-P1-r.txt",
    "pgbench_log.1234": REFERENCE_OUTPUTS / "pg18-real-per-thread-logs-merged" / "pgbench_log.5158",
    "pgbench_log.1234.1": REFERENCE_OUTPUTS
    / "pg18-real-per-thread-logs-merged"
    / "pgbench_log.5158.1",
}
#: What the examples read of the repository (the site's sources for `hugo`).
COPIED = ("config.toml", "layouts", "static", "content", "data", "docs", "scripts")


def examples(name: str) -> list[str]:
    done = run_kb(name, "--help")
    assert done.returncode == 0, done.stderr
    text = done.stdout.split("example:", 1)[1]
    return [line.strip() for line in text.splitlines() if line.strip()]


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the repository (the shipped knowledge as committed, its published history
    alone: the examples must run, on any runs) with the example files, committed on main;
    made once, copied for each test."""
    root = copy_day_one(tmp_path_factory.mktemp("examples") / "repo", transcribed_only=True)
    for name in COPIED:
        source = REPO / name
        if (root / name).exists():
            continue
        if source.is_dir():
            shutil.copytree(source, root / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copyfile(source, root / name)
    for name, source in EXAMPLE_FILES.items():
        shutil.copyfile(source, root / name)
    # A repository with one commit on main, for `kb diff main`.
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "copy"]):
        git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.org", *args]
        subprocess.run(git, cwd=root, check=True, capture_output=True)
    return root


@pytest.fixture
def sandbox(template: Path, tmp_path: Path) -> Path:
    return shutil.copytree(template, tmp_path / "repo", symlinks=True)


def run_line(line: str, cwd: Path) -> tuple[int, str]:
    """Run one example line as bash would: its commands in turn while each exits 0; return
    the last status and what the commands wrote on standard output and error."""
    env = {**os.environ, "PATH": f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    tokens, said = list(lexer), []
    commands = [[]]
    for token in tokens:
        if token == "&&":
            commands.append([])
        else:
            commands[-1].append(token)
    for words in commands:
        argv, given, into = [], None, None
        while words:
            word = words.pop(0)
            if word in {"<", ">"} and words:
                target = cwd / words.pop(0)
                given, into = (target, into) if word == "<" else (given, target)
            else:
                shell = word and set(word) <= set("|;&()<>")
                assert not shell, f"`{line}`: {word} is shell syntax this test does not run"
                argv.append(word)
        text = given.read_text(encoding="utf-8") if given else None
        if argv[0] == "kb":
            done = run_kb(*argv[1:], cwd=cwd, input=text, env=env)
        else:
            done = subprocess.run(
                argv, cwd=cwd, env=env, input=text, capture_output=True, text=True, timeout=300
            )
        if into is not None:
            into.write_text(done.stdout, encoding="utf-8")
        said += [done.stdout if into is None else "", done.stderr]
        if done.returncode != 0:
            return done.returncode, "".join(said)
    return 0, "".join(said)


@pytest.mark.parametrize("name", [c.name for c in COMMANDS])
def test_every_help_example_runs_as_written(name: str, sandbox: Path) -> None:
    lines = examples(name)
    assert lines and all(line.startswith("kb ") for line in lines), lines
    for line in lines:
        status, said = run_line(line, sandbox)
        assert status == 0, f"`{line}` failed:\n{said[-4000:]}"
        assert "Traceback" not in said
