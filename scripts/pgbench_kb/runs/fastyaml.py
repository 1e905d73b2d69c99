"""A fast reader for the YAML that ``kb import`` writes, with the full loader as the fallback.

Run files are written by one dumper (block style, two-space indents, sequences not indented
under their key, text quoted whenever YAML could read it as anything else). Reading 10,000 of
them with a general YAML loader costs over a millisecond each; this reader handles exactly
that canonical subset line by line and gives up (returns ``None``) on anything else, such as
a double-quoted or literal-block string, a flow collection other than ``[]`` or ``{}``, an
anchor, a tag, a duplicate key, a tab, a document marker, nesting deeper than the full
loader allows, a scalar YAML 1.1 could read as an octal, a special float or a figure too long
to be one, or a plain scalar continued across a blank or comment line. Its one caller,
``runs.runfile.read_run``, then loads the file with the full loader
(``runs.yamlsafe.load_yaml_text``), which also reports any real error with its line.

``fast_load_lines`` also gives the line of every key and list item, exactly the map the full
loader builds (``Loaded.lines``), so ``kb check`` places its findings at the same lines.

The rule is that whatever this reader accepts, the full loader reads to the same data (types
included) and lines: tests/runs/test_fastyaml_exact.py checks it on every YAML file in the
repository, on synthetic run files, on hand-written tricky files and on randomly mutated
ones; tests/analyze/test_fastyaml.py on the analysis side; tests/runs/test_read_run.py holds
``read_run`` to plain ``yaml.safe_load`` on every shipped run file.
"""

from __future__ import annotations

import functools
import re
from typing import Any

import yaml

from pgbench_kb.runs.yamlsafe import MAX_DEPTH, MAX_NUMBER_CHARS, Loaded

_KEY = re.compile(r"([A-Za-z_][A-Za-z0-9_.\-]*):(?: (.*))?$")
_INT = re.compile(r"-?(?:0|[1-9][0-9]*)$")
_FLOAT = re.compile(r"-?(?:0|[1-9][0-9]*)\.[0-9]+$")
_PLAIN_DECIMAL = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?")
# First characters with which a plain scalar could be read as something other than text.
_RISKY_FIRST = frozenset("yYnNtTfFoO-+0123456789.<~=!&*|>%@`\"[]{},#?:'")
_NEVER_PLAIN = frozenset('!&*|>%@`"[]{},#?:')
_RESOLVER = yaml.resolver.Resolver()
_STR = "tag:yaml.org,2002:str"
_TIMESTAMP = "tag:yaml.org,2002:timestamp"
_NULL = "tag:yaml.org,2002:null"
_BOOL = "tag:yaml.org,2002:bool"
_INT_TAG = "tag:yaml.org,2002:int"
_FLOAT_TAG = "tag:yaml.org,2002:float"
# Characters either YAML reader refuses or treats as a line break (CR, NEL, U+2028/9), the
# byte-order mark inside the text (YAML readers disagree on it), and the tab (YAML reads it as a
# separator in places this reader does not look: ``key:<TAB>value`` is a key and its value).
_GIVE_UP_CHARS = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff]")
#: A simple key longer than this is no key to YAML (its limit is 1024 characters).
_MAX_KEY_CHARS = 1000
_SEQ = 1
_LINE = 0
#: (indent, kind, content, key, value): a line's content with ``_line``'s reading of it, or a
#: ``- `` (kind _SEQ, the rest None).
_Token = tuple[int, int, str, Any, Any]


class _GiveUp(Exception):
    pass


@functools.lru_cache(maxsize=1 << 16)
def _raw_line(raw: str) -> tuple[int, bool, str, tuple[_Token, ...]]:
    """(indent, starts a sequence item, key name, tokens) of one line; cached, since the same
    lines recur in every run file. Blank and comment lines have no tokens. A token's indent is
    the column where its content starts, so ``-  x`` (two spaces) is seen as irregular; a
    line's token carries its key and value as ``_line`` reads them. Checking each distinct
    line for characters to give up on (rather than the whole text each time) is the cache's
    other saving."""
    if _GIVE_UP_CHARS.search(raw):
        raise _GiveUp
    stripped = raw.lstrip(" ")
    if not stripped or stripped[0] == "#":
        return 0, False, "", ()
    indent = len(raw) - len(stripped)
    if indent == 0 and stripped.startswith(("---", "...")):
        raise _GiveUp  # a document marker, or text the full loader may read as one
    tokens = []
    content = stripped.rstrip(" ")
    level = indent
    while content.startswith("- ") or content == "-":
        tokens.append((level, _SEQ, "", None, None))
        rest = content[1:]
        content = rest.lstrip(" ")
        level += 1 + len(rest) - len(content)
        if not content:
            break
    if content:
        tokens.append((level, _LINE, content, *_line(content)))
    seq = stripped.startswith("-")
    return indent, seq, "" if seq else stripped.split(":", 1)[0], tuple(tokens)


