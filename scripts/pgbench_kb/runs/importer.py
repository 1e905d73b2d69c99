"""``kb import``: raw pgbench output + metadata → a new run file and its raw copy.

Two ways in:
- a trial folder written by ``scripts/bench.sh`` (``--harness-dir``): everything is detected,
  except what a person adds with ``--set`` or ``--meta`` (listed in ``provenance.declared``);
- raw output files or standard input, plus metadata from ``--meta`` and ``--set``: for results
  run by hand or transcribed from a publication.

A transcribed run (``--set origin=transcribed``) may come without raw output: its figures are
then all declared in the metadata.

Every value a person gives is listed (as a dotted path, at most two levels deep) in
``provenance.declared``; everything else came from the harness's facts or from parsing the raw
output. ``provenance.masked`` paths are set to null before anything is written. The
contributor, when nobody names one, is ``git config user.name`` (else the login name).

Nothing is written until the whole run file has been built and validated (schema and the
one-file rules of ``kb check``, what a run must carry included); every problem is reported at
once, naming the ``--set``/``--meta`` field it involves. The raw copy, the logs, a draft note and
the run file are written atomically, all or none (signals wait until the last is in place), and
never overwrite an existing file.
"""

from __future__ import annotations

import contextlib
import copy
import getpass
import gzip
import json
import math
import os
import re
import stat
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from pgbench_kb.errors import RunFileError, RunImportError
from pgbench_kb.parse import parse_paths, parse_text
from pgbench_kb.parse.detect import decode_text
from pgbench_kb.runs.build import benchmark_from, percentiles_from_log, results_from, skeleton
from pgbench_kb.runs.check import MAX_SLUG_CHARS, masked_path_problem, single_run_issues
from pgbench_kb.runs.files import run_files
from pgbench_kb.runs.runfile import (
    HARDWARE_DIR,
    MAX_LOG_BYTES,
    MAX_RAW_OUTPUT_BYTES,
    RAW_DIR,
    RUNS_DIR,
    Loaded,
    ValueRefusedError,
    dump_run,
    dump_yaml,
    load_yaml_file,
    load_yaml_text,
    read_bytes_bounded,
    read_stream_bounded,
    sha256_bytes,
    write_file_if_absent,
    write_new_files,
)
from pgbench_kb.runs.schema import property_at, validate, validate_run

SLUG_RE = re.compile(r"^[a-z0-9][a-z0-9-]*$")
DECLARED_DEPTH = 2
#: Run-file fields nest at most this deep; a --set key deeper than that is a mistake.
MAX_SET_DEPTH = 8
MAX_SET_KEY_CHARS = 200
RAW_HINT = "give the text pgbench printed at the end of the run"
LOG_HINT = "give the pgbench_log.* files pgbench --log wrote"
SETTINGS_PREFIX = "postgres.settings."
HOSTNAME_PATHS = ("server.hostname", "client.hostname")
LOG_KINDS = {"transaction_log", "aggregate_log"}


def set_dotted(target: dict[str, Any], dotted: str, value: Any) -> None:
    """Set ``a.b.c`` in nested dicts, creating the dicts on the way. A setting name keeps its
    dots: ``postgres.settings.auto_explain.log_min_duration`` is one setting."""
    if dotted.startswith(SETTINGS_PREFIX) and len(dotted) > len(SETTINGS_PREFIX):
        keys = [*SETTINGS_PREFIX.rstrip(".").split("."), dotted[len(SETTINGS_PREFIX) :]]
    else:
        keys = dotted.split(".")
    node = target
    for key in keys[:-1]:
        if not isinstance(node.get(key), dict):
            node[key] = {}
        node = node[key]
    node[keys[-1]] = value


def _text_only(dotted: str) -> bool:
    """Whether the field at ``dotted`` holds text (or null) and never a number or true/false."""
    prop = property_at("run", dotted)
    kinds = (prop or {}).get("type")
    kinds = kinds if isinstance(kinds, list) else [kinds]
    return "string" in kinds and not {"number", "integer", "boolean"} & set(kinds)


