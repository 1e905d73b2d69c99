"""Turning pasted pgbench text into clean, numbered lines, and reading numbers from it.

pgbench output reaches us in many states: straight from a terminal, through a wrapper script
that adds its own lines, after a ``Password:`` prompt, with tabs expanded to spaces, or pasted
into a web page that lost every line break. ``prepare_lines`` undoes what can be undone and keeps
the original line number of every piece so that error messages point at the right place.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import dataclass

#: A number as pgbench prints it (never negative, always a digit before the point), including
#: the ``nan``/``-nan``/``inf`` that C's printf gives for 0/0 and x/0.
NUM = r"(?:\d+(?:\.\d+)?|-?(?:nan|NaN|NAN)|inf|Inf|INF)"

_PASSWORD_PROMPT = re.compile(r"^(?:Password(?: for user [^:\s]+)?:\s*)+")

# Phrases that start a line of pgbench output, with the punctuation pgbench prints after them.
# pgbench never prints one of these after the start of a line, so a line holding one further on
# lost its line breaks (text pasted into a web page).
_LABELS = (
    r"pgbench \(\d",
    r"starting vacuum",
    r"transaction type:",
    r"scaling factor:",
    r"partition method:",
    r"partitions: \d",
    r"query mode:",
    # The label with its colon: "number of transactions (-t) or a duration" is inside a message.
    r"number of (?:clients|threads|transactions|failed|serialization|deadlock|other)[\w .]{0,45}?:",
    r"maximum number of tries:",
    r"total number of retries:",
    r"duration: \d+ s\b",
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
    r"\d+ of \d+ tuples \(",
    r"\d+ tuples done\.",
    r"done in \d+\.\d+ s",
)
# Phrases that start a line too, but that can also stand inside a line of pgbench's messages
# ("…; ERROR: …", "error: client 3 aborted …", "not done."): they split a line that lost its
# line breaks, but do not by themselves show that it lost them.
_MESSAGES = (
    r"(?:/\S*/)?pgbench(?:\.exe)?: ",
    r"(?:error|fatal|warning): ",
    r"[Cc]lient \d+ (?:script \d+ )?aborted",
    r"Run was aborted",
    r"(?:dropping old tables|creating tables|creating \d+ partitions|generating data|"
    r"vacuuming|vacuum\.\.\.(?!end)|creating primary keys|creating foreign keys|set primary keys?|"
    r"set foreign keys|done\.)",
)
_ANCHORS = (*_LABELS, *_MESSAGES)
# Server messages, which also appear inside pgbench's own error lines after ':' or ';'.
_SERVER_MESSAGE = r"(?:WARNING|NOTICE|ERROR|FATAL|DETAIL|HINT|CONTEXT|LINE \d+):"
_ANCHOR_RE = re.compile("|".join(f"(?:{a})" for a in (*_ANCHORS, _SERVER_MESSAGE)))
_LABEL_RE = re.compile("|".join(f"(?:{a})" for a in _LABELS))
# A label past a line's start, after whitespace (where a line break was lost): a quick test.
_LABEL_INSIDE_RE = re.compile(r"\s(?:" + "|".join(f"(?:{a})" for a in _LABELS) + ")")
# A split point is whitespace before an anchor, unless the whitespace follows ':', ',', '-' or
# '(' (then the phrase is part of the same line, e.g. "(.., tps = X)" or "error: client 3 …"),
# or, for a server message, ';'.
_SPLIT_RE = re.compile(
    r"(?<![:,(\-])\s+(?=" + "|".join(f"(?:{a})" for a in _ANCHORS) + ")"
    r"|(?<![:;,(\-])\s+(?=" + _SERVER_MESSAGE + ")"
)
# How a line that pgbench, libpq or the server prints may begin besides the anchors above: a
# program's name and colon (``pgbench:``, ``/usr/lib/postgresql/15/bin/pgbench:``, ``psql:``),
# a client's message before 15 (``client 0 sending …``), a field of a server message
# (``LINE 1:``, ``DETAIL:``, ``HINT:``…), getopt's ``Try "pgbench --help"`` and a password prompt.
_MESSAGE_START_RE = re.compile(
    r"(?:\S*[/\\])?(?:pgbench|psql)(?:\.exe)?: |[Cc]lient \d+ |Try \"|Password|"
    r"(?:ERROR|FATAL|PANIC|WARNING|NOTICE|INFO|LOG|DEBUG|DETAIL|HINT|CONTEXT|QUERY|STATEMENT|"
    r"LOCATION|LINE \d+):"
)


@dataclass(frozen=True)
class Line:
    """One line of input: its 1-based line number in the original text and its stripped text."""

    number: int
    text: str


#: pgbench prints counts as int64 (at most 19 digits) and figures with printf's %f family; a
#: number with more digits before its point is damaged input, never something pgbench wrote.
INT64_MAX = 2**63 - 1
MAX_DIGITS = 19
#: How much of a piece of input an error message quotes.
QUOTE_LIMIT = 200
_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def printable(text: str) -> str:
    """``text`` with control characters (ESC, NUL, \\v, \\f, line breaks…) written as escapes,
    so that a message quoting input stays one readable line on a terminal."""
    return _UNPRINTABLE.sub(lambda m: f"\\x{ord(m[0]):02x}", text)


def quote(text: str, limit: int = QUOTE_LIMIT) -> str:
    """A piece of input for an error message: printable, cut to ``limit`` characters, quoted."""
    if len(text) > limit:
        text = text[:limit] + "…"
    return f"'{printable(text)}'"


class BadValue(ValueError):
    """A number on a line pgbench prints that is in a form pgbench never prints.

    Raised by the converters below; the reader that knows the line turns it into a ParseError.
    """

    def __init__(self, value: str, field: str | None = None, reason: str | None = None) -> None:
        self.value = value
        self.field = field
        self.reason = reason or f"{quote(value, 60)} is not a number pgbench prints"
        super().__init__(self.reason)

    @property
    def hint(self) -> str:
        """How to fix it, guessed from the value's shape."""
        again = "paste the output as pgbench printed it"
        value = self.value
        if re.search(r"\d,\d", value):
            return f"a thousands separator? {again}"
        if value.startswith("-") and any(c.isdigit() for c in value):
            return f"pgbench prints no negative number there; {again}"
        if re.search(r"\d[eE][-+]?\d", value):
            return f"pgbench prints no exponents; {again}"
        if sum(c.isdigit() for c in value) > MAX_DIGITS:
            return f"the line looks damaged; {again}"
        return again