def _tokens(text: str, skip: frozenset[str]) -> tuple[list[_Token], list[int]]:
    """(indent, kind, content, key, value) per line and the line number (1-based) of each;
    ``- `` opens a sequence item one level deeper. Keys in ``skip`` (``top`` or
    ``top.second``) are left out with everything under them."""
    tokens: list[_Token] = []
    numbers: list[int] = []
    if not skip:
        for number, raw in enumerate(text.split("\n"), 1):
            line_tokens = _raw_line(raw)[3]
            if line_tokens:
                tokens += line_tokens
                if len(line_tokens) == 1:
                    numbers.append(number)
                else:
                    numbers += [number] * len(line_tokens)
        return tokens, numbers
    top = ""
    skipping = -1
    for number, raw in enumerate(text.split("\n"), 1):
        indent, seq, name, line_tokens = _raw_line(raw)
        if not line_tokens:
            continue
        if skipping >= 0:
            if indent > skipping or (indent == skipping and seq):
                continue
            skipping = -1
        if skip and indent <= 2 and not seq:
            if indent == 0:
                top = name
            dotted = name if indent == 0 else f"{top}.{name}"
            if dotted in skip:
                skipping = indent
                continue
        tokens += line_tokens
        if len(line_tokens) == 1:
            numbers.append(number)
        else:
            numbers += [number] * len(line_tokens)
    return tokens, numbers


def scalar(text: str) -> Any:
    """A plain or single-quoted scalar of the canonical form, or _GiveUp."""
    if text.startswith("'"):
        if len(text) < 2 or not text.endswith("'"):
            raise _GiveUp
        inner = text[1:-1]
        if "'" in inner.replace("''", ""):
            raise _GiveUp
        return inner.replace("''", "'")
    if " #" in text or ": " in text or text.endswith(":"):
        raise _GiveUp
    if text[0] not in _RISKY_FIRST:
        return text
    if text == "[]":
        return []
    if text == "{}":
        return {}
    if text[0] in _NEVER_PLAIN or text == "-" or text.startswith("- "):
        raise _GiveUp
    if len(text) <= MAX_NUMBER_CHARS and _PLAIN_DECIMAL.fullmatch(text):
        # What the full loader's resolver reads as int or float without asking YAML's.
        return float(text) if "." in text else int(text)
    # The full loader's own resolver decides what the text is; only its simplest answers are
    # taken here.
    tag = _tag(text)
    if tag in (_STR, _TIMESTAMP):
        return text
    if tag == _NULL:
        return None
    if tag == _BOOL:
        return yaml.constructor.SafeConstructor.bool_values[text.lower()]
    if len(text) > MAX_NUMBER_CHARS:
        raise _GiveUp  # the full loader refuses it: no figure is that long
    if tag == _INT_TAG and _INT.match(text):
        return int(text)
    if tag == _FLOAT_TAG and _FLOAT.match(text):
        return float(text)
    raise _GiveUp


@functools.lru_cache(maxsize=65536)
def _tag(text: str) -> str:
    return _RESOLVER.resolve(yaml.ScalarNode, text, (True, False))


@functools.lru_cache(maxsize=4096)
def _text_key(key: str) -> bool:
    """Whether a plain key reads as text (``on:`` or ``1:`` would not)."""
    return key[0] not in _RISKY_FIRST or _tag(key) == _STR


_EMPTY_LIST = object()
_EMPTY_MAP = object()
_NOT_KEY = object()


def _fresh(value: Any) -> Any:
    if value is _EMPTY_LIST:
        return []
    if value is _EMPTY_MAP:
        return {}
    return value


