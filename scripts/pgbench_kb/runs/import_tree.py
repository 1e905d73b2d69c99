"""``kb import TREE --mapping MAPPING.yaml``: a result tree someone published → one run file per
pgbench output, through the same ``import_run`` as a single output.

The mapping file (schema ``schemas/mapping.schema.json``, checked by ``kb check`` under
``data/imports/*/mapping.yaml``) says which files are outputs (a regular expression on the
path inside the tree), what the named parts of that path are (the session's directory and
start, the repeat's number; clients, mode and scale, checked against what each output says;
when the path holds no start, ``files.started`` gives each session's, read from the tree's
own logs), the facts the author gave for every run (``run``: the keys of a run file), where
the tree comes from (repository, commit, author, the page describing the setup, the terms)
and whether the terms allow keeping the outputs (``keep_raw``; otherwise each run keeps the
output's address at the commit and its sha256 in ``provenance.source``; ``source.address``
may name the pattern's groups, for outputs published inside an archive).

**Sessions.** A bench session is the level the analysis treats as one state of the machine
(``analyze/sessions.py``). For an imported tree it is, with ``session: directory``, each
directory the pattern's ``session`` group names (one invocation of the author's script), and
with ``session: series`` the whole tree, when the source says it was run as one. It is written
into ``repeat.group`` as ``SET-STARTED-TOKEN-CONFIG``, the form the harness uses, so that a
comparison between two sessions is named as crossing sessions and judged as such. Repeats are
grouped as the author ran them: the files whose paths differ only in the ``repeat`` part.

Nothing is written unless every output imports: all runs are built and checked first, and
every problem is reported at once (each at its output's path, or at the mapping's line);
then each run is written atomically by ``import_run``.
"""

from __future__ import annotations

import hashlib
import io
import re
import string
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pgbench_kb.errors import ImportProblems, KbError, RunFileError, RunImportError
from pgbench_kb.runs.documents import Located, read_document, schema_problems
from pgbench_kb.runs.import_declared import deep_merge
from pgbench_kb.runs.importer import import_run, kept_outputs
from pgbench_kb.runs.schema import validate

#: Named groups of ``files.pattern`` and what each must be (``started`` unless
#: ``files.started`` gives each session's start).
REQUIRED_GROUPS = ("session", "repeat")
CHECKED_GROUPS = {"clients": "clients", "mode": "query_mode", "scale": "scale"}
STARTED_RE = re.compile(r"^(\d{4})(\d{2})(\d{2})\D?(\d{2})(\d{2})(\d{2})$")
DEFAULT_ADDRESS = "{url}/blob/{revision}/{path}"
#: The command lines of ``run.benchmark`` that may name the pattern's groups: {clients}…
COMMAND_KEYS = ("command", "init_command")
#: Keys of ``run`` that the tree importer sets itself.
SET_BY_IMPORTER = ("id", "raw", "repeat", "origin", "provenance.source", "schema_version")


@dataclass
class TreeImported:
    """What ``import_tree`` did: the run files written (or that would be), the outputs left
    out on purpose with their reason, and how many files the pattern did not match."""

    runs: list[Path] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)
    unmatched: int = 0
    sessions: int = 0
    groups: int = 0


@dataclass(frozen=True)
class Output:
    rel: str
    parts: dict[str, str]
    session: str
    started: str