def _too_long(digits: str, value: str, field: str | None) -> BadValue:
    return BadValue(
        value,
        field,
        f"{quote(value, 40)} has {len(digits)} digits before its point, more than any number "
        f"pgbench prints ({MAX_DIGITS})",
    )


def to_int(token: str, field: str | None = None) -> int:
    """A printed count (digits only) as an int; ``BadValue`` beyond what int64 can hold."""
    if len(token) > MAX_DIGITS:
        raise _too_long(token, token, field)
    value = int(token)
    if value > INT64_MAX:
        raise BadValue(
            token, field, f"'{token}' is larger than any count pgbench prints (a 64-bit integer)"
        )
    return value


def num(token: str, field: str | None = None) -> float | None:
    """A printed number as a float; ``None`` for nan/inf, which JSON cannot hold.

    ``BadValue`` for a number with more digits before its point than pgbench ever prints.
    """
    whole = token.split(".", 1)[0]
    if len(whole) > MAX_DIGITS and whole.isdigit():
        raise _too_long(whole, token, field)
    value = float(token)
    if math.isnan(value) or math.isinf(value):
        return None
    return value


#: What a value of each kind must look like.
_VALID = {
    "int": re.compile(r"\d{1,19}"),
    "num": re.compile(r"\d{1,19}(?:\.\d+)?|-?(?:nan|NaN|NAN)|inf|Inf|INF"),
}
#: A value in a loose pattern: anything up to a space, '/', a parenthesis or '%'.
_LOOSE_VALUE = r"[^\s/()%]+"


class LinePattern:
    """A pgbench output line with numbers in it, read strictly, with a loose twin for errors.

    ``template`` is a regular expression in which ``{I}`` stands for a captured count, ``{N}``
    for a captured number (``NUM``) and ``{n}`` for a number that is not captured. ``fields``
    names the captured numbers, in order. ``match`` reads a line as pgbench prints it;
    ``bad_value`` says, for a line that ``match`` refused, whether it is this line with a value
    pgbench never prints in it (``1,000``, ``-4``, ``1e309``…).
    """

    def __init__(self, template: str, *fields: str) -> None:
        kinds = re.findall(r"\{([IN])\}", template)
        if len(kinds) != len(fields):
            raise ValueError(f"{template}: {len(kinds)} numbers, {len(fields)} field names")
        self.fields = fields
        self.kinds = tuple("int" if k == "I" else "num" for k in kinds)
        strict = template.replace("{I}", r"(\d+)").replace("{N}", f"({NUM})").replace("{n}", NUM)
        self.regex = re.compile(strict)
        #: The strict match: the line as pgbench prints it.
        self.match = self.regex.match
        # The loose twin ignores what follows the line's end: "number of clients: 1,000 (x)"
        # is still the clients line with a bad number.
        loose, index = template.removesuffix("$").replace("{n}", _LOOSE_VALUE), 0
        while "{I}" in loose or "{N}" in loose:
            at = min(i for i in (loose.find("{I}"), loose.find("{N}")) if i >= 0)
            loose = f"{loose[:at]}(?P<v{index}>{_LOOSE_VALUE}){loose[at + 3 :]}"
            index += 1
        self.loose = re.compile(loose)

    def bad_value(self, text: str) -> BadValue | None:
        """The malformed value in ``text`` when it is this line with a bad number, else None."""
        m = self.loose.match(text)
        if m is None:
            return None
        for index, (kind, field) in enumerate(zip(self.kinds, self.fields, strict=True)):
            value = m.group(f"v{index}")
            if value is not None and not _VALID[kind].fullmatch(value):
                if value.isdigit():
                    return _too_long(value, value, field)
                return BadValue(value, field)
        return None


