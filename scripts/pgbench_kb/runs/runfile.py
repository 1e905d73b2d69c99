"""Run files on disk: safe loading with line numbers, stable dumping, and atomic, no-overwrite
writes. What a run file must contain is the schema's business (``schema.py``); this module only
moves them between disk and memory without losing anything.

Loading is deliberately stricter than YAML: one document; no anchors or aliases (they would let a
small file expand into a huge one); no duplicate keys; only text keys; no tabs in indentation;
dates and times stay text (``2006-06-01`` is read as the string, as the schema expects); files
larger than ``MAX_FILE_BYTES`` are refused before parsing. Files in the exact form ``dump_run``
writes are read faster by ``runs/fastyaml.py``, to the same data and lines (``Loaded``).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import math
import os
import re
import signal
import stat
import tempfile
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import IO, Any

import yaml

from pgbench_kb.errors import RunFileError

RUNS_DIR = Path("data/runs")
RAW_DIR = Path("data/raw")
HARDWARE_DIR = Path("content/hardware")
SCHEMA_VERSION = 1
MAX_FILE_BYTES = 4 * 2**20
#: Raw pgbench text output kept with a run. A day of ``-P 1`` progress lines is about 6 MB;
#: the output is shown whole on the run's page, so more is refused.
MAX_RAW_OUTPUT_BYTES = 8 * 2**20
#: One pgbench --log file as given to ``kb import --log``, one raw file of any other kind as
#: stored, and all the transaction logs of one run once ``kb check`` unpacked them, together
#: (about ten million transactions).
MAX_LOG_BYTES = 512 * 2**20
#: A gzip raw file that unpacks to more than this many times its size is refused (pgbench's
#: logs pack about 4 to 1; a file of repeated bytes packs a thousand to 1).
MAX_GZIP_RATIO = 50
#: Unpacked bytes a gzip file may hold whatever its ratio (a tiny log packs worse).
GZIP_RATIO_FLOOR = 2**20
MAX_DEPTH = 32
#: A number written with more characters than this is not a figure (and Python refuses to
#: convert integers of more than 4300 digits anyway).
MAX_NUMBER_CHARS = 40

HEADER = (
    "# pgbench-kb run file (schema_version {version}). Written once by `kb import`;\n"
    "# the format is described in docs/data-format.md. Check with `kb check PATH`.\n"
)

_TAB_INDENT = re.compile(r"^ *\t", re.M)


class ValueRefusedError(RunFileError):
    """A YAML value that reads but is no figure: a non-finite number, or one far too long."""


@dataclass
class Loaded:
    """A YAML document and the line (1-based) where each dotted key path starts."""

    data: Any
    lines: dict[str, int] = field(default_factory=dict)

    def line_of(self, dotted: str) -> int | None:
        """The line of ``dotted`` or of its nearest parent that has one."""
        while dotted:
            if dotted in self.lines:
                return self.lines[dotted]
            dotted = dotted.rpartition(".")[0]
        return self.lines.get("")


class _PyLoader(yaml.SafeLoader):
    """Safe loading in pure Python that keeps timestamps as text."""


class _CLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """The same with libyaml, when available: several times faster."""


_NULL_TAG_ = "tag:yaml.org,2002:null"
_STR_TAG_ = "tag:yaml.org,2002:str"
# First characters with which a plain scalar can be anything but text (bool, int, float,
# merge, null, timestamp, value); everything else resolves to text without trying regexes.
_MAYBE_NOT_TEXT = frozenset("yYnNtTfFoO-+0123456789.<~=")
# Plain decimals YAML 1.1 reads as int or float (no leading zero: 012 is octal there).
_PLAIN_DECIMAL = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?")


def _fast_resolve(self: Any, kind: Any, value: Any, implicit: Any) -> str:
    """``resolve`` with a shortcut for the common plain scalars (same answers, less work)."""
    if kind is yaml.ScalarNode and implicit[0]:
        if value == "null":
            return _NULL_TAG_
        if value and value[0] not in _MAYBE_NOT_TEXT:
            return _STR_TAG_
        if _PLAIN_DECIMAL.fullmatch(value):
            return _INT_TAG if "." not in value else _FLOAT_TAG
    return yaml.resolver.Resolver.resolve(self, kind, value, implicit)


def _construct_text(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> str:
    return loader.construct_scalar(node)


for _cls in (_PyLoader, _CLoader):
    _cls.add_constructor("tag:yaml.org,2002:timestamp", _construct_text)
    _cls.resolve = _fast_resolve  # type: ignore[method-assign]

_STR_TAG = "tag:yaml.org,2002:str"
_DEEP_SEQUENCE = re.compile(r"(?:-[ ]+){16}")


def _might_nest_deeply(text: str) -> bool:
    """True when the text could nest deeper than libyaml's C stack survives.

    libyaml composes recursively in C and crashes on ~100,000 levels; the pure-Python loader
    raises ``RecursionError`` instead, which is caught. Flow brackets and compact ``- - -``
    sequences are the only ways to nest deeply within the size limit, so only texts with many
    of them take the slow path.
    """
    brackets = text.count("[") + text.count("{")
    return brackets > 2 * MAX_DEPTH or _DEEP_SEQUENCE.search(text) is not None


_INT_TAG = "tag:yaml.org,2002:int"
_FLOAT_TAG = "tag:yaml.org,2002:float"
_BOOL_TAG = "tag:yaml.org,2002:bool"
_NULL_TAG = "tag:yaml.org,2002:null"
_TIME_TAG = "tag:yaml.org,2002:timestamp"
_PLAIN_INT = re.compile(r"[-+]?(?:0|[1-9][0-9]*)")


class _Builder:
    """Builds the Python value of a composed node tree in one pass, recording key lines.

    It refuses what run files must not contain: aliases (an alias is the very node object its
    anchor made, so a node met twice is one; it is reported at the line of the key or item that
    refers to it), merge keys, non-text and duplicate keys, and nesting deeper than MAX_DEPTH.
    Scalars of the core tags are built directly; any other tag goes to the safe constructor.
    """

    def __init__(self, loader: Any, path: str) -> None:
        self.loader = loader
        self.path = path
        self.lines: dict[str, int] = {}
        self.seen: set[int] = set()

    def fail(self, message: str, line: int, field: str | None, hint: str | None = None) -> None:
        raise RunFileError(message, path=self.path, line=line, field=field or None, hint=hint)

    def refuse(self, message: str, node: yaml.Node, field: str, hint: str) -> None:
        raise ValueRefusedError(
            message, path=self.path, line=node.start_mark.line + 1, field=field or None, hint=hint
        )

    def build(self, node: yaml.Node, prefix: str, depth: int, line: int) -> Any:
        if id(node) in self.seen:
            self.fail(
                "YAML aliases (*name) are not allowed in run files",
                line,
                prefix,
                "write the value out in full",
            )
        if depth > MAX_DEPTH:
            self.fail(f"nested more than {MAX_DEPTH} levels deep", node.start_mark.line + 1, None)
        self.seen.add(id(node))
        self.lines.setdefault(prefix, node.start_mark.line + 1)
        if isinstance(node, yaml.ScalarNode):
            return self.scalar(node, prefix)
        if isinstance(node, yaml.MappingNode) and node.tag == "tag:yaml.org,2002:map":
            return self.mapping(node, prefix, depth)
        if isinstance(node, yaml.SequenceNode) and node.tag == "tag:yaml.org,2002:seq":
            items = []
            for index, item in enumerate(node.value):
                dotted = f"{prefix}.{index}" if prefix else str(index)
                item_line = line if id(item) in self.seen else item.start_mark.line + 1
                items.append(self.build(item, dotted, depth + 1, item_line))
            return items
        return self.loader.construct_object(node, deep=True)

    def scalar(self, node: yaml.ScalarNode, prefix: str) -> Any:
        tag, value = node.tag, node.value
        if tag in (_STR_TAG, _TIME_TAG):
            return value
        if tag == _NULL_TAG:
            return None
        if tag in (_INT_TAG, _FLOAT_TAG):
            if len(value) > MAX_NUMBER_CHARS:
                self.refuse(
                    f"a number {len(value)} characters long is not a figure",
                    node,
                    prefix,
                    "write the figure itself, or quote it if it is text",
                )
            if tag == _INT_TAG:
                if _PLAIN_INT.fullmatch(value):
                    return int(value)
                return self.loader.construct_yaml_int(node)
            number = self.loader.construct_yaml_float(node)
            if not math.isfinite(number):
                self.refuse(
                    f"{value} is not a finite number",
                    node,
                    prefix,
                    "write the figure, or null when it is unknown",
                )
            return number
        if tag == _BOOL_TAG:
            return self.loader.construct_yaml_bool(node)
        return self.loader.construct_object(node, deep=True)

    def mapping(self, node: yaml.MappingNode, prefix: str, depth: int) -> dict[str, Any]:
        result: dict[str, Any] = {}
        first_line: dict[str, int] = {}
        for key_node, value_node in node.value:
            line = key_node.start_mark.line + 1
            if isinstance(key_node, yaml.ScalarNode) and key_node.value == "<<":
                self.fail(
                    "YAML merge keys (<<) are not allowed in run files",
                    line,
                    prefix,
                    "write the keys out in full",
                )
            if not isinstance(key_node, yaml.ScalarNode) or key_node.tag != _STR_TAG:
                shown = key_node.value if isinstance(key_node, yaml.ScalarNode) else "…"
                self.fail(
                    f"key {shown!r} is not text", line, prefix, "quote it, e.g. 'on': or '1':"
                )
            key = key_node.value
            dotted = f"{prefix}.{key}" if prefix else key
            if key in first_line:
                self.fail(
                    f"duplicate key {key!r} (first at line {first_line[key]})",
                    line,
                    dotted,
                    "keep one of them",
                )
            first_line[key] = line
            self.lines[dotted] = line
            result[key] = self.build(value_node, dotted, depth + 1, line)
        return result


def _syntax_error(exc: yaml.YAMLError, text: str, path: str) -> RunFileError:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    line = mark.line + 1 if mark is not None else None
    problem = getattr(exc, "problem", None) or getattr(exc, "context", None) or "invalid YAML"
    if isinstance(exc, yaml.reader.ReaderError):
        line = text.count("\n", 0, exc.position) + 1
        code = exc.character if isinstance(exc.character, int) else ord(exc.character)
        return RunFileError(
            f"control character U+{code:04X} is not allowed",
            path=path,
            line=line,
            hint="remove it; run files are plain UTF-8 text",
        )
    if isinstance(exc, yaml.constructor.ConstructorError) and "tag" in str(problem):
        tag = getattr(exc.problem_mark, "name", None) and re.search(r"'([^']+)'", str(problem))
        shown = tag.group(1).replace("tag:yaml.org,2002:", "!!") if tag else "this tag"
        return RunFileError(
            f"YAML tag {shown} is not allowed",
            path=path,
            line=line,
            hint="run files hold plain text, numbers, true/false, lists and mappings",
        )
    if "another document" in str(problem) or "single document" in str(problem):
        return RunFileError(
            "more than one YAML document ('---')",
            path=path,
            line=line,
            hint="one run per file",
        )
    return RunFileError(
        f"YAML syntax error: {problem}",
        path=path,
        line=line,
        hint="fix the YAML at that line",
    )


def _deep_line(text: str) -> int:
    """The line where flow brackets or ``- - -`` first nest deeper than MAX_DEPTH."""
    depth = 0
    for index, char in enumerate(text):
        depth += 1 if char in "[{" else -1 if char in "]}" else 0
        if depth > MAX_DEPTH:
            return text.count("\n", 0, index) + 1
    match = _DEEP_SEQUENCE.search(text)
    return text.count("\n", 0, match.start()) + 1 if match else 1


def load_yaml_text(text: str, *, path: str) -> Loaded:
    """Parse one YAML document safely; errors name the file and line."""
    tab = _TAB_INDENT.search(text)
    if tab is not None:
        raise RunFileError(
            "tab character in indentation",
            path=path,
            line=text.count("\n", 0, tab.start()) + 1,
            hint="YAML indents with spaces only",
        )
    try:
        loader = (_PyLoader if _might_nest_deeply(text) else _CLoader)(text)
        try:
            node = loader.get_single_node()
            if node is None:
                return Loaded(None, {})
            builder = _Builder(loader, path)
            data = builder.build(node, "", 0, 1)
        finally:
            loader.dispose()
    except yaml.YAMLError as exc:
        raise _syntax_error(exc, text, path) from None
    except RecursionError:
        raise RunFileError(
            f"nested more than {MAX_DEPTH} levels deep", path=path, line=_deep_line(text)
        ) from None
    return Loaded(data, builder.lines)


def _size_text(size: int) -> str:
    return f"{size / 2**20:.1f} MiB" if size < 2**30 else f"{size / 2**30:.1f} GiB"


def _limit_text(limit: int) -> str:
    return f"{limit // 2**20} MiB" if limit < 2**30 else f"{limit // 2**30} GiB"


def read_stream_bounded(stream: IO[bytes], *, max_bytes: int, name: str, hint: str) -> bytes:
    """Every byte of ``stream``, refused with a ``RunFileError`` beyond ``max_bytes``.

    Reads at most ``max_bytes + 1`` bytes, whatever the stream claims to hold: a device such as
    /dev/zero, a pipe or a growing file never makes it read forever."""
    chunks: list[bytes] = []
    total = 0
    while total <= max_bytes:
        chunk = stream.read(min(8 * 2**20, max_bytes + 1 - total))
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        total += len(chunk)
    raise RunFileError(
        f"larger than the limit of {_limit_text(max_bytes)}",
        path=name,
        line=1,
        hint=hint,
    )


def read_bytes_bounded(
    path: Path, *, max_bytes: int, hint: str, follow_links: bool = True
) -> bytes:
    """The bytes of ``path``, at most ``max_bytes``; unreadable, a folder or larger is a
    ``RunFileError``. ``st_size`` is trusted only to refuse a large regular file early.
    ``follow_links=False`` refuses a symbolic link, a device and a pipe (a contributed file
    is a regular file of the repository)."""
    if not follow_links and os.path.islink(path):
        raise UnsafePathError(
            "is a symbolic link",
            path=str(path),
            hint="commit the file itself: links are not followed",
        )
    try:
        with open(path, "rb") if follow_links else _open_regular(path) as stream:
            info = os.fstat(stream.fileno())
            if stat.S_ISDIR(info.st_mode):
                raise RunFileError("is a folder, not a file", path=str(path))
            if stat.S_ISREG(info.st_mode) and info.st_size > max_bytes:
                size = _size_text(info.st_size)
                if size == _size_text(max_bytes):
                    size = f"{info.st_size} bytes"
                raise RunFileError(
                    f"file is {size}; the limit is {_limit_text(max_bytes)}",
                    path=str(path),
                    line=1,
                    hint=hint,
                )
            return read_stream_bounded(stream, max_bytes=max_bytes, name=str(path), hint=hint)
    except IsADirectoryError:
        raise RunFileError("is a folder, not a file", path=str(path)) from None
    except OSError as exc:
        raise RunFileError(f"cannot read: {exc.strerror or exc}", path=str(path)) from None


RUN_FILE_SIZE_HINT = "keep long series in the raw output, not in the run file"


class UnsafePathError(RunFileError):
    """A path named by a contributed file that leaves its folder or the project, goes through a
    symbolic link, or is no regular file."""


def contributed_path(root: Path, relative: str, *, under: str = "data/raw") -> Path:
    """``ROOT/relative`` for a path a run file names, once it is known to be safe to read:
    relative, without ``..``, under ``under``, no symbolic link on the way from ROOT, inside
    ROOT once resolved, and a regular file (not a folder, a device or a pipe, which could be
    read forever or block). Anything else is an ``UnsafePathError`` saying which; a missing
    file is ``FileNotFoundError``."""
    pure = PurePosixPath(relative)
    if pure.is_absolute() or ".." in pure.parts or not relative.startswith(f"{under}/"):
        raise UnsafePathError(
            f"{relative!r} is not a path inside {under}/ (no '..', no leading '/')",
            hint=f"raw files live in {under}/ and are named by their path from the project root",
        )
    current = root
    for part in pure.parts:
        current = current / part
        try:
            info = os.lstat(current)
        except FileNotFoundError:
            raise
        except OSError as exc:
            raise UnsafePathError(f"{relative}: cannot be looked up: {exc.strerror}") from None
        if stat.S_ISLNK(info.st_mode):
            raise UnsafePathError(
                f"{current.relative_to(root).as_posix()} is a symbolic link",
                hint="commit the file itself: links are not followed",
            )
    if not stat.S_ISREG(info.st_mode):
        raise UnsafePathError(f"{relative} is not a regular file")
    real = os.path.realpath(current)
    top = os.path.realpath(root)
    if not real.startswith(top.rstrip(os.sep) + os.sep):
        raise UnsafePathError(f"{relative} resolves outside the project")
    return current


def _open_regular(path: Path) -> IO[bytes]:
    """``path`` opened for reading without following a final symbolic link, refused unless it
    is a regular file (a device or a pipe could be read forever)."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    stream = os.fdopen(fd, "rb")
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        stream.close()
        raise UnsafePathError(f"{path} is not a regular file", path=str(path))
    return stream


