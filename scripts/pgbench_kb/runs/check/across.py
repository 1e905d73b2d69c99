"""Findings across run files: duplicate ids, raw outputs and configurations; noisy repeat groups
and outliers.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from pgbench_kb.runs.check.report import Finding, RunSummary
from pgbench_kb.runs.check.values import NOISY_CV, outliers, show_num, variation


def across_runs(summaries: Sequence[RunSummary]) -> list[Finding]:
    """Duplicates (id, raw output, machine + configuration + time) and noisy repeat groups."""
    findings = []
    first_id: dict[str, RunSummary] = {}
    first_raw: dict[str, RunSummary] = {}
    first_config: dict[str, RunSummary] = {}
    groups: dict[str, list[RunSummary]] = defaultdict(list)
    for s in summaries:
        folded = s.id.lower()
        if folded in first_id:
            other = first_id[folded]
            if other.id == s.id:
                message = f"{s.id!r} is also the id of {other.path}"
            else:
                message = (
                    f"{s.id!r} differs only in case from {other.id!r}, the id of {other.path} "
                    "(Hugo lowercases addresses: one run's page would replace the other's)"
                )
            findings.append(Finding(s.path, s.lines["id"], "id", message))
        first_id.setdefault(folded, s)
        for index, digest in s.raw_hashes:
            if digest in first_raw and first_raw[digest].path != s.path:
                findings.append(
                    Finding(
                        s.path,
                        s.lines.get(f"raw.{index}.sha256"),
                        f"raw.{index}.sha256",
                        f"duplicate: the same raw output as {first_raw[digest].path}",
                    )
                )
            first_raw.setdefault(digest, s)
        if s.config_key in first_config:
            findings.append(
                Finding(
                    s.path,
                    s.lines["machine"],
                    "machine",
                    f"duplicate: same machine, configuration and time as "
                    f"{first_config[s.config_key].path}",
                )
            )
        first_config.setdefault(s.config_key, s)
        if s.group:
            groups[s.group].append(s)
    for group, members in groups.items():
        findings += _membership(group, members)
        # Disturbed runs feed no group (their own warning says so): the noise is the quiet ones'.
        findings += _group_findings(group, [m for m in members if not m.disturbed])
    return findings


def _membership(group: str, members: list[RunSummary]) -> list[Finding]:
    """A repeat group belongs to one contributor and one measuring session; its indexes are
    distinct and it has no more runs than ``repeat.of``.

    The group's owner is the contributor of most of its runs (the first run's, on a tie) and
    its session that of the owner's first run: a run that joins from elsewhere carries the
    error, not the runs it joined. Regression guard (issue #22): a fabricated run joined
    another contributor's group (a duplicate ``repeat.index``, 4 runs of ``of: 3``) and moved
    its median with no word on the attacker's file."""
    findings = []
    counts: dict[str, int] = defaultdict(int)
    for m in members:
        counts[m.contributor] += 1
    owner = max(
        counts,
        key=lambda c: (counts[c], -next(i for i, m in enumerate(members) if m.contributor == c)),
    )
    first = next(m for m in members if m.contributor == owner)
    kept: list[RunSummary] = []
    for m in members:
        if m.contributor != owner:
            findings.append(
                Finding(
                    m.path,
                    m.lines["provenance.contributor"],
                    "repeat.group",
                    f"group {group} belongs to {owner!r} ({first.path}): a run cannot join "
                    f"another contributor's repeats; give this run a group of its own",
                )
            )
            continue
        if m.session != first.session:
            apart = [
                name
                for name, a, b in zip(SESSION_FIELDS, m.session, first.session, strict=True)
                if a != b
            ]
            findings.append(
                Finding(
                    m.path,
                    m.lines["repeat.group"],
                    "repeat.group",
                    f"group {group} was measured in another session ({first.path} differs in "
                    f"{', '.join(apart)}): repeats come from one session; give this run a "
                    "group of its own",
                )
            )
            continue
        kept.append(m)
    rerun_findings, kept = _reruns(group, kept)
    findings += rerun_findings
    seen: dict[int, RunSummary] = {}
    planned = first.repeat_of
    for m in kept:
        if m.repeat_of != planned:
            findings.append(
                Finding(
                    m.path,
                    m.lines["repeat.of"],
                    "repeat.of",
                    f"{m.repeat_of}, but {first.path} of the same group {group} says {planned}",
                )
            )
        if m.repeat_index in seen:
            findings.append(
                Finding(
                    m.path,
                    m.lines["repeat.index"],
                    "repeat.index",
                    f"{m.repeat_index} is also the index of {seen[m.repeat_index].path} in "
                    f"group {group}",
                )
            )
        seen.setdefault(m.repeat_index, m)
    extra = sorted(kept, key=lambda m: (m.repeat_index, m.path))[planned:] if planned else []
    for m in extra:
        if m.repeat_index > planned:
            continue  # the schema's rule on index ≤ of, or the duplicate above, says it
        findings.append(
            Finding(
                m.path,
                m.lines["repeat.of"],
                "repeat.of",
                f"group {group} has {len(kept)} runs, more than its of: {planned}",
            )
        )
    return findings


def _reruns(group: str, members: list[RunSummary]) -> tuple[list[Finding], list[RunSummary]]:
    """A rerun (``repeat.design.rerun_of``) replaces a disturbed run of its group with its own
    ``repeat.index``: the replaced run no longer counts as a repeat (its index is free again).
    A rerun that names anything else is an error on the rerun."""
    by_id = {m.id: m for m in members}
    findings, replaced = [], set()
    for m in members:
        if not m.rerun_of:
            continue
        target = by_id.get(m.rerun_of)
        if target is None or not target.disturbed or target.repeat_index != m.repeat_index:
            findings.append(
                Finding(
                    m.path,
                    m.lines["repeat.design.rerun_of"],
                    "repeat.design.rerun_of",
                    f"{m.rerun_of} is not a disturbed run of group {group} with repeat.index "
                    f"{m.repeat_index}: a rerun names the disturbed run it replaces",
                )
            )
            continue
        replaced.add(target.id)
    return findings, [m for m in members if m.id not in replaced]


#: The parts of ``run.session_key``, in order, as named in messages.
SESSION_FIELDS = (
    "machine",
    "provenance.harness.name",
    "provenance.harness.profile",
    "provenance.harness.target",
    "provenance.source.title",
    "provenance.source.locator",
    "provenance.contributed_at",
)


def _group_findings(group: str, members: list[RunSummary]) -> list[Finding]:
    values = [m.tps for m in members if m.tps is not None]
    if not members or len(values) != len(members):
        return []  # every run of it disturbed, or a run without tps: nothing to judge
    findings = []
    cv = variation(values)
    first = members[0]
    if cv is not None and cv > NOISY_CV:
        findings.append(
            Finding(
                first.path,
                first.lines["repeat.group"],
                "repeat.group",
                f"noisy repeats: tps varies by {cv:.1%} (coefficient of variation) over the "
                f"{len(values)} runs of group {group} (above {NOISY_CV:.0%})",
                "warning",
            )
        )
    for index, value, middle in outliers(values):
        member = members[index]
        findings.append(
            Finding(
                member.path,
                member.lines["results.tps"],
                "results.tps",
                f"outlier: {show_num(value)} is {abs(value - middle) / middle:.0%} away from the "
                f"median of the other repeats of group {group} ({show_num(middle)})",
                "warning",
            )
        )
    return findings