def _line(content: str) -> tuple[Any, Any]:
    """(key, value) of a ``key: value`` line (value _NOT_KEY for ``key:`` alone), or
    (_NOT_KEY, scalar) for a scalar line; (None, None) when outside the subset. Called once per
    distinct line (``_raw_line`` is cached)."""
    try:
        match = _KEY.match(content)
        if match is None:
            return _NOT_KEY, _value(content)
        key, rest = match.group(1), match.group(2)
        if not _text_key(key) or len(key) > _MAX_KEY_CHARS or (rest and rest[0] == " "):
            return None, None
        return key, (_value(rest) if rest else _NOT_KEY)
    except _GiveUp:
        return None, None


def _value(text: str) -> Any:
    """The scalar of ``text`` (frozen), or an ``_Open`` for a single-quoted one that goes on
    to the next lines."""
    if text.startswith("'") and "'" not in text[1:].replace("''", ""):
        return _Open(text[1:])
    return _frozen(scalar(text))


class _Open:
    """The first line of a single-quoted scalar that continues on the next lines (the dumper
    writes long quoted text that way): the text after the opening quote."""

    __slots__ = ("head",)

    def __init__(self, head: str) -> None:
        self.head = head


def _frozen(value: Any) -> Any:
    """A shared stand-in for an empty list or mapping (the value is cached, the data not)."""
    if value.__class__ is list:
        return _EMPTY_LIST
    if value.__class__ is dict:
        return _EMPTY_MAP
    return value


