"""Read pgbench output and logs into plain dicts (the JSON that ``kb parse`` prints).

Public API::

    parse_text(text, *, source="<stdin>") -> dict   # any pgbench text output, or a log's text
    parse_paths(paths) -> dict                      # files ("-" is stdin); logs of one run merge

Both raise ``pgbench_kb.errors.ParseError`` for input they cannot read, and nothing else. The
result's ``kind`` is "summary", "transaction_log", "aggregate_log" or "init"; docs/parser.md
lists every key.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pgbench_kb.errors import ParseError
from pgbench_kb.parse.detect import (
    HEAD_BYTES,
    LogLayout,
    decode_text,
    head_lines,
    looks_binary,
    sniff_log,
)
from pgbench_kb.parse.init import looks_like_init, parse_init
from pgbench_kb.parse.logs import (
    LogSource,
    check_same_run,
    parse_aggregate_log,
    parse_transaction_log,
)
from pgbench_kb.parse.summary import (
    check_summary,
    clean_error,
    error_reason,
    has_summary,
    progress_reports,
    read_lines,
)
from pgbench_kb.parse.textlines import prepare_lines

__all__ = ["parse_paths", "parse_text", "progress_reports"]

#: Text output larger than this is not pgbench's end-of-run text.
MAX_TEXT_BYTES = 64 * 1024 * 1024
_GZIP_MAGIC = b"\x1f\x8b"
_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


def _refuse_binary(head: bytes, source: str) -> None:
    if head.startswith((_GZIP_MAGIC, _ZSTD_MAGIC)):
        raise ParseError(
            "the file is compressed, not pgbench text or a log",
            path=source,
            hint="decompress it first, e.g. zcat FILE | kb parse -",
        )
    if looks_binary(head):
        raise ParseError(
            "binary data, not pgbench text output or a pgbench log",
            path=source,
            hint="give the text pgbench printed, or a pgbench_log.* file",
        )


def _log_rows(text: str) -> list[list[str]]:
    lines = head_lines(text)
    complete = lines[:-1] if len(lines) > 1 else lines
    return [line.split(" ") for line in complete]


def _parse_logs(
    sources: Sequence[LogSource], layout: LogLayout, head_rows: list[list[str]]
) -> dict[str, Any]:
    if layout.kind == "aggregate_log":
        return parse_aggregate_log(sources, layout)
    return parse_transaction_log(sources, layout, head_rows)


def _parse_output_text(text: str, source: str) -> dict[str, Any]:
    """Summary or init output (text that is not a log)."""
    lines, restored, _ = prepare_lines(text)
    result, errors = read_lines(lines, source)
    last_line = lines[-1].number if lines else 0
    if has_summary(result):
        check_summary(result, errors, source, last_line)
        if restored:
            result["notes"].append("line breaks were missing and have been restored")
        if looks_like_init(lines):
            result["init"] = parse_init(lines)
        return result
    if looks_like_init(lines):
        init = parse_init(lines)
        reason = error_reason(errors)
        if not init["completed"] and reason is not None:
            raise ParseError(
                f"pgbench -i did not finish; pgbench reported: {clean_error(reason.text)}",
                path=source,
                line=reason.number,
                hint="fix the problem and run pgbench -i again",
            )
        if restored:
            init["notes"].append("line breaks were missing and have been restored")
        return init
    reason = error_reason(errors)
    if reason is not None:
        raise ParseError(
            f"no pgbench results in this input; pgbench reported: {clean_error(reason.text)}",
            path=source,
            line=reason.number,
            hint="the benchmark did not run: fix that problem and run pgbench again",
        )
    if result["progress"]:
        raise ParseError(
            "only progress lines and no summary: the run was stopped before it ended",
            path=source,
            line=last_line,
            hint="give the whole output, down to its tps line",
        )
    raise ParseError(
        "no pgbench output found",
        path=source,
        hint="expected the text pgbench prints after a run, pgbench -i output, or a "
        "pgbench_log.* file",
    )


def parse_text(text: str, *, source: str = "<stdin>") -> dict[str, Any]:
    """Parse any pgbench text output, or the text of one pgbench log file.

    ``source`` names the input in error messages. Raises ``ParseError`` for input that is
    empty, binary, or holds no pgbench results.
    """
    if not text.strip():
        raise ParseError(
            "the input is empty", path=source, hint="give the text pgbench printed or a log file"
        )
    _refuse_binary(text[:HEAD_BYTES].encode("utf-8", "replace"), source)
    head = text[:HEAD_BYTES]
    layout = sniff_log(head_lines(head))
    if layout is not None:
        log = LogSource(source, data=text.encode("utf-8", "replace"))
        return _parse_logs([log], layout, _log_rows(head))
    return _parse_output_text(text, source)


# ---------------------------------------------------------------------------------------------
# Files.


def _read_head(path: str | Path) -> tuple[str, Path | None, bytes, bytes | None]:
    """``(name, path, head, all_data)``; ``all_data`` is set only for stdin."""
    if str(path) == "-":
        data = sys.stdin.buffer.read()
        return "<stdin>", None, data[:HEAD_BYTES], data
    file = Path(path)
    try:
        with open(file, "rb") as stream:
            return str(path), file, stream.read(HEAD_BYTES), None
    except FileNotFoundError:
        raise ParseError("no such file", path=str(path)) from None
    except IsADirectoryError:
        raise ParseError("is a directory, not a file", path=str(path)) from None
    except OSError as exc:
        raise ParseError(f"cannot read the file: {exc.strerror or exc}", path=str(path)) from None


def _read_all(name: str, path: Path | None, data: bytes | None) -> bytes:
    if data is not None:
        return data
    assert path is not None
    try:
        size = path.stat().st_size
        if size > MAX_TEXT_BYTES:
            raise ParseError(
                f"{size} bytes of text that is not a pgbench log; pgbench's own output is "
                "far smaller",
                path=name,
                hint="give the text pgbench printed, or a pgbench_log.* file",
            )
        return path.read_bytes()
    except OSError as exc:
        raise ParseError(f"cannot read the file: {exc.strerror or exc}", path=name) from None


def _combine(
    texts: list[tuple[str, dict[str, Any]]],
    logs: dict[str, dict[str, Any]],
) -> dict[str, Any]:
    """One result from several files: the summary first, with logs and init attached."""
    by_kind: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    for name, result in texts:
        by_kind.setdefault(result["kind"], []).append((name, result))
    for kind, items in by_kind.items():
        if len(items) > 1:
            names = ", ".join(name for name, _ in items[:3])
            raise ParseError(
                f"{len(items)} inputs of kind '{kind}' given ({names}); kb parse reads one "
                "run at a time",
                path=items[1][0],
                hint="parse each run's output on its own",
            )
    parts = {kind: items[0][1] for kind, items in by_kind.items()}
    parts.update(logs)
    for kind in ("summary", "transaction_log", "aggregate_log", "init"):
        if kind in parts:
            primary = parts.pop(kind)
            break
    for kind, part in parts.items():
        primary[kind] = part
    return primary


def parse_paths(paths: Sequence[str | Path]) -> dict[str, Any]:
    """Parse files ("-" is stdin) into one result.

    Several per-thread log files of one run (``pgbench_log.PID``, ``pgbench_log.PID.1``, …) are
    merged. A summary given with its logs (or its ``pgbench -i`` output) gets them attached under
    the keys ``transaction_log``, ``aggregate_log`` and ``init``.
    """
    if not paths:
        raise ParseError("no input files given", hint="name a file, or - for standard input")
    texts: list[tuple[str, dict[str, Any]]] = []
    log_groups: dict[tuple[str, tuple[str, ...]], list[tuple[LogSource, LogLayout]]] = {}
    head_rows: dict[tuple[str, tuple[str, ...]], list[list[str]]] = {}
    for path in paths:
        name, file, head, data = _read_head(path)
        if not head.strip():
            raise ParseError(
                "the input is empty", path=name, hint="give the text pgbench printed or a log file"
            )
        _refuse_binary(head, name)
        head_text = decode_text(head)
        layout = sniff_log(head_lines(head_text))
        if layout is None:
            texts.append((name, _parse_output_text(decode_text(_read_all(name, file, data)), name)))
            continue
        key = (layout.kind, layout.columns)
        log_groups.setdefault(key, []).append((LogSource(name, path=file, data=data), layout))
        head_rows.setdefault(key, []).extend(_log_rows(head_text))
    logs: dict[str, dict[str, Any]] = {}
    for key, group in log_groups.items():
        kind = key[0]
        if kind in logs:
            raise ParseError(
                f"the {kind.replace('_', ' ')} files have different columns",
                path=group[0][0].name,
                hint="give the log files of one run",
            )
        sources = [source for source, _ in group]
        check_same_run(sources)
        logs[kind] = _parse_logs(sources, group[0][1], head_rows[key])
    if "transaction_log" in logs and "aggregate_log" in logs:
        raise ParseError(
            "both per-transaction and aggregate logs given; one run writes only one kind",
            path=str(paths[-1]),
            hint="give the log files of one run",
        )
    return _combine(texts, logs)