def sha256_file_bounded(path: Path, *, max_bytes: int, hint: str) -> str:
    """The sha256 of a regular file read in parts, refused beyond ``max_bytes``."""
    digest = hashlib.sha256()
    total = 0
    with _open_regular(path) as stream:
        while chunk := stream.read(2**20):
            total += len(chunk)
            if total > max_bytes:
                raise RunFileError(
                    f"larger than the limit of {_limit_text(max_bytes)}",
                    path=str(path),
                    line=1,
                    hint=hint,
                )
            digest.update(chunk)
    return digest.hexdigest()


class GzipBudget:
    """What the gzip files of one run may unpack to, together (``limit`` bytes), and each to at
    most ``MAX_GZIP_RATIO`` times its packed size (a bomb is refused after a few megabytes,
    not after the whole budget)."""

    def __init__(self, limit: int = MAX_LOG_BYTES) -> None:
        self.limit = limit
        self.used = 0


def unpack_gzip(
    stream: IO[bytes], out: IO[bytes], *, budget: GzipBudget, name: str, packed_size: int
) -> str:
    """Unpack the gzip data of ``stream`` (every member) into ``out`` in parts, never holding
    more than a few megabytes; return the sha256 of the packed bytes. Beyond the run's budget or
    the ratio cap it is a ``RunFileError`` that says the limit; a damaged or cut file, a
    ``ValueError``."""
    digest = hashlib.sha256()
    ratio_cap = max(GZIP_RATIO_FLOOR, MAX_GZIP_RATIO * packed_size)
    unpacked = 0
    unpacker = zlib.decompressobj(wbits=31)
    started = False

    def take(data: bytes) -> None:
        nonlocal unpacked
        unpacked += len(data)
        budget.used += len(data)
        if unpacked > ratio_cap:
            raise RunFileError(
                f"unpacks to more than {MAX_GZIP_RATIO} times its size (the limit for a "
                "gzip raw file; pgbench's logs pack about 4 to 1)",
                path=name,
                hint="keep the log as pgbench wrote it, gzipped",
            )
        if budget.used > budget.limit:
            raise RunFileError(
                f"the run's transaction logs unpack to more than {_limit_text(budget.limit)} "
                "together (the limit)",
                path=name,
                hint="keep a sample of the transactions (pgbench --sampling-rate)",
            )
        out.write(data)

    pending = b""
    while True:
        if not pending:
            chunk = stream.read(2**20)
            if not chunk:
                break
            digest.update(chunk)
            pending = chunk
        if unpacker.eof:  # the next gzip member
            unpacker = zlib.decompressobj(wbits=31)
        started = True
        take(unpacker.decompress(pending, 2**20))
        pending = unpacker.unused_data if unpacker.eof else unpacker.unconsumed_tail
    if not started or not unpacker.eof:
        raise ValueError("the gzip data is cut short")
    return digest.hexdigest()


