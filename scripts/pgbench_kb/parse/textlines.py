"""Turning pasted pgbench text into clean, numbered lines, and reading numbers from it.

pgbench output reaches us in many states: straight from a terminal, through a wrapper script
that adds its own lines, after a ``Password:`` prompt, with tabs expanded to spaces, or pasted
into a web page that lost every line break. ``prepare_lines`` undoes what can be undone and keeps
the original line number of every piece so that error messages point at the right place.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

#: A number as pgbench prints it (never negative, always a digit before the point), including
#: the ``nan``/``-nan``/``inf`` that C's printf gives for 0/0 and x/0.
NUM = r"(?:\d+(?:\.\d+)?|-?(?:nan|NaN|NAN)|inf|Inf|INF)"

_PASSWORD_PROMPT = re.compile(r"^(?:Password(?: for user [^:\s]+)?:\s*)+")

# Phrases that start a line of pgbench output. Used only to restore line breaks in text that
# lost them; a normal line holds at most one of these.
_ANCHORS = (
    r"pgbench \(\d",
    r"starting vacuum",
    r"transaction type:",
    r"scaling factor:",
    r"partition method:",
    r"partitions: \d",
    r"query mode:",
    r"number of (?:clients|threads|transactions|failed|serialization|deadlock|other)",
    r"maximum number of tries:",
    r"total number of retries:",
    r"duration: \d",
    r"zipfian cache array",
    r"latency (?:average|stddev)\s*[=:]",
    r"rate limit schedule lag:",
    r"initial connection time =",
    r"average connection time =",
    r"tps = ",
    r"progress: ",
    r"statement latencies in milliseconds",
    r"script statistics:",
    r"SQL script \d+:",
    r"- (?:weight:|\d+ transactions|number of|total number of|latency|statement latencies|"
    r"rate limit|tps)",
    r"(?:pgbench: )?(?:error|fatal|warning): ",
    r"[Cc]lient \d+ (?:script \d+ )?aborted",
    r"Run was aborted",
    r"(?:dropping old tables|creating tables|creating \d+ partitions|generating data|"
    r"vacuuming|vacuum\.\.\.(?!end)|creating primary keys|creating foreign keys|set primary keys?|"
    r"set foreign keys|done in \d|done\.)",
    r"\d+ of \d+ tuples \(",
    r"\d+ tuples done\.",
)
# Server messages, which also appear inside pgbench's own error lines after ':' or ';'.
_SERVER_MESSAGE = r"(?:WARNING|NOTICE|ERROR|FATAL):"
_ANCHOR_RE = re.compile("|".join(f"(?:{a})" for a in (*_ANCHORS, _SERVER_MESSAGE)))
# A split point is whitespace before an anchor, unless the whitespace follows ':', ',', '-' or
# '(' (then the phrase is part of the same line, e.g. "(.., tps = X)" or "error: client 3 …"),
# or, for a server message, ';'.
_SPLIT_RE = re.compile(
    r"(?<![:,(\-])\s+(?=" + "|".join(f"(?:{a})" for a in _ANCHORS) + ")"
    r"|(?<![:;,(\-])\s+(?=" + _SERVER_MESSAGE + ")"
)


@dataclass(frozen=True)
class Line:
    """One line of input: its 1-based line number in the original text and its stripped text."""

    number: int
    text: str


def num(token: str) -> float | None:
    """A printed number as a float; ``None`` for nan/inf, which JSON cannot hold."""
    value = float(token)
    if math.isnan(value) or math.isinf(value):
        return None
    return value


def count_anchors(text: str) -> int:
    """How many output-line starts ``text`` contains."""
    return sum(1 for _ in _ANCHOR_RE.finditer(text))


def split_run_together(text: str) -> list[str]:
    """Split one line that holds several output lines (lost line breaks) into its pieces."""
    return [piece.strip() for piece in _SPLIT_RE.split(text) if piece.strip()]


_LINE_START = re.compile(r"^\s*(?:[-\d]|$)")
#: Terminals wrap at 80 columns or more; shorter longest lines are not taken as wrapped.
MIN_WRAP_WIDTH = 60


def unwrap(raw_lines: list[str]) -> list[tuple[int, str]]:
    """Rejoin lines that a terminal hard-wrapped, keeping each piece's first line number.

    When two or more lines share the greatest length, the text looks wrapped at that width: such
    a line is joined with the next one when that one cannot start a line of pgbench output (no
    known phrase, number or ``-`` at its start).
    """
    width = max((len(line) for line in raw_lines), default=0)
    if sum(1 for line in raw_lines if len(line) == width) < 2:
        width = 0
    joined: list[tuple[int, str]] = []
    carry = False
    for number, line in enumerate(raw_lines, start=1):
        if carry and not _LINE_START.match(line) and not _ANCHOR_RE.match(line.strip()):
            joined[-1] = (joined[-1][0], joined[-1][1] + line)
        else:
            joined.append((number, line))
        carry = width >= MIN_WRAP_WIDTH and len(line) == width
    return joined


def prepare_lines(text: str) -> tuple[list[Line], bool, bool]:
    """Clean, numbered lines of ``text``.

    Returns ``(lines, restored, ends_cleanly)``: ``restored`` is true when some line held several
    output lines run together and was split; ``ends_cleanly`` is false when the last line has no
    line break after it (it may have been cut).
    """
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    ends_cleanly = text.endswith("\n")
    restored = False
    lines: list[Line] = []
    for number, raw in unwrap(text.split("\n")):
        stripped = _PASSWORD_PROMPT.sub("", raw.strip()).strip()
        if not stripped:
            continue
        if len(stripped) > 60 and count_anchors(stripped) >= 2:
            pieces = split_run_together(stripped)
            if len(pieces) > 1:
                restored = True
                lines.extend(Line(number, piece) for piece in pieces)
                continue
        lines.append(Line(number, stripped))
    return lines, restored, ends_cleanly
