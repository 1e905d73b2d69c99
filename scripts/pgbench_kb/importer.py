"""``kb import``: raw pgbench output + metadata → a new run file and its raw copy.

Two ways in:
- a trial folder written by ``scripts/bench.sh`` (``--harness-dir``): everything is detected,
  except what a person adds with ``--set`` or ``--meta`` (listed in ``provenance.declared``);
- raw output files or standard input, plus metadata from ``--meta`` and ``--set``: for results
  run by hand or transcribed from a publication.

Nothing is written until the whole run file has been built and validated; the raw copy and the
run file are written atomically and never overwrite an existing file.
"""

from __future__ import annotations

import copy
import gzip
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

import yaml

from pgbench_kb import trial
from pgbench_kb.errors import RunImportError
from pgbench_kb.parse import parse_text
from pgbench_kb.runbuild import benchmark_from, results_from, skeleton
from pgbench_kb.runfile import (
    HARDWARE_DIR,
    RAW_DIR,
    RUNS_DIR,
    dump_run,
    dump_yaml,
    load_yaml_file,
    sha256_bytes,
    write_new_file,
)
from pgbench_kb.schema import validate_run

SLUG_RE = re.compile(r"^[a-z0-9][a-z0-9-]*$")


def set_dotted(target: dict[str, Any], dotted: str, value: Any) -> None:
    """Set ``a.b.c`` in nested dicts, creating the dicts on the way."""
    keys = dotted.split(".")
    node = target
    for key in keys[:-1]:
        if not isinstance(node.get(key), dict):
            node[key] = {}
        node = node[key]
    node[keys[-1]] = value


def parse_set(item: str) -> tuple[str, Any]:
    key, sep, raw_value = item.partition("=")
    key = key.strip()
    if not sep or not key or not re.fullmatch(r"[a-z_][a-z0-9_]*(\.[a-z0-9_]+)*", key):
        raise RunImportError(
            f"--set {item!r} is not KEY=VALUE",
            field="--set",
            hint="write it as --set storage.data.array.level=raid10",
        )
    try:
        value = yaml.safe_load(raw_value) if raw_value.strip() else None
    except yaml.YAMLError:
        value = raw_value
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
        bench["workload"]["name"] or "custom",
        f"s{bench['scale']}" if bench["scale"] is not None else None,
        f"c{bench['clients']}" if bench["clients"] is not None else None,
        raw_hash[:8],
    ]
    slug = "-".join(str(p) for p in parts if p)
    return re.sub(r"[^A-Za-z0-9-]+", "-", slug)


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
        raise RunImportError("missing", field=dotted, hint=how)


def build_from_raw(
    raw_paths: Sequence[str], stdin: IO[str]
) -> tuple[dict[str, Any], str, list[tuple[str, bytes]]]:
    if not raw_paths:
        raise RunImportError(
            "no raw output given",
            field="RAW",
            hint="name the pgbench output file(s), or '-' to paste it on standard input",
        )
    texts = []
    for name in raw_paths:
        if name == "-":
            texts.append(stdin.read())
        else:
            try:
                texts.append(Path(name).read_text(encoding="utf-8", errors="replace"))
            except OSError as exc:
                raise RunImportError(f"cannot read: {exc.strerror}", path=name) from None
    text = "\n".join(texts)
    parsed = parse_text(text, source=raw_paths[0] if len(raw_paths) == 1 else "<input>")
    run = skeleton()
    run["benchmark"] = benchmark_from(parsed, run["benchmark"])
    run["results"] = results_from(parsed, None)
    return run, text, []


def draft_note(slug: str, server: dict[str, Any] | None) -> str:
    """A first hardware note for a machine that has none, from the detected facts."""
    server = server or {}
    cpu = server.get("cpu") or {}
    os_facts = server.get("os") or {}
    ram = server.get("ram_bytes")
    front = {
        "title": slug,
        "description": "Hardware note written by `kb import` from detected facts; please complete",
        "cpu": {
            "model": cpu.get("model"),
            "cores": cpu.get("cores"),
            "threads": cpu.get("threads"),
        },
        "ram_gib": round(ram / 2**30, 1) if ram else None,
        "os": " ".join(str(v) for v in (os_facts.get("name"), os_facts.get("release")) if v)
        or None,
        "draft_note": True,
    }
    body = (
        "This note was started by `kb import` from what the bench harness could detect.\n"
        "Before you open a pull request, describe what the machine cannot tell about itself:\n"
        "the disks (media, rpm, RAID level), the controller and its write cache, whether the\n"
        "cache is battery-backed, and anything unusual about the setup. Then remove `draft_note`.\n"
    )
    return "---\n" + dump_yaml(front) + "---\n" + body