def read_text_file(
    path: Path,
    *,
    max_bytes: int = MAX_FILE_BYTES,
    hint: str = RUN_FILE_SIZE_HINT,
    follow_links: bool = True,
) -> str:
    """The UTF-8 text of ``path`` (a leading byte-order mark dropped); too large, unreadable or
    not UTF-8 is a ``RunFileError`` (a link too, with ``follow_links=False``)."""
    try:
        raw = read_bytes_bounded(path, max_bytes=max_bytes, hint=hint, follow_links=follow_links)
    except RunFileError as exc:
        if exc.line is None:
            exc.line = 1
        raise
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise RunFileError(
            f"not UTF-8 (byte 0x{raw[exc.start]:02x})",
            path=str(path),
            line=line,
            hint="save the file as UTF-8",
        ) from None
    return text.removeprefix("\ufeff")


def load_yaml_file(path: Path) -> Loaded:
    """Read ``path`` as UTF-8 YAML (see ``load_yaml_text``)."""
    return load_yaml_text(read_text_file(path), path=str(path))


class _Dumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):  # type: ignore[misc]
    """Block style, keys in insertion order, multi-line strings as literal blocks, no aliases."""

    def ignore_aliases(self, _data: Any) -> bool:
        return True


def _str_presenter(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str_presenter)


