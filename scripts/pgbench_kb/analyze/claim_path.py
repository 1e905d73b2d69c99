"""A ``path`` claim of ``data/claims.yaml``: steps a source took one after another (tuning a
server setting by setting), checked as a whole and step by step.

``concerns.steps`` lists the steps in order, each a mapping of the fields that choose its
groups (with an optional ``label``); ``machine`` and ``where`` narrow every step, and ``same``
names the fields that set one path apart from another (the PostgreSQL version: one path per
version). Each path needs exactly one group per step. Its check is the change from the first
step to the last (``ratio``, ``change_pct``, judged by ``expects`` as a ``comparison`` claim's
change is), and ``steps`` gives, for every step, its tps, its own change against the step
before (``step_pct``, its marginal share) and the change since the first step
(``cumulative_pct``). The text shows both for every step, so a reader sees which step
carried the path. A step on a group the source distrusts (``set_aside``) is shown with the
reason; only a path whose first or last step is such a group is set aside as a whole.
"""

from __future__ import annotations

from typing import Any

from pgbench_kb import numbers as fmt
from pgbench_kb.analyze import claims as base


def _paths(
    claim: dict[str, Any], groups: dict[str, dict[str, Any]]
) -> tuple[dict[Any, list[dict[str, Any]]], list[str]]:
    """One list of groups per path (keyed by the ``same`` fields' values), and what is missing
    or ambiguous."""
    concerns = claim["concerns"]
    same = concerns.get("same") or []
    by_path: dict[Any, dict[int, list[dict[str, Any]]]] = {}
    for number, step in enumerate(concerns["steps"]):
        for group in base._select(groups, concerns, step):
            path = tuple(base._key(base._field(group, f)) for f in same)
            by_path.setdefault(path, {}).setdefault(number, []).append(group)
    paths, problems = {}, []
    for path, steps in sorted(by_path.items(), key=lambda kv: str(kv[0])):
        name = ", ".join(str(v) for v in path) or "the path"
        missing = [
            _label(s) for n, s in enumerate(concerns["steps"]) if not steps.get(n)
        ]  # fmt: skip
        several = [_label(concerns["steps"][n]) for n, found in steps.items() if len(found) > 1]
        if missing:
            problems.append(f"{name}: no group for {', '.join(missing)}")
        elif several:
            problems.append(f"{name}: more than one group for {', '.join(several)}")
        else:
            paths[path] = [steps[n][0] for n in range(len(concerns["steps"]))]
    return paths, problems


def _label(step: dict[str, Any]) -> str:
    return base._item_label(step)


def _pct(ratio: float) -> float:
    return round((ratio - 1) * 100, 2)


def check_path(claim: dict[str, Any], groups: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """A path claim checked: one check per path, its steps with their marginal and cumulative
    changes."""
    paths, problems = _paths(claim, groups)
    if not paths:
        why = "; ".join(problems) or "no group of the runs matches its steps"
        if claim.get("reason"):
            why = f"{claim['reason'].strip().rstrip('.')} ({why})"
        return base._unchecked(claim, why)
    labels = [_label(s) for s in claim["concerns"]["steps"]]
    checks = []
    for path, chosen in paths.items():
        first, last = chosen[0], chosen[-1]
        ratio = last["center"] / first["center"]
        steps = []
        for number, group in enumerate(chosen):
            before = chosen[number - 1] if number else None
            steps.append(
                {
                    "label": labels[number],
                    "group": group["id"],
                    "tps": group["center"],
                    "step_pct": _pct(group["center"] / before["center"]) if before else None,
                    "cumulative_pct": _pct(group["center"] / first["center"]),
                    "set_aside": base._aside(claim, group),
                }
            )
        checks.append(
            {
                "comparison": None,
                "groups": [g["id"] for g in chosen],
                "version": ", ".join(str(v) for v in path) or None,
                "ratio": round(ratio, 4),
                "change_pct": _pct(ratio),
                "agrees": base._agrees(claim["expects"], ratio),
                "verdict": None,
                "caveats": [],
                "disks": None,
                "set_aside": base._aside(claim, first, last),
                "steps": steps,
            }
        )
    counted = [x for x in checks if not x["set_aside"]]
    if not counted:
        return base._unchecked(claim, "every path starts or ends on a group set aside")
    verdict, yes = base._verdict(counted)
    shown = f"holds on {next(iter(yes))} only" if verdict == "holds on one version only" else None
    figures = "; ".join(_path_text(x) for x in checks)
    if problems:
        figures += "; not checked: " + "; ".join(problems)
    out = base._checked(claim, verdict, checks, figures)
    out["holds_on"] = sorted(yes) if verdict == "holds on one version only" else None
    if shown:
        out["text"] = base._with_notes(claim, f"{claim.get('claim')} — {shown}: {figures}.")
    return out


def _path_text(check: dict[str, Any]) -> str:
    """``on 8.2.14, 409 → 2,323 tps (+468.0%): WAL buffers and checkpoint segments +108.6%
    (+108.6% in all), …``"""
    steps = check["steps"]
    parts = []
    for step in steps[1:]:
        aside = f"; {step['set_aside']}" if step["set_aside"] else ""
        parts.append(
            f"{step['label']} {fmt.change(step['step_pct'])} "
            f"({fmt.change(step['cumulative_pct'])} in all{aside})"
        )
    where = f"on {check['version']}, " if check["version"] else ""
    head = (
        f"{where}{fmt.figure(steps[0]['tps'])} → {fmt.figure(steps[-1]['tps'])} tps "
        f"({fmt.change(check['change_pct'])})"
    )
    if check["set_aside"]:
        head += f", set aside because {check['set_aside']}"
    return f"{head}: " + ", ".join(parts)