def parse_set(item: str) -> tuple[str, Any]:
    """``KEY=VALUE`` → (dotted key, value read as a YAML scalar; text where the field is text)."""
    key, sep, raw_value = item.partition("=")
    key = key.strip()
    if not sep or not key or not re.fullmatch(r"[a-z_][a-z0-9_]*(\.[a-z0-9_]+)*", key):
        raise RunImportError(
            f"--set {item[:60]!r} is not KEY=VALUE",
            field="--set",
            hint="write it as --set storage.data.array.level=raid10",
        )
    depth = key.count(".") + 1
    if len(key) > MAX_SET_KEY_CHARS or (
        depth > MAX_SET_DEPTH and not key.startswith(SETTINGS_PREFIX)
    ):
        raise RunImportError(
            f"key {key[:40]}… is {depth} levels deep and {len(key)} characters long; no field "
            f"of a run file is deeper than {MAX_SET_DEPTH} levels",
            field="--set",
            hint="see docs/data-format.md for the fields",
        )
    try:
        value = load_yaml_text(raw_value, path="--set").data if raw_value.strip() else None
    except ValueRefusedError as exc:
        raise RunImportError(exc.message, field=key, hint=exc.hint) from None
    except RunFileError:
        value = raw_value
    if value is not None and not isinstance(value, str | dict | list) and _text_only(key):
        value = raw_value.strip()  # 2006 for a date, 10.10 for a version: the text as given
    return key, value


def deep_merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    merged = copy.deepcopy(base)
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def leaf_paths(data: dict[str, Any], prefix: str = "") -> list[str]:
    paths = []
    for key, value in data.items():
        path = f"{prefix}.{key}" if prefix else str(key)
        if isinstance(value, dict) and value:
            paths.extend(leaf_paths(value, path))
        else:
            paths.append(path)
    return paths


def declared_paths(declared: dict[str, Any]) -> list[str]:
    """The fields a person gave, cut to two levels (``storage.data`` covers all under it)."""
    cut = {".".join(p.split(".")[:DECLARED_DEPTH]) for p in leaf_paths(declared)}
    return sorted(cut - {"machine", "origin", "schema_version", "provenance"})


def mask(run: dict[str, Any], paths: Sequence[str]) -> None:
    """Set each dotted path to null (the values are removed before anything is written)."""
    for dotted in paths:
        node: Any = run
        keys = dotted.split(".")
        for key in keys[:-1]:
            node = node.get(key) if isinstance(node, dict) else None
        if isinstance(node, dict) and keys[-1] in node:
            node[keys[-1]] = None


def _timestamp_of(recorded_at: Any) -> str:
    """``20261122T001500Z`` (or ``20060601`` for a date) from an ISO date or time."""
    text = str(recorded_at)
    digits = re.sub(r"[^0-9T]", "", text.replace(" ", "T"))
    return digits[:15] + ("Z" if len(digits) >= 15 else "")


def run_id(run: dict[str, Any], raw_hash: str) -> str:
    bench = run["benchmark"]
    parts = [
        _timestamp_of(run["provenance"]["recorded_at"]),
        run["machine"],
        (bench["workload"]["name"] or "custom")[:40],
        f"s{bench['scale']}" if bench["scale"] is not None else None,
        f"c{bench['clients']}" if bench["clients"] is not None else None,
        raw_hash[:8],
    ]
    slug = "-".join(str(p) for p in parts if p)
    return re.sub(r"[^A-Za-z0-9]+", "-", slug).strip("-")


def _year_month(recorded_at: Any) -> tuple[str, str]:
    match = re.match(r"(\d{4})(?:-(\d{2}))?", str(recorded_at))
    if not match:
        return "undated", "00"
    return match.group(1), match.group(2) or "00"


def _require(run: dict[str, Any], dotted: str, how: str) -> None:
    node: Any = run
    for key in dotted.split("."):
        node = node.get(key) if isinstance(node, dict) else None
    if node in (None, ""):
        raise RunImportError(f"missing; give it with {how}", field=dotted)