def _rules(data: dict[str, Any], line_of: Any, shown: str) -> list[Located]:
    """What the schema cannot say of a mapping: the pattern compiles and has its groups; the
    run facts are a run file's; the importer's own fields are left to it."""
    found: list[Located] = []
    files = data["files"]
    try:
        pattern = re.compile(files["pattern"])
    except re.error as exc:
        return [
            Located(
                shown,
                line_of("files.pattern"),
                "files.pattern",
                f"not a regular expression: {exc}",
                "write a Python regular expression",
            )
        ]
    required = REQUIRED_GROUPS + (() if files.get("started") else ("started",))
    for name in required:
        if name not in pattern.groupindex:
            found.append(
                Located(
                    shown,
                    line_of("files.pattern"),
                    "files.pattern",
                    f"has no named group {name!r}",
                    f"mark that part of the path with (?P<{name}>…)"
                    + (
                        " or give each session's start in files.started"
                        if name == "started"
                        else ""
                    ),
                )
            )
    if files.get("started") and "started" in pattern.groupindex:
        found.append(
            Located(
                shown,
                line_of("files.started"),
                "files.started",
                "is given, but files.pattern has a started group too",
                "keep one: the started group, or files.started when the path holds no start",
            )
        )
    address = data["source"].get("address") or ""
    names = {name for _, name, _, _ in string.Formatter().parse(address) if name}
    for name in sorted(names - set(pattern.groupindex) - {"url", "revision", "path"}):
        found.append(
            Located(
                shown,
                line_of("source.address"),
                "source.address",
                f"{{{name}}} is neither url, revision, path nor a named group of files.pattern",
                "use {url}, {revision}, {path} or the names of the pattern's groups",
            )
        )
    for dotted in SET_BY_IMPORTER:
        head, _, tail = dotted.partition(".")
        value = data["run"].get(head)
        if value is not None and (not tail or (isinstance(value, dict) and tail in value)):
            found.append(
                Located(
                    shown,
                    line_of(f"run.{dotted}"),
                    f"run.{dotted}",
                    "is set by kb import from the tree and the mapping",
                    "remove it (the source is the mapping's source:)",
                )
            )
    commands = [
        (f"run.benchmark.{key}", (data["run"].get("benchmark") or {}).get(key))
        for key in COMMAND_KEYS
    ]
    for index, case in enumerate(data.get("cases") or []):
        commands += [
            (f"cases.{index}.run.benchmark.{key}", (case["run"].get("benchmark") or {}).get(key))
            for key in COMMAND_KEYS
        ]
    for where, command in commands:
        if not isinstance(command, str):
            continue
        names = {name for _, name, _, _ in string.Formatter().parse(command) if name}
        for name in sorted(names - set(pattern.groupindex)):
            found.append(
                Located(
                    shown,
                    line_of(where),
                    where,
                    f"{{{name}}} is not a named group of files.pattern",
                    "use the names of the pattern's groups, e.g. {clients}",
                )
            )
    facts = [("run", data["run"])]
    for index, case in enumerate(data.get("cases") or []):
        where = f"cases.{index}"
        try:
            re.compile(case["pattern"])
        except re.error as exc:
            found.append(
                Located(
                    shown,
                    line_of(f"{where}.pattern"),
                    f"{where}.pattern",
                    f"not a regular expression: {exc}",
                    "write a Python regular expression",
                )
            )
        facts.append((f"{where}.run", case["run"]))
    for where, run in facts:
        for problem in validate("run", run, partial=True):
            found.append(
                Located(
                    shown,
                    line_of(f"{where}.{problem.field}"),
                    f"{where}.{problem.field}",
                    problem.message,
                    problem.hint,
                )
            )
    return found


def mapping_problems(path: Path, shown: str) -> list[Located]:
    """Every problem of the mapping at ``path``: its schema, then its rules (``kb check``)."""
    try:
        loaded = read_document(path, shown)
    except RunFileError as exc:
        return [Located(shown, exc.line, exc.field or "(file)", exc.message, exc.hint)]
    return schema_problems("mapping", loaded, shown) or _rules(loaded.data, loaded.line_of, shown)


def _raise(problems: list[Located]) -> None:
    errors: list[KbError] = [
        RunImportError(p.message, path=p.path, line=p.line, field=p.field, hint=p.hint)
        for p in problems
    ]
    if len(errors) == 1:
        raise errors[0]
    raise ImportProblems(errors)


def read_mapping(path: Path) -> dict[str, Any]:
    """The mapping's data, or every problem of it (located at its lines) raised at once."""
    problems = mapping_problems(path, str(path))
    if problems:
        _raise(problems)
    return read_document(path, str(path)).data  # type: ignore[no-any-return]


def _files(tree: Path) -> Iterator[str]:
    for path in sorted(tree.rglob("*")):
        if path.is_file() and not path.is_symlink():
            yield path.relative_to(tree).as_posix()


def _started(value: str, rel: str) -> str:
    found = STARTED_RE.match(value)
    if found is None:
        raise RunImportError(
            f"the started part {value!r} is not a date and time YYYYMMDD-HHMMSS",
            path=rel,
            field="files.pattern",
            hint="the started group must hold the session's start, e.g. 20241015-112730",
        )
    return "{}{}{}T{}{}{}".format(*found.groups())