def dump_yaml(data: Any, *, header: str = "") -> str:
    """YAML text for ``data``: keys in the order given, no aliases, UTF-8 kept as is."""
    body = yaml.dump(
        data,
        Dumper=_Dumper,
        sort_keys=False,
        allow_unicode=True,
        default_flow_style=False,
        width=100,
    )
    return header + body


def dump_run(run: dict[str, Any]) -> str:
    """The text of a run file, with its header."""
    return dump_yaml(run, header=HEADER.format(version=run.get("schema_version", SCHEMA_VERSION)))


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


_WRITE_HINTS = {
    errno.ENOSPC: "free some space, then run the command again",
    errno.EDQUOT: "free some space (the disk quota is full), then run the command again",
    errno.EACCES: "fix the folder's permissions, then run the command again",
    errno.EPERM: "fix the folder's permissions, then run the command again",
    errno.EROFS: "the file system is read-only: use --root on a writable folder",
    errno.ENOTDIR: "a part of the path is a file, not a folder: check --root",
    errno.ENAMETOOLONG: "the name is too long for the file system: use shorter names",
}


def _write_error(path: Path, exc: OSError) -> RunFileError:
    return RunFileError(
        f"cannot write: {exc.strerror or exc}",
        path=str(path),
        hint=_WRITE_HINTS.get(exc.errno or 0, "fix the problem, then run the command again"),
    )