def _read_input(name: str, stdin: IO[str]) -> bytes:
    """The exact bytes of one raw output file ('-' is standard input), bounded in size."""
    if name == "-":
        stream = getattr(stdin, "buffer", None)
        if stream is None:  # a text stream without bytes beneath (tests)
            return stdin.read(MAX_RAW_OUTPUT_BYTES + 1).encode("utf-8")
        return read_stream_bounded(
            stream, max_bytes=MAX_RAW_OUTPUT_BYTES, name="<stdin>", hint=RAW_HINT
        )
    return read_bytes_bounded(Path(name), max_bytes=MAX_RAW_OUTPUT_BYTES, hint=RAW_HINT)


def build_from_raw(
    raw_paths: Sequence[str], stdin: IO[str], *, transcribed: bool = False
) -> tuple[dict[str, Any], bytes | None, list[tuple[str, bytes]]]:
    """The run with what the raw output says, and the raw output's bytes exactly as given
    (decoded only to be parsed); figures only (no raw) for a transcribed run."""
    if not raw_paths:
        if transcribed:
            return skeleton(), None, []
        raise RunImportError(
            "no raw output given",
            field="RAW",
            hint="name the pgbench output file(s), or '-' to paste it on standard input; "
            "only a transcribed run (--set origin=transcribed) may have figures only",
        )
    blob = b"\n".join(_read_input(name, stdin) for name in raw_paths)
    if len(blob) > MAX_RAW_OUTPUT_BYTES:
        raise RunImportError(
            f"the raw output files together are larger than {MAX_RAW_OUTPUT_BYTES // 2**20} MiB",
            field="RAW",
            hint=RAW_HINT,
        )
    source = raw_paths[0] if len(raw_paths) == 1 else "<input>"
    parsed = parse_text(decode_text(blob), source="<stdin>" if source == "-" else source)
    if parsed.get("kind") != "summary":
        raise RunImportError(
            f"{raw_paths[0]} is a {parsed.get('kind')}, not pgbench's text output",
            field="RAW",
            hint="give the text pgbench printed; per-transaction logs go with --log",
        )
    run = skeleton()
    run["benchmark"] = benchmark_from(parsed, run["benchmark"])
    run["results"] = results_from(parsed, None)
    return run, blob, []


def draft_note(slug: str, server: dict[str, Any] | None) -> str:
    """A first hardware note for a machine that has none, from the detected facts."""
    server = server or {}
    cpu = server.get("cpu") or {}
    os_facts = server.get("os") or {}
    os_name = " ".join(
        str(v) for v in (os_facts.get("name"), os_facts.get("release")) if v is not None
    )
    front = {
        "schema_version": 1,
        "title": slug,
        "description": "Hardware note started by kb import from detected facts; to be completed.",
        "roles": ["server"],
        "cpu": {
            "model": cpu.get("model"),
            "sockets": cpu.get("sockets"),
            "cores": cpu.get("cores"),
            "threads": cpu.get("threads"),
        },
        "ram": {"bytes": server.get("ram_bytes"), "type": None, "ecc": None},
        "os": [os_name] if os_name else [],
        "described_from": "examined",
        "draft_note": True,
    }
    body = (
        "This note was started by `kb import` from what the bench harness could detect.\n"
        "Before you open a pull request, describe what the machine cannot tell about itself:\n"
        "the disks (media, rpm, RAID level), the controller and its write cache, whether the\n"
        "cache is battery-backed, and anything unusual about the setup. Then remove `draft_note`.\n"
    )
    return "---\n" + dump_yaml(front) + "---\n" + body


@dataclass(frozen=True)
class Imported:
    """What ``import_run`` wrote, and what the person should do next (advice, not errors)."""

    run_path: Path
    advice: list[str]


@dataclass(frozen=True)
class Detected:
    """A run measured by a harness: the raw output's exact bytes, the run sections it detected
    (without id and raw) and its transaction logs as (name, bytes). The bench harness builds it
    from a trial folder (``pgbench_kb.bench.trial.read_trial_folder``)."""

    raw_bytes: bytes
    run: dict[str, Any]
    logs: list[tuple[str, bytes]]