def import_run(
    *,
    raw_paths: Sequence[str],
    machine: str | None,
    meta_path: Path | None,
    sets: Sequence[str],
    harness_dir: Path | None,
    root: Path,
    dry_run: bool,
    stdin: IO[str] = sys.stdin,
    stdout: IO[str] = sys.stdout,
) -> Path | None:
    """Build, validate and write one run file; return its path (None with ``dry_run``)."""
    if harness_dir is not None:
        run, text, logs = trial.build_from_trial(harness_dir)
    else:
        run, text, logs = build_from_raw(raw_paths, stdin)

    declared: dict[str, Any] = {}
    if meta_path is not None:
        loaded = load_yaml_file(meta_path)
        if not isinstance(loaded.data, dict):
            raise RunImportError("metadata must be a YAML mapping", path=str(meta_path), line=1)
        declared = deep_merge(declared, loaded.data)
    for item in sets:
        key, value = parse_set(item)
        set_dotted(declared, key, value)
    if machine is not None:
        declared["machine"] = machine
    run = deep_merge(run, declared)
    declared_paths = [p for p in leaf_paths(declared) if p != "machine"]
    if harness_dir is not None:
        already = set(run["provenance"]["declared"])
        run["provenance"]["declared"] = sorted(already | set(declared_paths))
    elif run.get("origin") == "measured":
        run["provenance"]["declared"] = sorted(set(declared_paths))

    _require(run, "machine", "give --machine SLUG (the server's note: content/hardware/SLUG.md)")
    if not SLUG_RE.match(str(run["machine"])):
        raise RunImportError(
            f"{run['machine']!r} is not a slug",
            field="machine",
            hint="use lower-case letters, digits and '-', e.g. --machine dl380-g4",
        )
    _require(
        run,
        "provenance.recorded_at",
        "give --set provenance.recorded_at=2026-11-22T10:00:00Z (when the run was made)",
    )
    if run["origin"] == "transcribed":
        _require(run, "provenance.source.title", "give --set provenance.source.title='…'")

    raw_bytes = text.encode("utf-8")
    raw_hash = sha256_bytes(raw_bytes)
    run["id"] = run_id(run, raw_hash)
    year, month = _year_month(run["provenance"]["recorded_at"])
    raw_rel = RAW_DIR / year / month / f"{run['id']}.txt"
    run["raw"] = [{"path": raw_rel.as_posix(), "sha256": raw_hash, "kind": "output"}]
    log_files = []
    for index, (_name, blob) in enumerate(logs):
        packed = gzip.compress(blob, mtime=0)
        rel = RAW_DIR / year / month / f"{run['id']}.log{index}.gz"
        run["raw"].append({"path": rel.as_posix(), "sha256": sha256_bytes(packed), "kind": "log"})
        log_files.append((rel, packed))

    problems = validate_run(run)
    if problems:
        first = problems[0]
        raise RunImportError(first.message, field=first.field, hint=first.hint)

    text_out = dump_run(run)
    if dry_run:
        stdout.write(text_out)
        return None
    run_path = root / RUNS_DIR / year / month / f"{run['id']}.yaml"
    if run_path.exists():
        raise RunImportError(
            "a run file for this output exists already", path=str(run_path), hint="nothing to do"
        )
    raw_path = root / raw_rel
    if not raw_path.exists():
        write_new_file(raw_path, raw_bytes)
    for rel, packed in log_files:
        if not (root / rel).exists():
            write_new_file(root / rel, packed)
    note = root / HARDWARE_DIR / f"{run['machine']}.md"
    if harness_dir is not None and not note.exists():
        write_new_file(note, draft_note(run["machine"], run.get("server")).encode("utf-8"))
    write_new_file(run_path, text_out.encode("utf-8"))
    return run_path