#: Signals that would end ``kb import`` half-way through its writes: every signal a process can
#: block, except the faults a program raises itself; they are held back while the files of one
#: run are written, and delivered once all of them are in place.
HELD_SIGNALS = frozenset(signal.valid_signals()) - {
    signal.SIGKILL,
    signal.SIGSTOP,
    signal.SIGSEGV,
    signal.SIGBUS,
    signal.SIGFPE,
    signal.SIGILL,
    signal.SIGTRAP,
    signal.SIGABRT,
}


@contextlib.contextmanager
def signals_held() -> Iterator[None]:
    """Hold back SIGINT, SIGTERM, SIGHUP, SIGQUIT and every other signal that would end the
    program (``HELD_SIGNALS``) inside the block; one that arrives meanwhile takes effect when
    the block ends (its usual action: end the program, or raise ``KeyboardInterrupt``). Only
    SIGKILL (or a power cut) can stop the block half-way, and the leftovers it makes are what
    ``kb check`` reports as stray files."""
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, HELD_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def write_new_files(files: Sequence[tuple[Path, bytes]]) -> None:
    """Write several new files, all or none: when one fails, those already written by this call
    are removed again, so a run file never appears without its raw output or the reverse.

    Signals are held back meanwhile (``signals_held``): a Ctrl-C or a SIGTERM during the writes
    ends the program once every file is in place, never between two of them."""
    with signals_held():
        written: list[Path] = []
        try:
            for path, data in files:
                write_new_file(path, data)
                written.append(path)
        except BaseException:
            for path in reversed(written):
                with contextlib.suppress(OSError):
                    path.unlink()
            raise