def import_run(
    *,
    raw_paths: Sequence[str],
    machine: str | None,
    meta_path: Path | None,
    sets: Sequence[str],
    detected: Detected | None,
    root: Path,
    dry_run: bool,
    log_paths: Sequence[str] = (),
    mask_hostnames: bool = False,
    stdin: IO[str] = sys.stdin,
    stdout: IO[str] = sys.stdout,
) -> Imported | None:
    """Build, validate and write one run file; say where (None with ``dry_run``)."""
    declared = declared_values(meta_path, sets, machine)
    given = list(dict.fromkeys([parse_set(item)[0] for item in sets] + leaf_paths(declared)))
    transcribed = declared.get("origin") == "transcribed"
    if detected is not None:
        raw_bytes, run, logs = detected.raw_bytes, copy.deepcopy(detected.run), list(detected.logs)
    else:
        run, raw_bytes, logs = build_from_raw(raw_paths, stdin, transcribed=transcribed)
        logs = logs + _read_logs(log_paths, run)
    run = deep_merge(run, declared)
    already = set(run["provenance"].get("declared") or [])
    run["provenance"]["declared"] = sorted(already | set(declared_paths(declared)))
    masked = list(run["provenance"].get("masked") or [])
    if mask_hostnames:
        masked += [p for p in HOSTNAME_PATHS if p not in masked]
    run["provenance"]["masked"] = masked
    for index, dotted in enumerate(masked):
        problem = masked_path_problem(dotted)
        if problem is not None:
            raise RunImportError(problem, field=f"provenance.masked.{index}")
    mask(run, masked)
    if run["provenance"].get("contributed_at") is None:
        run["provenance"]["contributed_at"] = datetime.now(UTC).strftime("%Y-%m-%d")
    if not run["provenance"].get("contributor"):
        run["provenance"]["contributor"] = contributor_name(root)

    _require(run, "machine", "--machine SLUG, the name of the server's content/hardware/SLUG.md")
    _require(
        run,
        "provenance.recorded_at",
        "--set provenance.recorded_at=2026-11-22T10:00:00Z, when the run was made",
    )
    if run["origin"] == "transcribed":
        for key in ("title", "kind"):
            _require(
                run,
                f"provenance.source.{key}",
                f"--set provenance.source.{key}=… (or a source: section in --meta)",
            )

    raw_hash = sha256_bytes(raw_bytes) if raw_bytes is not None else _figures_hash(run)
    run["id"] = run_id(run, raw_hash)
    year, month = _year_month(run["provenance"]["recorded_at"])
    raw_rel = RAW_DIR / year / month / f"{run['id']}.txt"
    run["raw"] = []
    blobs: dict[str, bytes] = {}
    if raw_bytes is not None:
        run["raw"].append({"path": raw_rel.as_posix(), "sha256": raw_hash, "kind": "output"})
        blobs[raw_rel.as_posix()] = raw_bytes
    log_files = []
    for index, (name, blob) in enumerate(logs):
        kind = name if name in LOG_KINDS else "log"
        packed = gzip.compress(blob, mtime=0)
        rel = RAW_DIR / year / month / f"{run['id']}.log{index}.gz"
        run["raw"].append({"path": rel.as_posix(), "sha256": sha256_bytes(packed), "kind": kind})
        blobs[rel.as_posix()] = packed
        log_files.append((rel, packed))

    _refuse_invalid(run, root, blobs, given)
    run_path = root / RUNS_DIR / year / month / f"{run['id']}.yaml"
    if run_path.exists() and not dry_run:
        raise RunImportError(
            "a run file for this output exists already", path=str(run_path), hint="nothing to do"
        )
    if raw_bytes is not None:
        _refuse_duplicate(root, raw_hash)

    text_out = dump_run(run)
    if dry_run:
        stdout.write(text_out)
        return None
    files: list[tuple[Path, bytes]] = []
    if raw_bytes is not None and not (root / raw_rel).exists():
        files.append((root / raw_rel, raw_bytes))
    files.extend((root / rel, packed) for rel, packed in log_files if not (root / rel).exists())
    note = root / HARDWARE_DIR / f"{run['machine']}.md"
    # The run file comes last: once it exists, everything it refers to exists too.
    files.append((run_path, text_out.encode("utf-8")))
    write_new_files(files)
    if detected is not None and not note.exists():
        # A draft of the machine's note, unless one appeared meanwhile (two benches started on
        # a new machine at once): either way the run is kept.
        write_file_if_absent(note, draft_note(run["machine"], run.get("server")).encode("utf-8"))
    advice = []
    if not note.exists():
        advice.append(
            f"{note.relative_to(root).as_posix()} does not exist yet: describe the machine there "
            "before `make check` (see CONTRIBUTING.md)"
        )
    return Imported(run_path, advice)