def _outputs(tree: Path, mapping: dict[str, Any], result: TreeImported) -> list[Output]:
    pattern = re.compile(mapping["files"]["pattern"])
    skip = dict(mapping["files"].get("skip") or {})
    starts = dict(mapping["files"].get("started") or {})
    outputs = []
    problems: list[KbError] = []
    for rel in _files(tree):
        found = pattern.fullmatch(rel)
        if found is None:
            result.unmatched += 1
            continue
        if rel in skip:
            result.skipped[rel] = skip.pop(rel)
            continue
        parts = {k: v for k, v in found.groupdict().items() if v is not None}
        if "started" not in parts:
            if parts["session"] not in starts:
                problems.append(
                    RunImportError(
                        f"its session {parts['session']!r} has no start in files.started",
                        path=rel,
                        field="files.started",
                        hint="add the session with its start, YYYYMMDD-HHMMSS, to files.started",
                    )
                )
                continue
            parts["started"] = starts[parts["session"]]
        try:
            started = _started(parts["started"], rel)
        except RunImportError as exc:
            problems.append(exc)
            continue
        outputs.append(Output(rel, parts, parts["session"], started))
    for rel in skip:
        problems.append(
            RunImportError(
                "is listed in files.skip but no file of the tree matches it",
                path=rel,
                field="files.skip",
                hint="write the path relative to TREE, as the pattern sees it",
            )
        )
    if problems:
        raise problems[0] if len(problems) == 1 else ImportProblems(problems)
    return outputs


def _token(text: str, size: int) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:size]


def _plan(mapping: dict[str, Any], outputs: list[Output]) -> dict[str, dict[str, Any]]:
    """Each output's session, repeat group and repeat: ``{rel: repeat section}``."""
    series = mapping["session"] == "series"
    first = min((o.started for o in outputs), default="")
    planned = {}
    for out in outputs:
        session_dir = "" if series else out.session
        started = first if series else out.started
        token = _token(f"{mapping['set']}/{session_dir}", 8)
        # The configuration: the path with its repeat part blanked out.
        pattern = re.compile(mapping["files"]["pattern"])
        found = pattern.fullmatch(out.rel)
        assert found is not None
        start, end = found.span("repeat")
        config = out.rel[:start] + "*" + out.rel[end:]
        planned[out.rel] = {
            "group": f"{mapping['set']}-{started}-{token}-{_token(config, 10)}",
            "index": int(out.parts["repeat"]),
            "of": int(mapping["files"]["repeats"]),
        }
    return planned


def _given(mapping: dict[str, Any], out: Output, repeat: dict[str, Any]) -> dict[str, Any]:
    source = mapping["source"]
    address = (source.get("address") or DEFAULT_ADDRESS).format_map(
        {
            **out.parts,
            "url": source["url"].rstrip("/"),
            "revision": source["revision"],
            "path": out.rel,
        }
    )
    started = out.started
    provenance = {
        # As precise as the tree tells: the month its session started.
        "recorded_at": f"{started[0:4]}-{started[4:6]}",
        "source": {
            "title": source["title"],
            "title_is_descriptive": False,
            "kind": source["kind"],
            "author": source["author"],
            "year": source.get("year"),
            "url": address,
            "locator": out.rel,
            "revision": source["revision"],
            "terms": source["terms"],
        },
    }
    facts = mapping["run"]
    for case in mapping.get("cases") or []:
        if re.search(case["pattern"], out.rel):
            facts = deep_merge(facts, case["run"])
    for key in COMMAND_KEYS:
        command = (facts.get("benchmark") or {}).get(key)
        if isinstance(command, str):
            # The author's command line, with the parts of the path in place: {clients}, {mode}…
            facts = deep_merge(facts, {"benchmark": {key: command.format_map(out.parts)}})
    return deep_merge(facts, {"origin": "measured", "provenance": provenance, "repeat": repeat})