#: A stretch of characters a number is written with (digits, point, separators, exponent, signs).
_NUMBER_RUN = re.compile(r"[\d.,eE+-]++")


def _is_word(char: str) -> bool:
    return char.isalnum() or char == "_"


def _run_tokens(text: str, start: int, end: int) -> Iterator[str]:
    r"""The number tokens in ``text[start:end]``, a maximal stretch of ``_NUMBER_CHARS``.

    A token starts at a digit (or a sign before one) that follows no word character and no
    point, and is either the longest stretch from there that ends in a digit followed by no
    word character, or one digit followed by neither a word character nor a point. This is
    what ``(?<![\w.])[-+]?\d[\d.,eE+-]*\d(?!\w)|(?<![\w.])[-+]?\d(?![\w.])`` finds with
    ``finditer``, but in time linear in the stretch's length: that pattern backtracked from
    every start to the end of the stretch (regression #33, attack 6: a ``progress:`` line of
    repeated ``1e,`` ending in ``x`` took 13 s at 60 KiB, an hour at 1 MiB).
    """
    after = text[end] if end < len(text) else ""
    # Where a token may end: a digit followed by no word character. The longest token from any
    # start ends at the last such digit, the same for every start in the stretch.
    last_end = -1
    for i in range(end - 1, start - 1, -1):
        if text[i].isdecimal():
            following = text[i + 1] if i + 1 < end else after
            if not following or not _is_word(following):
                last_end = i
                break
    i = start
    while i < end:
        before = text[i - 1] if i > 0 else ""
        if before and (_is_word(before) or before == "."):
            i += 1
            continue
        digit = i + 1 if text[i] in "+-" else i
        if digit >= end or not text[digit].isdecimal():
            i += 1
            continue
        if last_end > digit:
            yield text[i : last_end + 1]
            i = last_end + 1
            continue
        following = text[digit + 1] if digit + 1 < end else after
        if not following or not (_is_word(following) or following == "."):
            yield text[i : digit + 1]
            i = digit + 1
            continue
        i += 1


def number_tokens(text: str) -> Iterator[str]:
    """Every number-like token of ``text``, in order (see ``_run_tokens``)."""
    for m in _NUMBER_RUN.finditer(text):
        yield from _run_tokens(text, m.start(), m.end())


def first_bad_number(text: str, field: str | None = None) -> BadValue | None:
    """The first number in ``text`` written in a form pgbench never prints, if any."""
    for value in number_tokens(text):
        if not _VALID["num"].fullmatch(value):
            if value.isdigit():
                return _too_long(value, value, field)
            return BadValue(value, field)
    return None


def split_run_together(text: str) -> list[str]:
    """Split one line that holds several output lines (lost line breaks) into its pieces."""
    return [piece.strip() for piece in _SPLIT_RE.split(text) if piece.strip()]


#: A raw line that a wrapped line is never continued by: an empty one, an indented number or
#: ``-`` (a statement line, a block line of a ``SQL script N:`` report), or one starting ``-``.
_NOT_CONTINUATION = re.compile(r"^(?:\s*$|\s+[-\d]|-)")
#: Terminals wrap at 80 columns or more; shorter longest lines are not taken as wrapped.
MIN_WRAP_WIDTH = 60
#: A single line at the greatest length is taken as wrapped only at a terminal's width or more.
MIN_SINGLE_WRAP_WIDTH = 80
_ENDS_IN_NUMBER = re.compile(r"\d\.?$")
_STARTS_IN_NUMBER = re.compile(r"\.?\d")
#: Characters no line of pgbench's output starts with: a line that does was cut from the one
#: before it (``…vacuum 0.15 s`` / ``, primary keys 0.08 s).``).
_NEVER_STARTS = frozenset(",;.)]}")


def starts_line(text: str) -> bool:
    """True when ``text`` (a raw line) can be the start of a line pgbench, libpq or the server
    prints: empty, an indented number or ``-``, a known phrase, or a message's prefix."""
    return bool(
        _NOT_CONTINUATION.match(text)
        or _ANCHOR_RE.match(text.strip())
        or _MESSAGE_START_RE.match(text)
    )


