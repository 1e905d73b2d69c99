"""Reading what contributors give, within limits: files and streams read to a byte limit,
paths a run file names checked before they are opened, gzip data unpacked within a budget.
Anything over a limit, unreadable or unsafe is a ``RunFileError`` that says which and where.
"""

from __future__ import annotations

import hashlib
import os
import stat
import zlib
from pathlib import Path, PurePosixPath
from typing import IO

from pgbench_kb.errors import RunFileError

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
