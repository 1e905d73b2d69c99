"""Rules on ``benchmark``: the invocation (clients, threads, -T/-t, scripts) and its agreement
with the recorded command line."""

from __future__ import annotations

import functools
import shlex
from typing import Any

from pgbench_kb.runs.check.report import Issue
from pgbench_kb.runs.check.values import differs, shown_value
from pgbench_kb.runs.runfile import sha256_bytes

#: pgbench options whose value a ``benchmark`` field records, by every spelling, with the type
#: of the value.
VALUE_OPTIONS: dict[str, tuple[str, type]] = {
    "-c": ("clients", int),
    "--client": ("clients", int),
    "-j": ("threads", int),
    "--jobs": ("threads", int),
    "-T": ("duration_s", float),
    "--time": ("duration_s", float),
    "-t": ("transactions_per_client", int),
    "--transactions": ("transactions_per_client", int),
    "-M": ("query_mode", str),
    "--protocol": ("query_mode", str),
    "-P": ("progress_interval_s", float),
    "--progress": ("progress_interval_s", float),
    "-R": ("rate_limit_tps", float),
    "--rate": ("rate_limit_tps", float),
    "-L": ("latency_limit_ms", float),
    "--latency-limit": ("latency_limit_ms", float),
}
#: pgbench flags that a ``benchmark`` field records, with the value they mean.
FLAG_OPTIONS: dict[str, tuple[str, Any]] = {
    "-C": ("connect_per_transaction", True),
    "--connect": ("connect_per_transaction", True),
    "-v": ("vacuum", "all"),
    "--vacuum-all": ("vacuum", "all"),
    "-n": ("vacuum", "none"),
    "--no-vacuum": ("vacuum", "none"),
}
#: Other short options of pgbench that take a value (so that value is not read as an option).
OTHER_VALUE_SHORTS = frozenset("fbhpUDsIF")
#: What pgbench assumes when an option is not given; a field at its default needs no flag.
DEFAULTS: dict[str, Any] = {"clients": 1, "threads": 1, "vacuum": "default"}
SPELLING = {field: option for option, (field, _) in VALUE_OPTIONS.items() if len(option) == 2}
SPELLING |= {"connect_per_transaction": "-C", "vacuum": "-v or -n"}


@functools.lru_cache(maxsize=4096)
def _words(command: str) -> tuple[str, ...] | None:
    """The words of a command line, as the shell splits them (None: unbalanced quotes); cached,
    since repeats of one configuration share their command."""
    try:
        return tuple(shlex.split(command))
    except ValueError:
        return None


def command_values(command: str) -> dict[str, Any] | None:
    """The ``benchmark`` fields a pgbench command line states, or None when it cannot be read
    (unbalanced quotes)."""
    words = _words(command)
    if words is None:
        return None
    stated: dict[str, Any] = {}
    index = 1
    while index < len(words):
        word = words[index]
        index += 1
        name, value = word, None
        if word.startswith("--") and "=" in word:
            name, value = word.split("=", 1)
        elif word.startswith("-") and not word.startswith("--") and len(word) > 2:
            name, value = word[:2], word[2:]
        if name in FLAG_OPTIONS and value is None:
            field, meaning = FLAG_OPTIONS[name]
            stated[field] = meaning
        elif name in VALUE_OPTIONS:
            if value is None and index < len(words):
                value, index = words[index], index + 1
            field, kind = VALUE_OPTIONS[name]
            try:
                stated[field] = kind(value) if value is not None else None
            except ValueError:
                stated[field] = value
        elif len(name) == 2 and name[1] in OTHER_VALUE_SHORTS and value is None:
            index += 1
    return stated


def rules_command(run: dict[str, Any]) -> list[Issue]:
    """The fields against ``benchmark.command``: a value the command states is the value of its
    field. A transcribed run records no invocation beyond the command its source gives: a
    field the person declared, set away from pgbench's default with no flag for it in the
    command, came from somewhere else (another table of the source, say)."""
    bench = run["benchmark"]
    command = bench.get("command")
    if not command or "<masked>" in command:
        return []
    stated = command_values(command)
    if stated is None:
        return [Issue("benchmark.command", "cannot be read as a command line (unbalanced quotes)")]
    issues = []
    transcribed = run["origin"] == "transcribed"
    declared = set(run["provenance"].get("declared") or [])
    for field, said in stated.items():
        have = bench.get(field)
        if have is not None and said is not None and differs(have, said):
            issues.append(
                Issue(
                    f"benchmark.{field}",
                    f"{shown_value(have)} but benchmark.command says {shown_value(said)}",
                    related=("benchmark.command",),
                )
            )
        elif have is None and said is not None and transcribed:
            issues.append(
                Issue(
                    f"benchmark.{field}",
                    f"null but benchmark.command says {shown_value(said)} (record it)",
                    related=("benchmark.command",),
                )
            )
    if transcribed:
        for field, option in SPELLING.items():
            have = bench.get(field)
            if (
                field not in stated
                and have not in (None, False, DEFAULTS.get(field))
                and {"benchmark", f"benchmark.{field}"} & declared
            ):
                issues.append(
                    Issue(
                        f"benchmark.{field}",
                        f"{shown_value(have)} but benchmark.command has no {option}: a "
                        "transcribed run records the invocation its source gives for these "
                        "figures (make it null, or complete the command as the source gives it)",
                        related=("benchmark.command",),
                    )
                )
    return issues


def rules_benchmark(run: dict[str, Any]) -> list[Issue]:
    bench = run["benchmark"]
    issues = rules_command(run)
    clients, threads = bench.get("clients"), bench.get("threads")
    if clients is not None and threads is not None and threads > clients:
        issues.append(
            Issue(
                "benchmark.threads",
                f"{threads} threads for {clients} clients; pgbench needs threads ≤ clients",
            )
        )
    if bench.get("duration_s") is not None and bench.get("transactions_per_client") is not None:
        issues.append(
            Issue(
                "benchmark.transactions_per_client",
                "both duration_s (-T) and transactions_per_client (-t) are set; pgbench takes "
                "one of them",
            )
        )
    for index, script in enumerate(bench["workload"]["scripts"]):
        where = f"benchmark.workload.scripts.{index}"
        unnamed = not (script.get("file") or script.get("text"))
        if script.get("builtin") is None and unnamed and run["origin"] == "measured":
            issues.append(Issue(where, "a custom script needs its file name or its text"))
        if script.get("builtin") is not None and (script.get("file") or script.get("text")):
            issues.append(Issue(where, "a builtin script has no file or text"))
        text, digest = script.get("text"), script.get("sha256")
        if text is not None and digest is not None:
            actual = sha256_bytes(text.encode("utf-8"))
            if actual != digest:
                issues.append(
                    Issue(
                        f"{where}.sha256",
                        f"does not match the script text (its sha256 is {actual[:12]}…)",
                    )
                )
    return issues