def breaks_a_word(line: str, following: str) -> bool:
    """True when ``following`` carries on the word or number that ``line`` ends with: a letter
    or digit on both sides of the break (or a number's point), and ``following`` is no line of
    its own; or ``following`` starts with a character no line starts with (``,``, ``)``…). This
    is what a terminal's hard wrap leaves (``…abalance + :d`` / ``elta WHERE …``, ``…lat 0.5`` /
    ``13 ms stddev…``) and what whole lines never show."""
    if not line or not following:
        return False
    if _ENDS_IN_NUMBER.search(line) and _STARTS_IN_NUMBER.match(following):
        return not _ANCHOR_RE.match(following)
    if following[0] in _NEVER_STARTS and not line[-1].isspace():
        return True
    return line[-1].isalnum() and following[0].isalnum() and not starts_line(following)


def wrap_width(raw_lines: list[str]) -> int:
    """The width ``raw_lines`` were hard-wrapped at by a terminal, or 0 when they were not.

    Text counts as wrapped at width W only when the input shows it: W is the greatest line
    length, at least ``MIN_WRAP_WIDTH``, and a line of that length breaks a word or number in
    two (``breaks_a_word``); a single line at W counts only when W is a terminal's width
    (``MIN_SINGLE_WRAP_WIDTH`` or more). Lines of equal length alone are no sign of wrapping:
    pgbench prints many messages that differ only in a client number.
    """
    width = max((len(line) for line in raw_lines), default=0)
    if width < MIN_WRAP_WIDTH:
        return 0
    at_width = [i for i, line in enumerate(raw_lines) if len(line) == width]
    if len(at_width) < 2 and width < MIN_SINGLE_WRAP_WIDTH:
        return 0
    last = len(raw_lines) - 1
    if any(i < last and breaks_a_word(raw_lines[i], raw_lines[i + 1]) for i in at_width):
        return width
    return 0


def unwrap(raw_lines: list[str]) -> list[tuple[int, str]]:
    """Rejoin lines that a terminal hard-wrapped, keeping each piece's first line number.

    Nothing is joined unless ``wrap_width`` finds the text wrapped. Then a line of that width is
    joined with the next one when that one cannot start a line of its own (``starts_line``).
    """
    width = wrap_width(raw_lines)
    if not width:
        return list(enumerate(raw_lines, start=1))
    joined: list[tuple[int, str]] = []
    carry = False
    for number, line in enumerate(raw_lines, start=1):
        if carry and not starts_line(line):
            joined[-1] = (joined[-1][0], joined[-1][1] + line)
        else:
            joined.append((number, line))
        carry = len(line) == width
    return joined


def holds_several_lines(text: str) -> list[str] | None:
    """The output lines in ``text`` when it is several lines run together, else None.

    A line is split only when it shows that it lost its line breaks: past its start it holds a
    phrase that pgbench prints only at the start of a line, with its punctuation
    (``scaling factor:``, ``tps = ``, ``number of clients:``…). A message such as ``specify
    either a number of transactions (-t) or a duration (-T), not both`` is whole and stays so.
    """
    if len(text) <= 60 or not _LABEL_INSIDE_RE.search(text):
        return None
    pieces = split_run_together(text)
    if len(pieces) > 1 and any(_LABEL_RE.match(piece) for piece in pieces[1:]):
        return pieces
    return None


#: The longest line of text output read, in characters. A line pgbench prints is under 200
#: characters but for text it repeats: one line of a script (``-r``'s statement lines) or a
#: server's message. 64 KiB holds those, and a whole summary whose line breaks were lost (some
#: 700 progress lines); a longer line is refused before any pattern reads it (regression #33,
#: attack 6: a 1 MiB hostile line must be refused in well under a second).
MAX_LINE_CHARS = 64 * 1024


def first_long_line(text: str, limit: int = MAX_LINE_CHARS) -> tuple[int, int] | None:
    """(1-based number, length) of the first line of ``text`` longer than ``limit``, or None;
    in time linear in ``text``'s length (a line ends at ``\n``, ``\r\n`` or ``\r``)."""
    if len(text) <= limit:
        return None
    number, start = 1, 0
    for m in re.finditer(r"\r\n?|\n", text):
        if m.start() - start > limit:
            return number, m.start() - start
        number, start = number + 1, m.end()
    if len(text) - start > limit:
        return number, len(text) - start
    return None


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
        pieces = holds_several_lines(stripped)
        if pieces is not None:
            restored = True
            lines.extend(Line(number, piece) for piece in pieces)
            continue
        lines.append(Line(number, stripped))
    return lines, restored, ends_cleanly