class _Reader:
    """Reads the tokens into data. When ``lines`` is a dict, it is filled as the full loader
    fills ``Loaded.lines``: a key's line for each key (a later key of the same dotted name
    wins), the line where an item starts for each list item (the first one wins), and the
    line where the document starts for ``""``. The loops keep the position in a local
    variable and hand it over in ``self.i`` around each nested read (they run ~250 times a
    file)."""

    def __init__(
        self, tokens: list[_Token], numbers: list[int], lines: dict[str, int] | None
    ) -> None:
        self.tokens = tokens
        self.numbers = numbers
        self.lines = lines
        self.n = len(tokens)
        self.i = 0

    def node(self, indent: int, prefix: str, depth: int) -> Any:
        """The mapping, sequence or scalar that starts at the current token."""
        tok_indent, kind, content, key, value = self.tokens[self.i]
        if tok_indent != indent:
            raise _GiveUp
        if kind == _SEQ:
            return self.sequence(indent, prefix, depth)
        if key is None:
            raise _GiveUp
        if key is not _NOT_KEY:
            return self.mapping(indent, prefix, depth)
        self.i += 1
        if value.__class__ is _Open:
            value = self.quoted(value.head, indent - 1)
        return self.folded(_fresh(value), indent - 1, content)

    def quoted(self, head: str, owner_indent: int) -> str:
        """A single-quoted scalar over several lines: each line follows the one before it
        directly (a blank line would be a line break, and a comment line is text here, which
        the tokens have lost) and is indented deeper than its key; line breaks fold into
        spaces, ``''`` is a quote, and the line whose last quote is not doubled ends it."""
        parts = [head]
        while True:
            if self.i >= self.n:
                raise _GiveUp
            tok_indent, kind, content, _, _ = self.tokens[self.i]
            if tok_indent <= owner_indent or kind == _SEQ:
                raise _GiveUp
            if self.numbers[self.i] != self.numbers[self.i - 1] + 1:
                raise _GiveUp
            self.i += 1
            if "'" not in content.replace("''", ""):
                parts.append(content)
                continue
            if content.endswith("'") and "'" not in content[:-1].replace("''", ""):
                parts.append(content[:-1])
                return " ".join(parts).replace("''", "'")
            raise _GiveUp

    def folded(self, value: Any, owner_indent: int, first: str) -> Any:
        """Continuation lines of a plain scalar (indented deeper than its key) fold into it:
        each must follow the line before it directly (a blank line would be a line break, a
        comment line would end the scalar) and be plain text."""
        parts = None
        while self.i < self.n:
            tok_indent, kind, content, _, _ = self.tokens[self.i]
            if tok_indent <= owner_indent or kind == _SEQ:
                break
            if not isinstance(value, str) or first.startswith("'"):
                raise _GiveUp
            if self.numbers[self.i] != self.numbers[self.i - 1] + 1:
                raise _GiveUp
            if content[0] in _NEVER_PLAIN or content.endswith(":"):
                raise _GiveUp
            if _KEY.match(content) or " #" in content or ": " in content:
                raise _GiveUp
            parts = parts or [value]
            parts.append(content)
            self.i += 1
        if not parts:
            return value
        joined = " ".join(parts)
        if _tag(joined) not in (_STR, _TIMESTAMP):
            raise _GiveUp
        return joined

    def mapping(self, indent: int, prefix: str, depth: int) -> dict[str, Any]:
        if depth >= MAX_DEPTH:
            raise _GiveUp  # its values would be deeper than the full loader allows
        tokens, numbers, lines, n = self.tokens, self.numbers, self.lines, self.n
        result: dict[str, Any] = {}
        i = self.i
        dotted = ""
        while i < n:
            tok_indent, kind, content, key, value = tokens[i]
            if tok_indent != indent or kind == _SEQ:
                if tok_indent < indent:
                    break
                raise _GiveUp
            if key is None or key is _NOT_KEY or key in result:
                raise _GiveUp
            if lines is not None:
                dotted = f"{prefix}.{key}" if prefix else key
                lines[dotted] = numbers[i]
            i += 1
            if value is not _NOT_KEY:
                if value is _EMPTY_LIST:
                    value = []
                elif value is _EMPTY_MAP:
                    value = {}
                elif value.__class__ is _Open:
                    self.i = i
                    value = self.quoted(value.head, indent)
                    i = self.i
                if i < n and tokens[i][0] > indent:
                    self.i = i
                    value = self.folded(value, indent, content.partition(": ")[2])
                    i = self.i
                result[key] = value
                continue
            if i < n:
                next_indent, next_kind, _, _, _ = tokens[i]
                if next_indent > indent:
                    self.i = i
                    result[key] = self.node(next_indent, dotted, depth + 1)
                    i = self.i
                    continue
                if next_indent == indent and next_kind == _SEQ:
                    self.i = i
                    result[key] = self.sequence(indent, dotted, depth + 1)
                    i = self.i
                    continue
            result[key] = None
        self.i = i
        return result

    def sequence(self, indent: int, prefix: str, depth: int) -> list[Any]:
        if depth >= MAX_DEPTH:
            raise _GiveUp
        tokens, numbers, lines, n = self.tokens, self.numbers, self.lines, self.n
        items: list[Any] = []
        i = self.i
        dotted = ""
        while i < n:
            tok_indent, kind, _, _, _ = tokens[i]
            if tok_indent != indent or kind != _SEQ:
                if tok_indent > indent:
                    raise _GiveUp
                break
            if lines is not None:
                dotted = f"{prefix}.{len(items)}" if prefix else str(len(items))
            i += 1
            if i >= n or tokens[i][0] <= indent:
                if lines is not None:
                    lines.setdefault(dotted, numbers[i - 1])
                items.append(None)
                continue
            if lines is not None:
                lines.setdefault(dotted, numbers[i])
            tok_indent, kind, _, key, value = tokens[i]
            if (
                key is _NOT_KEY
                and tok_indent == indent + 2
                and value.__class__ is not _Open
                and (i + 1 >= n or tokens[i + 1][0] <= indent + 1)
            ):
                # A one-line scalar item, what ``node`` would read (long progress series are
                # thousands of them): taken here without the calls.
                items.append(_fresh(value))
                i += 1
                continue
            self.i = i
            items.append(self.node(indent + 2, dotted, depth + 1))
            i = self.i
        self.i = i
        return items


def _read(text: str, skip: frozenset[str], lines: dict[str, int] | None) -> Any | None:
    try:
        tokens, numbers = _tokens(text.removeprefix("\ufeff"), skip)
        if not tokens or (tokens[0][1] == _LINE and _KEY.match(tokens[0][2]) is None):
            return None  # nothing, or a document that is one scalar
        if lines is not None:
            lines[""] = numbers[0]
        reader = _Reader(tokens, numbers, lines)
        data = reader.node(tokens[0][0], "", 0)
        if reader.i != len(tokens):
            return None
        return data
    except (_GiveUp, IndexError, RecursionError):
        return None


def fast_load(text: str, skip: frozenset[str] = frozenset()) -> Any | None:
    """The data of a canonical run file, or None when the text is outside the subset. Keys
    named in ``skip`` (a top-level key, or ``top.second``) are left out unread."""
    return _read(text, skip, None)


def fast_load_lines(text: str) -> Loaded | None:
    """The data of a canonical run file and the line of each key and item (what
    ``yamlsafe.load_yaml_text`` gives for the same text), or None when the text is outside the
    subset."""
    lines: dict[str, int] = {}
    data = _read(text, frozenset(), lines)
    return None if data is None else Loaded(data, lines)
