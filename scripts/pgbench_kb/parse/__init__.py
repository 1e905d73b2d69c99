"""Read pgbench output and logs into plain dicts (the JSON that ``kb parse`` prints).

Public API::

    parse_text(text, *, source="<stdin>") -> dict   # any pgbench text output, or a log's text
    parse_paths(paths) -> dict                      # files ("-" is stdin); logs of one run merge

Both raise ``pgbench_kb.errors.ParseError`` for input they cannot read, and nothing else. The
result's ``kind`` is "summary", "transaction_log", "aggregate_log" or "init"; docs/parser.md
lists every key.
"""

from __future__ import annotations

import functools
import os
import stat
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, TypeVar

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
    RUN_ABORTED,
    check_summary,
    clean_error,
    error_reason,
    has_summary,
    progress_reports,
    read_lines,
)
from pgbench_kb.parse.textlines import (
    MAX_LINE_CHARS,
    Line,
    first_long_line,
    prepare_lines,
    printable,
)

__all__ = ["parse_paths", "parse_text", "progress_reports"]

#: Text output larger than this is not pgbench's end-of-run text; standard input and other
#: files that are not regular files (pipes) are read into memory up to this size too.
MAX_TEXT_BYTES = 64 * 1024 * 1024
_READ_BLOCK = 1024 * 1024
_GZIP_MAGIC = b"\x1f\x8b"
_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
_UTF16_BOMS = {b"\xff\xfe": "utf-16-le", b"\xfe\xff": "utf-16-be"}
_UTF16_HINT = "convert it first, e.g. iconv -f UTF-16 -t UTF-8 FILE > out.txt"
_Result = TypeVar("_Result")


def _printable_errors(function: Callable[..., _Result]) -> Callable[..., _Result]:
    """Make every ParseError's text one readable line: input echoed in a message may hold ESC,
    NUL or other control characters, which are written as escapes instead."""

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> _Result:
        try:
            return function(*args, **kwargs)
        except ParseError as error:
            error.message = printable(error.message)
            error.args = (error.message,)
            if error.path is not None:
                error.path = printable(error.path)
            if error.hint is not None:
                error.hint = printable(error.hint)
            raise

    return wrapper


def utf16_encoding(head: bytes) -> str | None:
    """The UTF-16 variant of ``head`` (PowerShell's ``>`` writes UTF-16), or None.

    Known by its byte-order mark, or by ASCII text with a NUL byte before or after every
    character.
    """
    for bom, encoding in _UTF16_BOMS.items():
        if head.startswith(bom):
            return encoding
    sample = head[:512] if len(head) % 2 == 0 else head[:511]
    if len(sample) < 8:
        return None
    for zeros, encoding in ((sample[1::2], "utf-16-le"), (sample[0::2], "utf-16-be")):
        text = sample[0::2] if encoding == "utf-16-le" else sample[1::2]
        ascii_text = sum(1 for b in text if 9 <= b < 127)
        if zeros.count(0) >= 0.95 * len(zeros) and ascii_text >= 0.95 * len(text):
            return encoding
    return None


