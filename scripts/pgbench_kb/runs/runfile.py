"""Run files on disk: the one way to read them (``read_run``), stable dumping, and atomic,
no-overwrite writes. What a run file must contain is the schema's business (``schema.py``);
this module only moves run files between disk and memory without losing anything.

``read_run`` reads a file within ``MAX_FILE_BYTES``; a file in the exact form ``dump_run``
writes is read by the fast reader (``runs/fastyaml.py``), anything else by the safe full
loader (``runs/yamlsafe.py``: one document, no aliases, no duplicate keys, bounded depth),
which also reports what is wrong at its line. Both give the same data and lines
(tests/runs/test_fastyaml_exact.py, tests/runs/test_read_run.py). ``kb check``, the analysis,
``kb derive``, ``kb diff`` and the harness read run files through it and nothing else.

The limits on what contributors give and the safe YAML loader live in ``runs/bounded.py`` and
``runs/yamlsafe.py``; their public names are re-exported here, where most callers look.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import signal
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from pgbench_kb.errors import RunFileError
from pgbench_kb.runs.bounded import (
    GZIP_RATIO_FLOOR,
    MAX_FILE_BYTES,
    MAX_GZIP_RATIO,
    MAX_LOG_BYTES,
    MAX_RAW_OUTPUT_BYTES,
    RUN_FILE_SIZE_HINT,
    GzipBudget,
    UnsafePathError,
    contributed_path,
    read_bytes_bounded,
    read_stream_bounded,
    read_text_file,
    sha256_file_bounded,
    unpack_gzip,
)
from pgbench_kb.runs.fastyaml import fast_load, fast_load_lines
from pgbench_kb.runs.yamlsafe import (
    MAX_DEPTH,
    MAX_NUMBER_CHARS,
    Loaded,
    ValueRefusedError,
    load_yaml_file,
    load_yaml_text,
)

__all__ = [
    "GZIP_RATIO_FLOOR",
    "HARDWARE_DIR",
    "HEADER",
    "MAX_DEPTH",
    "MAX_FILE_BYTES",
    "MAX_GZIP_RATIO",
    "MAX_LOG_BYTES",
    "MAX_NUMBER_CHARS",
    "MAX_RAW_OUTPUT_BYTES",
    "RAW_DIR",
    "RUNS_DIR",
    "RUN_FILE_SIZE_HINT",
    "SCHEMA_VERSION",
    "AlreadyExistsError",
    "GzipBudget",
    "Loaded",
    "RunDocument",
    "UnsafePathError",
    "ValueRefusedError",
    "contributed_path",
    "dump_run",
    "dump_yaml",
    "load_yaml_file",
    "load_yaml_text",
    "read_bytes_bounded",
    "read_run",
    "read_run_text",
    "read_stream_bounded",
    "read_text_file",
    "sha256_bytes",
    "sha256_file_bounded",
    "signals_held",
    "unpack_gzip",
    "write_file_if_absent",
    "write_new_file",
    "write_new_files",
]

RUNS_DIR = Path("data/runs")
RAW_DIR = Path("data/raw")
HARDWARE_DIR = Path("content/hardware")
SCHEMA_VERSION = 1

HEADER = (
    "# pgbench-kb run file (schema_version {version}). Written once by `kb import`;\n"
    "# the format is described in docs/data-format.md. Check with `kb check PATH`.\n"
)


@dataclass
class RunDocument(Loaded):
    """A run file read: its data, the line (1-based) of each key and list item when they were
    asked for (``lines``; ``line_of`` finds a field's), its text, the path its messages name,
    and whether the fast reader read it."""

    text: str = ""
    path: str = ""
    fast: bool = False


def read_run_text(
    text: str,
    shown: str,
    *,
    lines: bool = False,
    skip: frozenset[str] = frozenset(),
    fast: bool = True,
) -> RunDocument:
    """A run file's text read (see ``read_run``); ``shown`` names it in messages."""
    if fast:
        if lines:
            found = fast_load_lines(text)
            if found is not None:
                return RunDocument(found.data, found.lines, text, shown, fast=True)
        else:
            data = fast_load(text, skip)
            if data is not None:
                return RunDocument(data, {}, text, shown, fast=True)
    loaded = load_yaml_text(text, path=shown)
    return RunDocument(loaded.data, loaded.lines if lines else {}, text, shown)


def read_run(
    path: Path,
    *,
    shown: str | None = None,
    lines: bool = False,
    skip: frozenset[str] = frozenset(),
    fast: bool = True,
    follow_links: bool = True,
) -> RunDocument:
    """The run file at ``path``, read as UTF-8 within ``MAX_FILE_BYTES``: by the fast reader
    when it is in the form ``kb import`` writes, else by the full loader, which reports what is
    wrong at its line (a ``RunFileError`` naming ``shown``, the path by default; a file too
    large, unreadable or not UTF-8 is one naming ``path``).

    ``lines`` fills the line map (``kb check`` places its findings with it; the analysis does
    not need it). ``skip`` names keys (``top`` or ``top.second``) the caller never reads: the
    fast reader leaves them out unread (the full loader keeps them). ``fast=False`` reads with
    the full loader only (the tests and the benchmark compare both ways). ``follow_links=False``
    refuses a symbolic link, a device and a pipe."""
    text = read_text_file(path, follow_links=follow_links)
    return read_run_text(
        text, str(path) if shown is None else shown, lines=lines, skip=skip, fast=fast
    )


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
