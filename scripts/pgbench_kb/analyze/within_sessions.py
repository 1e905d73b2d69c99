"""Interactions found inside each bench session (or source), never across two.

An interaction compares two effects of one factor; if the effects came from different
sessions, their difference could be the sessions' own (docs/comparisons.md, "Bench
sessions"). So squares (``interactions``) and grids (``grids``) are looked for among each
session's groups separately, and each sentence ends with the confounds and caveats of the
comparisons it rests on.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from pgbench_kb.analyze.confounds import labelled
from pgbench_kb.analyze.describe import caveat_text
from pgbench_kb.analyze.grids import find_grids
from pgbench_kb.analyze.interactions import find_interactions
from pgbench_kb.analyze.sessions import session_of


def interactions_within_sessions(
    groups: list[Any], comparisons: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The interactions (2×2 squares, then grids) found inside each session or source: an
    interaction compares two effects, so all its cells must share the state of one session
    (a contrast across sessions would be the sessions' difference). Each interaction's text
    ends with the confounds and caveats of the comparisons it rests on."""
    by_session: dict[str, list[Any]] = defaultdict(list)
    for g in groups:
        by_session[session_of(g)].append(g)
    of_group = {g.id: s for s, members in by_session.items() for g in members}
    inside: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for c in comparisons:
        s = of_group.get(c["a"]["group"])
        if (
            c["verdict"] != "not_comparable"
            and s is not None
            and s == of_group.get(c["b"]["group"])
        ):
            inside[s].append(c)
    squares: list[dict[str, Any]] = []
    grids: list[dict[str, Any]] = []
    for session in sorted(inside):
        members, cs = by_session[session], inside[session]
        if len(cs) < 2:
            continue
        squares += find_interactions(members, cs)
        grids += find_grids(members, cs)
    for square in squares:
        square["shape"] = "2x2"
    found = sorted(squares, key=lambda i: (i["machine"], i["factor"], i["id"]))
    found += sorted(grids, key=lambda i: (i["machine"], i["id"]))
    by_id = {c["id"]: c for c in comparisons}
    for i in found:
        cited = [by_id[c] for c in i["comparisons"] if c in by_id]
        confounds = labelled([x for c in cited for x in c.get("confounds") or []])
        caveats = list(
            dict.fromkeys(caveat_text(d) for c in cited for d in c.get("differs_also") or [])
        )
        i["text"] += "".join(" " + sentence for sentence in confounds)
        if caveats:
            i["text"] += " Caveat: " + "; ".join(caveats) + "."
    return found
