"""``kb diff BASE``: what a change does to the knowledge, for the person reviewing it.

A pull request adds run files; what a reviewer needs is not the YAML but its consequences:
which runs arrive, on which machines and from whom, which comparisons appear, change or go,
which verdicts flip, which key findings and claims change, which new warnings ``kb check``
gives, and what deserves a closer look (transcribed figures without raw output, a run joining
a group that already existed, a new machine whose note is missing or still a draft, a new key
finding that rests on one contributor's runs).

BASE is a folder (another checkout) or a git revision of ROOT's repository. A revision's
``data/``, ``content/`` and ``config.toml`` are read out of git (``review.tree``: plain files
only, no attribute of the tree's applies) into a temporary folder; nothing of it runs.
Both sides are analysed the way ``kb compare`` and ``kb check`` do (``build_knowledge``,
``check_paths``), so the diff speaks of exactly what the site would publish.
"""

from __future__ import annotations

import hashlib
import subprocess
import tempfile
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pgbench_kb.errors import KbError, UsageError
from pgbench_kb.review.tree import extract
from pgbench_kb.runs.files import note_files, run_files
from pgbench_kb.runs.runfile import HARDWARE_DIR, RUNS_DIR, read_run
from pgbench_kb.runs.tryout import is_smoke

#: The name the project's own runs are signed with: a pull request signing so is flagged.
MAINTAINERS = "pgbench-kb maintainers"


class DiffError(KbError):
    """BASE cannot be read (not a folder, not a revision of this repository)."""


@dataclass(frozen=True)
class Side:
    """One side of the diff: its runs (id → facts), knowledge and check findings."""

    runs: dict[str, dict[str, Any]]
    knowledge: dict[str, Any]
    warnings: set[str]  # every kb check message (errors and warnings), as printed
    notes: dict[str, bool]  # machine slug → note complete (not a draft)


@contextmanager
def base_root(base: str, root: Path) -> Iterator[Path]:
    """The project root of BASE: the folder itself, or a revision archived into a temporary
    folder that is removed afterwards."""
    folder = Path(base)
    if folder.is_dir():
        yield folder
        return
    revision = _revision(base, root)
    with tempfile.TemporaryDirectory(prefix="kb-diff-") as tmp:
        # Read out of git without the tree's attributes (review.tree): git archive would apply
        # its .gitattributes (export-ignore hides files from the diff).
        extract(root, revision, Path(tmp))
        for needed in (RUNS_DIR, HARDWARE_DIR):
            (Path(tmp) / needed).mkdir(parents=True, exist_ok=True)
        yield Path(tmp)


def _revision(base: str, root: Path) -> str:
    if base.startswith("-"):
        raise UsageError(f"{base!r} is not a revision", field="BASE", hint="e.g. kb diff main")
    found = subprocess.run(
        ["git", "-C", str(root), "rev-parse", "--verify", "--quiet", f"{base}^{{commit}}"],
        capture_output=True,
        text=True,
        check=False,
    )
    if found.returncode != 0:
        raise DiffError(
            f"{base!r} is neither a folder nor a revision of the repository at {root}",
            field="BASE",
            hint="give a branch, tag or commit (git log --oneline), or the path of a checkout",
        )
    return found.stdout.strip()


def _runs_of(root: Path) -> dict[str, dict[str, Any]]:
    out = {}
    for path in run_files(root):
        document = read_run(path, shown=path.relative_to(root).as_posix())
        data, text = document.data, document.text
        if not isinstance(data, dict) or not isinstance(data.get("id"), str):
            continue
        provenance = data.get("provenance") or {}
        results = data.get("results") or {}
        out[data["id"]] = {
            "id": data["id"],
            "path": path.relative_to(root).as_posix(),
            "machine": str(data.get("machine")),
            "contributor": str(provenance.get("contributor") or "unknown"),
            "origin": data.get("origin"),
            "group": (data.get("repeat") or {}).get("group"),
            "raw": bool(data.get("raw")),
            "tps": results.get("tps"),
            "digest": hashlib.sha256(text.encode()).hexdigest(),
            "smoke": is_smoke(data),
        }
    return out


def _notes_of(root: Path) -> dict[str, bool]:
    import frontmatter

    notes = {}
    for path in note_files(root):
        try:
            front = frontmatter.loads(path.read_text(encoding="utf-8")).metadata
        except Exception:  # a broken note is kb check's to report; here it is "not complete"
            front = {"draft_note": True}
        notes[path.stem] = not front.get("draft_note")
    return notes