def contributor_name(root: Path) -> str | None:
    """Who is importing, when they did not say: ``git config user.name`` (the name their pull
    request will carry), else their login name, so a finished trial is never lost for want of
    a name."""
    name = git_user_name(root)
    if name is None:
        with contextlib.suppress(Exception):  # getpass raises whatever the platform gives
            name = getpass.getuser() or None
    return name


def git_user_name(root: Path) -> str | None:
    """``git config user.name`` as seen from ROOT (the contributor of a pull request), or None
    when git is missing or the name is not set."""
    try:
        done = subprocess.run(
            ["git", "config", "user.name"],
            cwd=root if root.is_dir() else None,
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    name = done.stdout.strip() if done.returncode == 0 else ""
    return name or None


def _refuse_duplicate(root: Path, raw_hash: str) -> None:
    """Refuse raw output that a run under ROOT/data/runs already keeps (whatever its date)."""
    runs = root / RUNS_DIR
    needle = raw_hash.encode("ascii")
    try:
        candidates = run_files(root) if runs.is_dir() else []
    except OSError:
        return
    for path in candidates:
        try:
            with open(path, "rb") as stream:
                if needle not in stream.read(8 * 2**20):
                    continue
        except OSError:
            continue
        raise RunImportError(
            f"the same raw output (sha256 {raw_hash[:12]}…) is already kept by {path}",
            field="RAW",
            hint="each run is imported once; a repeat of the benchmark has output of its own",
        )


def declared_values(
    meta_path: Path | None, sets: Sequence[str], machine: str | None
) -> dict[str, Any]:
    """What a person gave: the --meta file, then each --set, then --machine; each value
    checked against the schema before anything uses it."""
    declared: dict[str, Any] = {}
    meta: Loaded | None = None
    if meta_path is not None:
        meta = load_yaml_file(meta_path)
        if not isinstance(meta.data, dict):
            raise RunImportError("metadata must be a YAML mapping", path=str(meta_path), line=1)
        declared = copy.deepcopy(meta.data)
    set_keys: list[str] = []
    for item in sets:
        key, value = parse_set(item)
        set_dotted(declared, key, value)
        set_keys.append(key)
    if machine is not None:
        if len(machine) > MAX_SLUG_CHARS:
            raise RunImportError(
                f"is {len(machine)} characters long; a slug has at most {MAX_SLUG_CHARS}",
                field="machine",
                hint="name the machine shortly, e.g. --machine dl380-g4",
            )
        if not SLUG_RE.match(machine):
            raise RunImportError(
                f"{machine!r} is not a slug",
                field="machine",
                hint="use lower-case letters, digits and '-', e.g. --machine dl380-g4",
            )
        declared["machine"] = machine
    problems = validate("run", declared, partial=True)
    if problems:
        first = problems[0]
        from_set = any(_overlaps(first.field, k) for k in set_keys) or (
            first.field == "machine" and machine is not None
        )
        where: dict[str, Any] = {}
        if meta is not None and meta_path is not None and not from_set:
            where = {"path": str(meta_path), "line": meta.line_of(first.field)}
        found = [(p.field, p.text(), ()) for p in problems]
        raise _problems_error(found, set_keys, **where)
    return declared


def _overlaps(a: str, b: str) -> bool:
    """Whether dotted paths ``a`` and ``b`` are the same field or one holds the other."""
    return a == b or a.startswith(b + ".") or b.startswith(a + ".")


def _problems_error(
    problems: Sequence[tuple[str, str, Sequence[str]]],
    given: Sequence[str],
    *,
    path: str | None = None,
    line: int | None = None,
) -> RunImportError:
    """One error listing every problem found, as (field, message, related fields), and naming
    the field a person gave (``given``: --set keys, then --meta paths) that they involve.

    A problem that shows on another field than the one given (a tps given with --set that no
    longer matches the transactions and the duration) says which given field it involves."""

    def given_in(fields: Sequence[str]) -> list[str]:
        return [k for k in given if any(_overlaps(k, f) for f in fields)]

    items = []
    for field, message, related in problems:
        blamed = given_in(related) if not given_in([field]) else []
        check = f" (check the {' and '.join(blamed)} you gave)" if blamed else ""
        items.append(f"{field}: {message}{check}")
    involved = given_in([f for field, _, related in problems for f in (field, *related)])
    named = involved[0] if involved else None
    if len(problems) == 1:
        field, message, related = problems[0]
        if named is None or given_in([field]):
            return RunImportError(message, field=field, path=path, line=line)
        return RunImportError(
            f"does not fit the rest of the run: {items[0]}", field=named, path=path, line=line
        )
    return RunImportError(
        f"{len(problems)} problems: " + "; ".join(items),
        field=named or problems[0][0],
        path=path,
        line=line,
    )


def _read_logs(log_paths: Sequence[str], run: dict[str, Any]) -> list[tuple[str, bytes]]:
    """The per-transaction or aggregate logs of a run: their kind and bytes; percentiles kept."""
    if not log_paths:
        return []
    blobs = []
    for name in log_paths:
        path = Path(name)
        try:
            regular = stat.S_ISREG(os.stat(path).st_mode)
        except OSError as exc:
            raise RunImportError(
                f"cannot read: {exc.strerror or exc}", path=name, field="--log"
            ) from None
        if not regular:
            raise RunImportError("is not a regular file", path=name, field="--log", hint=LOG_HINT)
        blobs.append(read_bytes_bounded(path, max_bytes=MAX_LOG_BYTES, hint=LOG_HINT))
    parsed = parse_paths(list(log_paths))
    kind = parsed.get("kind")
    if kind not in {"transaction_log", "aggregate_log"}:
        raise RunImportError(
            f"{log_paths[0]} is not a pgbench log ({kind})",
            field="--log",
            hint="give the pgbench_log.* files written by pgbench --log",
        )
    if kind == "transaction_log":
        run["results"] = results_from_log(run["results"], parsed)
    return [(kind, blob) for blob in blobs]


def results_from_log(results: dict[str, Any], log: dict[str, Any]) -> dict[str, Any]:
    merged = dict(results)
    merged["latency_percentiles_ms"], merged["latency_percentiles_from"] = percentiles_from_log(log)
    return merged


def _figures_hash(run: dict[str, Any]) -> str:
    """A stable hash of a figures-only run, standing in for the raw output's in its id."""
    picked = {k: v for k, v in run.items() if k not in {"id", "raw"}}
    picked["provenance"] = {
        k: v for k, v in run["provenance"].items() if k not in {"contributed_at", "declared"}
    }
    return sha256_bytes(json.dumps(picked, sort_keys=True, default=str).encode("utf-8"))


def _first_non_finite(value: Any, path: str = "") -> str | None:
    if isinstance(value, float) and not math.isfinite(value):
        return path or "(top)"
    if isinstance(value, dict):
        items: Any = value.items()
    elif isinstance(value, list):
        items = enumerate(value)
    else:
        return None
    for key, item in items:
        found = _first_non_finite(item, f"{path}.{key}" if path else str(key))
        if found is not None:
            return found
    return None


def _refuse_invalid(
    run: dict[str, Any], root: Path, blobs: dict[str, bytes], given: Sequence[str]
) -> None:
    """The schema and every one-file rule of ``kb check``, the raw output re-parsed and
    compared; every error is raised at once (naming the field a person gave, ``given``, that
    they involve), so nothing is written that ``kb check`` rejects."""
    bad = _first_non_finite(run)
    if bad is not None:
        raise RunImportError(
            "is not a finite number", field=bad, hint="write the figure, or null when unknown"
        )
    problems = validate_run(run)
    if problems:
        raise _problems_error([(p.field, p.text(), ()) for p in problems], given)
    today = datetime.now(UTC).strftime("%Y%m%d")
    issues = single_run_issues(run, root, today=today, blobs=blobs)
    errors = [i for i in issues if i.severity == "error"]
    if errors:
        raise _problems_error([(i.field, i.message, i.related) for i in errors], given)