def _checked(out: Output, tree: Path) -> tuple[list[KbError], str | None]:
    """The path's clients, mode and scale against the output's own; its server version."""
    from pgbench_kb.parse import parse_paths

    try:
        parsed = parse_paths([str(tree / out.rel)])
    except KbError as exc:
        return [RunImportError(f"cannot be parsed: {exc.message}", path=out.rel)], None
    problems: list[KbError] = []
    for group, key in CHECKED_GROUPS.items():
        said = parsed.get(key)
        if group in out.parts and said is not None and str(said) != out.parts[group]:
            problems.append(
                RunImportError(
                    f"the path says {group} {out.parts[group]} but the output says {said}",
                    path=out.rel,
                    field="files.pattern",
                    hint=f"check which part of the path the (?P<{group}>…) group takes",
                )
            )
    version = parsed.get("server_version") or None
    if version is None and parsed.get("pgbench_version"):
        # pgbench prints the server's version beside its own only when they differ.
        version = parsed.get("pgbench_version")
    return problems, version if isinstance(version, str) else None


def import_tree(tree: Path, mapping_path: Path, *, root: Path, dry_run: bool) -> TreeImported:
    """Import every output of ``tree`` that the mapping names; nothing is written unless all
    of them import (every problem is raised at once, located)."""
    if not tree.is_dir():
        raise RunImportError(
            "is not a directory", path=str(tree), hint="give the top of the result tree"
        )
    mapping = read_mapping(mapping_path)
    result = TreeImported()
    outputs = _outputs(tree, mapping, result)
    if not outputs:
        raise RunImportError(
            f"no file of {tree} matches files.pattern ({result.unmatched} files looked at)",
            path=str(mapping_path),
            field="files.pattern",
            hint="the pattern is matched against the whole path relative to TREE, with '/'",
        )
    planned = _plan(mapping, outputs)
    problems: list[KbError] = []
    seen: dict[tuple[str, int], str] = {}
    same_output: dict[str, str] = {}
    prepared = []
    for out in outputs:
        repeat = planned[out.rel]
        key = (repeat["group"], repeat["index"])
        if key in seen:
            problems.append(
                RunImportError(
                    f"is the same configuration and repeat as {seen[key]}",
                    path=out.rel,
                    field="files.pattern",
                    hint="the repeat group must take the part of the path that numbers repeats",
                )
            )
            continue
        seen[key] = out.rel
        digest = hashlib.sha256((tree / out.rel).read_bytes()).hexdigest()
        if digest in same_output:
            problems.append(
                RunImportError(
                    f"is the same output, byte for byte, as {same_output[digest]}",
                    path=out.rel,
                    field="files",
                    hint="a copied file is not a repeat: leave one out with files.skip",
                )
            )
            continue
        same_output[digest] = out.rel
        found, version = _checked(out, tree)
        problems += found
        given = _given(mapping, out, repeat)
        if version is not None and not (given.get("postgres") or {}).get("version"):
            given.setdefault("postgres", {})["version"] = version
        prepared.append((out, given))
    if problems:
        raise problems[0] if len(problems) == 1 else ImportProblems(problems)
    # The outputs the knowledge base already has, read once: a lookup per output, not a read
    # of every run file per output.
    kept = kept_outputs(root)
    # First every run built and checked, nothing written; then each written.
    for write in (False, True):
        if write and dry_run:
            break
        for out, given in prepared:
            try:
                imported = import_run(
                    raw_paths=[str(tree / out.rel)],
                    machine=None,
                    meta_path=None,
                    sets=[],
                    detected=None,
                    root=root,
                    dry_run=not write,
                    keep_raw=bool(mapping["keep_raw"]),
                    check_duplicates=not write,
                    kept=kept,
                    given=given,
                    stdout=io.StringIO(),
                )
            except ImportProblems as exc:
                problems += [_at(p, out.rel) for p in exc.problems]
                continue
            except RunImportError as exc:
                problems.append(_at(exc, out.rel))
                continue
            if write and imported is not None:
                result.runs.append(imported.run_path)
        if problems:
            raise problems[0] if len(problems) == 1 else ImportProblems(problems)
    result.sessions = len({r["group"].rsplit("-", 1)[0] for r in planned.values()})
    result.groups = len({r["group"] for r in planned.values()})
    if dry_run:
        result.runs = [Path(o.rel) for o, _ in prepared]
    return result


def _at(problem: KbError, rel: str) -> KbError:
    """A problem of one output's run, said at that output."""
    return RunImportError(
        problem.message,
        path=problem.path or rel,
        line=problem.line,
        field=problem.field,
        hint=problem.hint,
    )