def read_side(root: Path) -> Side:
    from pgbench_kb.analyze import build_knowledge
    from pgbench_kb.runs.check import check_paths

    report = check_paths([], root=root)
    return Side(
        runs=_runs_of(root),
        knowledge=build_knowledge(root),
        # Paths relative to the side's root, wherever they appear in a message (a rule across
        # files names the other file), so the two sides' messages compare.
        warnings={str(f).replace(f"{root}/", "") for f in report.findings},
        notes=_notes_of(root),
    )


def _by_id(items: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {str(i["id"]): i for i in items}


def _comparison_view(c: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": c["id"],
        "machine": c["machine"],
        "label": c.get("label") or c["factor"],
        "metric": c["metric"],
        "a": c["a"].get("summary"),
        "b": c["b"].get("summary"),
        "change_pct": c["change_pct"],
        "verdict": c["verdict"],
    }


def _tps(items: list[dict[str, Any]]) -> dict[tuple[str, ...], dict[str, Any]]:
    """The tps comparisons by their two groups (a comparison's id also hashes its factor,
    which moves when a field of both groups is corrected)."""
    return {
        (c["kind"], *sorted((c["a"]["group"], c["b"]["group"]))): c
        for c in items
        if c.get("metric", "tps") == "tps"
    }


def _key_findings(side: Side) -> dict[tuple[str, ...], str]:
    return {
        tuple(sorted(f.get("groups") or [])): f["text"]
        for f in side.knowledge["findings"]
        if f.get("key")
    }


def diff_sides(base: Side, head: Side) -> dict[str, Any]:
    """The diff as one JSON-ready object (docs/cli.md, ``kb diff``)."""
    added = sorted(set(head.runs) - set(base.runs))
    removed = sorted(set(base.runs) - set(head.runs))
    changed = sorted(
        r
        for r in set(head.runs) & set(base.runs)
        if head.runs[r]["digest"] != base.runs[r]["digest"]
    )
    per: dict[tuple[str, str], dict[str, list[str]]] = defaultdict(
        lambda: {"added": [], "changed": [], "removed": []}
    )
    for kind, ids, side in (
        ("added", added, head),
        ("changed", changed, head),
        ("removed", removed, base),
    ):
        for rid in ids:
            run = side.runs[rid]
            per[(run["machine"], run["contributor"])][kind].append(rid)
    old_c, new_c = _tps(base.knowledge["comparisons"]), _tps(head.knowledge["comparisons"])
    comparisons = {
        "added": [_comparison_view(new_c[i]) for i in sorted(set(new_c) - set(old_c))],
        "removed": [_comparison_view(old_c[i]) for i in sorted(set(old_c) - set(new_c))],
        "changed": [
            {"before": _comparison_view(old_c[i]), "after": _comparison_view(new_c[i])}
            for i in sorted(set(old_c) & set(new_c))
            if (old_c[i]["change_pct"], old_c[i]["verdict"])
            != (new_c[i]["change_pct"], new_c[i]["verdict"])
        ],
    }
    flips = [c for c in comparisons["changed"] if c["before"]["verdict"] != c["after"]["verdict"]]
    old_key, new_key = _key_findings(base), _key_findings(head)
    key_added = [new_key[k] for k in sorted(set(new_key) - set(old_key))]
    claims = [
        {"id": cid, "claim": c.get("claim"), "before": old["verdict"], "after": c["verdict"]}
        for cid, c in _by_id(head.knowledge["claims"]).items()
        if (old := _by_id(base.knowledge["claims"]).get(cid)) and old["verdict"] != c["verdict"]
    ]
    return {
        "format": "pgbench-kb/diff/1",
        "machines_added": _new_machines(base, head, added),
        "groups_added": _new_groups(base, head),
        "runs": {
            "added": len(added),
            "changed": len(changed),
            "removed": len(removed),
            "by_machine": [
                {"machine": m, "contributor": who, **ids} for (m, who), ids in sorted(per.items())
            ],
        },
        "comparisons": comparisons,
        "verdicts_flipped": flips,
        "key_findings": {
            "added": key_added,
            "removed": [old_key[k] for k in sorted(set(old_key) - set(new_key))],
        },
        "claims_changed": claims,
        "new_check_messages": sorted(head.warnings - base.warnings),
        "look_at": _flags(base, head, added, key_added),
        "why_no_new_comparison": []
        if comparisons["added"] or not added
        else _why_no_comparison(head, added),
    }


def _new_machines(base: Side, head: Side, added: list[str]) -> list[dict[str, str]]:
    """Machines the added runs bring, each with the state of its hardware note."""
    known = {r["machine"] for r in base.runs.values()}
    machines = sorted({head.runs[r]["machine"] for r in added} - known)
    return [
        {
            "machine": m,
            "note": "missing" if m not in head.notes else "complete" if head.notes[m] else "draft",
        }
        for m in machines
    ]


def _new_groups(base: Side, head: Side) -> list[dict[str, Any]]:
    """Groups of repeats (configurations) that are new, or whose runs changed: what a reader
    will see of them (the median and the spread of their tps)."""
    old = {g["id"]: sorted(g["runs"]) for g in base.knowledge["groups"]}
    return [
        {
            "id": g["id"],
            "machine": g["machine"],
            "n": g["n"],
            "statistic": g.get("statistic"),
            "center": g.get("center"),
            "cv_pct": (g.get("spread") or {}).get("cv_pct"),
            "factors": g.get("factors") or {},
            "new": g["id"] not in old,
        }
        for g in sorted(head.knowledge["groups"], key=lambda g: g["id"])
        if old.get(g["id"]) != sorted(g["runs"])
    ]


def _why_no_comparison(head: Side, added: list[str]) -> list[str]:
    """Why runs were added and no comparison is new, machine by machine (issue 35: "0
    comparison(s) new" said nothing more)."""
    reasons = []
    smoke = [r for r in added if head.runs[r].get("smoke")]
    if smoke:
        reasons.append(
            f"{len(smoke)} of the added runs are smoke runs, which no group or comparison uses"
        )
    grouped = {r: g["id"] for g in head.knowledge["groups"] for r in g["runs"]}
    for machine in sorted({head.runs[r]["machine"] for r in added if r not in smoke}):
        configurations = {
            gid for rid, gid in grouped.items() if head.runs.get(rid, {}).get("machine") == machine
        }
        if len(configurations) <= 1:
            reasons.append(
                f"{machine}: no other configuration of this machine to compare with (a "
                "comparison sets two configurations of one machine side by side)"
            )
        else:
            reasons.append(
                f"{machine}: the added runs joined configurations already compared, or differ "
                "from the machine's others in more than one field (kb compare --machine "
                f"{machine})"
            )
    return reasons


def _flags(base: Side, head: Side, added: list[str], new_key: list[str]) -> list[str]:
    """What a reviewer must look at, in words."""
    flags = []
    for who in sorted({head.runs[r]["contributor"] for r in added}):
        if " ".join(who.split()).casefold().startswith(MAINTAINERS.casefold()):
            flags.append(
                f"runs are signed as the project's maintainers ({who!r}): only their own runs "
                "may be; read who actually made them"
            )
    for rid in added:
        run = head.runs[rid]
        if run["origin"] == "transcribed" and not run["raw"]:
            flags.append(f"{rid}: transcribed figures without the source's raw output")
    old_groups = {r["group"]: r for r in base.runs.values() if r["group"]}
    for rid in added:
        group = head.runs[rid]["group"]
        if group and group in old_groups:
            owner = old_groups[group]["contributor"]
            flags.append(
                f"{rid}: joins repeat group {group}, which already existed (its runs are {owner}'s)"
            )
    for machine in sorted(
        {head.runs[r]["machine"] for r in added} - {r["machine"] for r in base.runs.values()}
    ):
        if machine not in head.notes:
            flags.append(f"new machine {machine}: no hardware note content/hardware/{machine}.md")
        elif not head.notes[machine]:
            flags.append(f"new machine {machine}: its hardware note is still a draft")
    by_text = {f["text"]: f for f in head.knowledge["findings"]}
    for text in new_key:
        groups = set(by_text[text].get("groups") or [])
        who = {
            head.runs[r]["contributor"]
            for g in head.knowledge["groups"]
            if g["id"] in groups
            for r in g["runs"]
            if r in head.runs
        }
        if len(who) == 1:
            flags.append(
                f"a new key finding rests on one contributor's runs ({who.pop()}): {text[:160]}"
            )
    return flags


def knowledge_diff(base: str, root: Path) -> dict[str, Any]:
    """``kb diff BASE`` for the project at ROOT."""
    head = read_side(root)
    with base_root(base, root) as other:
        old = read_side(other)
    return diff_sides(old, head)