def _refuse_binary(head: bytes, source: str) -> None:
    if utf16_encoding(head) is not None:
        raise ParseError(
            "UTF-16 text (as PowerShell's > writes it), not the UTF-8 text pgbench prints",
            path=source,
            hint=_UTF16_HINT,
        )
    if head.startswith((_GZIP_MAGIC, _ZSTD_MAGIC)):
        raise ParseError(
            "the file is compressed, not pgbench text or a log",
            path=source,
            hint="decompress it first with gunzip -k FILE or zstd -d FILE, and give the result",
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


def _aborted_without_summary(
    result: dict[str, Any], reason: Line | None, lines: list[Line], source: str
) -> ParseError:
    """The error for a run that started and was aborted before its summary: with
    ``--exit-on-abort`` pgbench stops at the first failing client and prints no summary, only
    ``Run was aborted due to an error in thread N``."""
    messages = result["abort_messages"]
    run_aborted = next((m for m in messages if RUN_ABORTED.search(m)), None)
    message = "the benchmark ran but was aborted before pgbench printed its summary"
    if run_aborted is not None:
        message += f" ({clean_error(run_aborted)})"
    if reason is None:
        # Before 15 an aborted client's line has no "pgbench: error:" prefix.
        reason = next((line for line in lines if line.text == messages[0]), None)
    cause = reason.text if reason is not None else messages[0]
    if cause != run_aborted:
        message += f"; pgbench reported: {clean_error(cause)}"
    return ParseError(
        message,
        path=source,
        line=reason.number if reason is not None else None,
        hint="fix that error and run pgbench again; a run with --exit-on-abort stops at the "
        "first client that fails",
    )


def _refuse_long_line(text: str, source: str) -> None:
    """A line longer than any pgbench prints is refused before a pattern reads it."""
    found = first_long_line(text)
    if found is None:
        return
    number, length = found
    raise ParseError(
        f"line {number} is {length:,} characters long, longer than any line pgbench prints "
        f"(at most {MAX_LINE_CHARS // 1024} KiB are read)",
        path=source,
        line=number,
        hint="give the output as pgbench printed it",
    )


def _parse_output_text(text: str, source: str) -> dict[str, Any]:
    """Summary or init output (text that is not a log)."""
    _refuse_long_line(text, source)
    lines, restored, _ = prepare_lines(text)
    result, errors = read_lines(lines, source)
    last_line = lines[-1].number if lines else 0
    if has_summary(result):
        check_summary(result, errors, source, last_line)
        if restored:
            result["notes"].append("line breaks were missing and have been restored")
        if looks_like_init(lines):
            result["init"] = parse_init(lines, source)
        return result
    if looks_like_init(lines):
        init = parse_init(lines, source)
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
    if result["aborted"]:
        raise _aborted_without_summary(result, reason, lines, source)
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


@_printable_errors
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


@dataclass(frozen=True)
class _Input:
    """One input, opened once: a regular file is read again as needed (a log may be large);
    standard input and pipes are read once, into ``data``."""

    name: str
    path: Path | None
    data: bytes | None
    head: bytes
    identity: tuple[Any, ...]
    utf16: bool = False


def _read_bounded(stream: BinaryIO, name: str) -> bytes:
    """All of ``stream``, refusing more than ``MAX_TEXT_BYTES`` (never trusting a size)."""
    blocks: list[bytes] = []
    size = 0
    while block := stream.read(_READ_BLOCK):
        blocks.append(block)
        size += len(block)
        if size > MAX_TEXT_BYTES:
            raise ParseError(
                f"more than {MAX_TEXT_BYTES // 2**20} MiB from a pipe or standard input; "
                "pgbench's text output is far smaller",
                path=name,
                hint="for a large pgbench log, save it to a file and give the file's name",
            )
    return b"".join(blocks)


def _open_input(path: str | Path) -> _Input:
    if str(path) == "-":
        data = _read_bounded(sys.stdin.buffer, "<stdin>")
        return _Input("<stdin>", None, data, data[:HEAD_BYTES], ("stdin",))
    name = str(path)
    if not name:
        raise ParseError("the file name is empty", hint="name a file, or - for standard input")
    try:
        with open(path, "rb") as stream:
            info = os.fstat(stream.fileno())
            identity = (info.st_dev, info.st_ino)
            if stat.S_ISREG(info.st_mode):
                return _Input(name, Path(path), None, stream.read(HEAD_BYTES), identity)
            data = _read_bounded(stream, name)
            return _Input(name, None, data, data[:HEAD_BYTES], identity)
    except FileNotFoundError:
        raise ParseError("no such file", path=name) from None
    except IsADirectoryError:
        raise ParseError("is a directory, not a file", path=name) from None
    except OSError as exc:
        raise ParseError(f"cannot read the file: {exc.strerror or exc}", path=name) from None


def _read_all(item: _Input) -> bytes:
    """All bytes of a text input (a regular file is bounded by ``MAX_TEXT_BYTES``)."""
    if item.data is not None:
        return item.data
    assert item.path is not None
    try:
        with open(item.path, "rb") as stream:
            data = stream.read(MAX_TEXT_BYTES + 1)
    except OSError as exc:
        raise ParseError(f"cannot read the file: {exc.strerror or exc}", path=item.name) from None
    if len(data) > MAX_TEXT_BYTES:
        raise ParseError(
            f"more than {MAX_TEXT_BYTES // 2**20} MiB of text that is not a pgbench log; "
            "pgbench's own output is far smaller",
            path=item.name,
            hint="give the text pgbench printed, or a pgbench_log.* file",
        )
    return data


def _from_utf16(item: _Input) -> _Input:
    """A UTF-16 input (PowerShell's ``>``) as the UTF-8 text it holds, in memory."""
    encoding = utf16_encoding(item.head)
    if encoding is None:
        return item
    raw = _read_all(item)
    data = raw.decode(encoding, "replace").lstrip("\ufeff").encode("utf-8")
    return _Input(item.name, None, data, data[:HEAD_BYTES], item.identity, utf16=True)


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


@_printable_errors
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
    seen: dict[tuple[Any, ...], str] = {}
    for path in paths:
        item = _open_input(path)
        name = item.name
        if item.identity in seen:
            raise ParseError(
                "the same file is given twice",
                path=name,
                hint=f"{seen[item.identity]} and {name} are one file; give each file once",
            )
        seen[item.identity] = name
        item = _from_utf16(item)
        if not item.head.strip():
            raise ParseError(
                "the input is empty", path=name, hint="give the text pgbench printed or a log file"
            )
        _refuse_binary(item.head, name)
        head_text = decode_text(item.head)
        layout = sniff_log(head_lines(head_text))
        if layout is None:
            result = _parse_output_text(decode_text(_read_all(item)), name)
            if item.utf16:
                result["notes"].append("the file is UTF-16 (as PowerShell's > writes it)")
            texts.append((name, result))
            continue
        key = (layout.kind, layout.columns)
        source = LogSource(name, path=item.path, data=item.data)
        log_groups.setdefault(key, []).append((source, layout))
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