def current_umask() -> int:
    """The process's umask (read by setting it and setting it back)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


class AlreadyExistsError(RunFileError):
    """``write_new_file`` found the name taken: files are never overwritten."""


def write_file_if_absent(path: Path, data: bytes) -> bool:
    """Write ``data`` to ``path`` unless a file of that name exists (or appears meanwhile: two
    benches on a new machine both write its draft note); True when this call wrote it."""
    try:
        write_new_file(path, data)
    except AlreadyExistsError:
        return False
    return True


def write_new_file(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically; refuse to replace an existing file.

    The bytes go to a temporary file in the same folder, are flushed to disk, and are then
    hard-linked into place (``link`` fails when the name exists), so a reader never sees half a
    file and an existing file is never touched. The file gets the permissions any new file
    gets (0666 less the umask), not the 0600 of a temporary file.
    """
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise _write_error(path, exc) from None
    try:
        with os.fdopen(fd, "wb") as handle:
            os.fchmod(handle.fileno(), 0o666 & ~current_umask())
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        try:
            os.link(tmp_name, path)
        except FileExistsError:
            raise AlreadyExistsError(
                "already exists; run files are never overwritten",
                path=str(path),
                hint="remove it first if you really mean to replace it",
            ) from None
    except OSError as exc:
        raise _write_error(path, exc) from None
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)
