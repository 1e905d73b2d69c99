"""``kb compare --machine SLUG --factor FIELD``: keep the part of the knowledge asked for."""

from __future__ import annotations

import difflib
from typing import Any

from pgbench_kb.errors import UsageError


def _names_machine(text: str, slug: str) -> bool:
    words = text.replace("(client ", " ").replace(")", " ").replace(" vs ", " ").split()
    return slug in words


def _names_field(factor: str, field: str) -> bool:
    return any(f == field or f.startswith(field + ".") for f in factor.split("+"))


def select(
    knowledge: dict[str, Any], *, machine: str | None = None, factor: str | None = None
) -> dict[str, Any]:
    """A copy of ``knowledge`` with only the comparisons (and what rests on them) asked for,
    and the curves and stability rows that go with them: ``machine`` keeps the curves and the
    stability rows of that machine; ``factor`` keeps the curves that sweep it
    (``benchmark.clients``) and the stability rows of the groups the kept comparisons and
    curves rest on. An unknown machine or field is a UsageError naming the closest known
    ones."""
    if machine is None and factor is None:
        return knowledge
    groups = knowledge.get("groups", [])
    if machine is not None:
        known = sorted(
            {g["machine"] for g in groups}
            | {g["client_machine"] for g in groups if g["client_machine"]}
        )
        if machine not in known:
            close = difflib.get_close_matches(machine, known, n=3)
            raise UsageError(
                f"no runs on machine {machine!r}",
                field="--machine",
                hint=f"did you mean {', '.join(close)}?"
                if close
                else f"known: {', '.join(known[:8])}",
            )
    if factor is not None:
        fields = sorted({f for g in groups for f in g["factors"]} | {"machine"})
        if not any(f == factor or f.startswith(factor + ".") for f in fields):
            close = difflib.get_close_matches(factor, fields, n=3)
            raise UsageError(
                f"{factor!r} is not a factor of any run",
                field="--factor",
                hint=(
                    f"did you mean {', '.join(close)}?"
                    if close
                    else "give a run-file field such as storage.wal.placement"
                ),
            )
    kept = [
        c
        for c in knowledge["comparisons"]
        if (machine is None or _names_machine(c["machine"], machine))
        and (factor is None or _names_field(c["factor"], factor))
    ]
    ids = {c["id"] for c in kept}
    out = dict(knowledge)
    out["comparisons"] = kept
    out["interactions"] = [
        i for i in knowledge.get("interactions", []) if set(i.get("comparisons", [])) & ids
    ]
    out["findings"] = [f for f in knowledge.get("findings", []) if set(f["comparisons"]) & ids]
    out["pooled"] = [p for p in knowledge.get("pooled") or [] if set(p["comparisons"]) & ids]
    # A claim of groups, a ranking or figures rests on groups rather than on a comparison: it
    # is kept when one of its checks compares groups that kept comparisons compare too.
    compared = {c[s]["group"] for c in kept for s in ("a", "b")}
    out["claims"] = [
        c
        for c in knowledge.get("claims", [])
        if {x["comparison"] for x in c["checks"]} & ids
        or any(
            x["comparison"] is None and set(x.get("groups") or [None]) <= compared
            for x in c["checks"]
        )
    ]
    out["curves"] = [
        c
        for c in knowledge.get("curves", [])
        if (machine is None or _names_machine(c["machine"], machine))
        and (factor is None or _names_field(c["swept"], factor))
    ]
    group_ids = {c[s]["group"] for c in kept for s in ("a", "b")}
    shown = group_ids | {g for c in out["curves"] for g in c["groups"]}
    out["stability"] = [
        e
        for e in knowledge.get("stability", [])
        if (machine is None or e["machine"] == machine) and (factor is None or e["group"] in shown)
    ]
    steady = {e["group"] for e in out["stability"]}
    out["stability_groups"] = [
        s for s in knowledge.get("stability_groups", []) if s["group"] in steady
    ]
    out["groups"] = [
        g
        for g in groups
        if g["id"] in group_ids
        or (machine is not None and machine in (g["machine"], g["client_machine"]))
    ]
    return out
