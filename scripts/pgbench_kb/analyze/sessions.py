"""Bench sessions as a level of variation: which comparisons can be judged, and how.

Repeats inside one bench session share that session's state of the machine (its load, its
caches, the server just started, the files just written), so their spread measures only the
noise *within* the session. Two sessions of the same configuration can differ far more (on the
development machine one configuration gave 45,314 tps in one session and 12,197 in another).
Kalibera and Jones ("Rigorous Benchmarking in Reasonable Time", ISMM 2013) call this a level of
repetition: each level that varies adds its own variance, and a comparison has to be replicated
at the highest level that varies, or that level's variance has to be known. Georges et al.
("Statistically Rigorous Java Performance Evaluation", OOPSLA 2007) make the same point for
VM invocations against iterations inside one invocation.

So a comparison is judged by the repeats' noise only when its two groups come from one bench
session (for transcribed figures: one source, whose own design we take as it is). Otherwise:

* when the machine has configurations measured in two or more sessions, the between-session
  variance component is estimated from them (``BetweenSessions``) and added to the interval of
  the comparison (``test.method`` names it);
* when it has none, the comparison is ``not_comparable``: nothing measured how far sessions of
  that machine move a result, so no verdict is possible, and no finding or interaction rests
  on it.

A comparison whose sides also differ in how each run was made — run length (``-T``/``-t``, or
one against the other), warm-up, pgbench's own version — is ``not_comparable`` across
sessions even then: the between-session variance was measured with the design held constant
and says nothing of those differences. Inside one session or source they stay caveats.

A comparison across sessions of two configurations that were also compared *inside* one
session (``compared_inside``) is ``not_comparable`` too: the comparison inside the session is
the evidence, free of the session's own level; across sessions the same pair would add that
level to the difference and, with a between-session variance estimated from a few degrees of
freedom, could call it an effect (two durability sessions against the baseline of the
``versions`` sessions did: full_page_writes off "higher" by 8–11% across them, within the
noise inside each).

The estimator (one-way random effects, per configuration, pooled per machine): for a
configuration measured in k ≥ 2 sessions with session means m_i of the logarithms, within
variances s_i² and n_i runs, the between-session component is the variance of the m_i less the
part the within noise explains, ``max(0, var(m_i) − mean(s_i² / n_i))``, with k − 1 degrees of
freedom; a configuration counts as one only with the design held constant (``HOW_RUN`` the
same in its sessions). The machine's estimate pools the configurations by their degrees of
freedom. The
cross-session interval is Welch's on the logarithms with ``2σ²_b`` added to the variance of
the difference (each side's mean carries one session's effect), the degrees of freedom by
Welch–Satterthwaite with the pooled k − 1 for that term: with one configuration in two
sessions (one degree of freedom) the interval is very wide, as it should be.
"""

from __future__ import annotations

import contextlib
import math
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from pgbench_kb.analyze.verdict import CONFIDENCE, METHOD, Test, t_quantile, welch_log

#: ``test.method`` of a cross-session comparison judged with the between-session variance.
BETWEEN_METHOD = f"{METHOD}+between-session"

#: What a comparison inside one session rests on, by the kind of session.
BASIS = {"bench": "one session", "source": "one source", "day": "one day", "group": "one group"}

#: Incidental fields that say how each run was made; across sessions they are not covered by
#: a between-session variance measured with the design held constant.
HOW_RUN = (
    "benchmark.duration_s",
    "benchmark.transactions_per_client",
    "benchmark.warmup",
    "benchmark.pgbench_version",
)


def session_of(group: Any) -> str:
    """The session a group was measured in: its bench session (``bench <start>-<token>``), its
    source for transcribed figures (``source <title>``), for other measured runs their machine
    and day (``day <machine> <YYYY-MM-DD>``: imported runs carry no bench session), else the
    group itself (a session of its own)."""
    session = group.incidental.get("repeat.session")
    if isinstance(session, str) and session:
        return f"bench {session}"
    first = group.runs[0]
    if all(r.origin == "transcribed" for r in group.runs) and first.source_title:
        return f"source {first.source_title}"
    day = group.incidental.get("provenance.recorded_at")
    if isinstance(day, str) and len(day) == 10:
        # Imported runs carry no bench session: those of one machine and one day are taken
        # as one session (the harness always records its own).
        return f"day {group.machine} {day}"
    return f"group {group.id}"


@dataclass(frozen=True)
class Between:
    """The between-session variance of one machine's results (on the log scale)."""

    variance: float
    df: int
    configurations: int
    sessions: int

    def as_dict(self) -> dict[str, Any]:
        return {
            "variance_log": round(self.variance, 6),
            "cv_pct": round(100 * math.sqrt(math.exp(self.variance) - 1), 2),
            "df": self.df,
            "configurations": self.configurations,
            "sessions": self.sessions,
        }


def _log_stats(values: list[float]) -> tuple[float, float, int]:
    logs = [math.log(v) for v in values]
    mean = math.fsum(logs) / len(logs)
    var = math.fsum((x - mean) ** 2 for x in logs) / (len(logs) - 1) if len(logs) > 1 else 0.0
    return mean, var, len(logs)


def estimate(
    cells: Iterable[tuple[Any, Any, str, list[float] | None]],
) -> dict[Any, Between]:
    """``(machine key, configuration key, session, values)`` per group → each machine's
    between-session variance, for the machines with a configuration in two or more sessions
    (groups of one value take part through their mean, with no within variance)."""
    by_config: dict[tuple[Any, Any], dict[str, list[float]]] = defaultdict(dict)
    for machine, config, session, values in cells:
        usable = [v for v in values or () if v > 0]
        if usable and session not in by_config[(machine, config)]:
            by_config[(machine, config)][session] = usable
    pooled: dict[Any, list[tuple[float, int, int]]] = defaultdict(list)
    for (machine, _config), sessions in by_config.items():
        if len(sessions) < 2:
            continue
        stats = [_log_stats(v) for v in sessions.values()]
        means = [m for m, _v, _n in stats]
        k = len(means)
        grand = math.fsum(means) / k
        var_means = math.fsum((m - grand) ** 2 for m in means) / (k - 1)
        within = math.fsum(v / n for _m, v, n in stats) / k
        pooled[machine].append((max(0.0, var_means - within), k - 1, k))
    out = {}
    for machine, parts in pooled.items():
        df = sum(d for _e, d, _k in parts)
        variance = math.fsum(e * d for e, d, _k in parts) / df
        out[machine] = Between(variance, df, len(parts), sum(k for _e, _d, k in parts))
    return out


def welch_between(a: list[float] | None, b: list[float] | None, between: Between) -> Test:
    """Welch's interval on the logarithms with the between-session variance of both sides'
    session effects added; ``spread_unknown`` when a side has fewer than two values."""
    if not a or not b or len(a) < 2 or len(b) < 2 or min(*a, *b) <= 0:
        return Test("spread_unknown", None, None, None)
    ma, va, na = _log_stats(a)
    mb, vb, nb = _log_stats(b)
    parts = [(va / na, na - 1), (vb / nb, nb - 1), (2 * between.variance, between.df)]
    se2 = math.fsum(p for p, _d in parts)
    diff = mb - ma
    if se2 <= 0.0:
        verdict = "higher" if diff > 0 else "lower" if diff < 0 else "within_noise"
        return Test(verdict, math.exp(diff), math.exp(diff), None, BETWEEN_METHOD, diff, 0.0)
    df = se2 * se2 / math.fsum(p * p / d for p, d in parts if p > 0 and d > 0)
    half = t_quantile(0.5 + CONFIDENCE / 2.0, max(round(df, 2), 0.01)) * math.sqrt(se2)
    low, high = math.exp(diff - half), math.exp(diff + half)
    verdict = "higher" if low > 1.0 else "lower" if high < 1.0 else "within_noise"
    return Test(verdict, low, high, df, BETWEEN_METHOD, diff, math.sqrt(se2))


def how_run_differs(differs_also: list[dict[str, Any]]) -> list[str]:
    """The fields of ``HOW_RUN`` among a comparison's incidental differences."""
    return sorted(
        {
            d["field"]
            for d in differs_also
            if any(d["field"] == p or d["field"].startswith(p + ".") for p in HOW_RUN)
        }
    )


def configuration(group: Any) -> tuple[Any, Any]:
    """A group's configuration, whatever session it was measured in: machine and factors."""
    return (group.hardware_key, group.factor_key)


def compared_inside(groups: Iterable[Any]) -> set[frozenset[tuple[Any, Any]]]:
    """The pairs of configurations measured together in at least one session (each pair as a
    frozenset of two ``configuration`` keys)."""
    by_session: dict[str, set[tuple[Any, Any]]] = defaultdict(set)
    for group in groups:
        by_session[session_of(group)].add(configuration(group))
    return {
        frozenset((x, y)) for found in by_session.values() for x in found for y in found if x != y
    }


def judge(
    a: Any,
    b: Any,
    values: Callable[[Any], list[float] | None],
    between: dict[Any, Between],
    differs_also: list[dict[str, Any]],
    inside: set[frozenset[tuple[Any, Any]]] | None = None,
    machine: dict[Any, Between] | None = None,
) -> tuple[Test, dict[str, Any]]:
    """The test of B against A and what it rests on (``sessions`` of the comparison JSON):
    ``{"a", "b", "shared", "basis", "between"}``, with ``why`` and, for a ``none`` basis,
    ``how_run_differs`` (the fields) when the sides were run differently or
    ``compared_inside: true`` when their configurations were also compared inside one session.
    ``values`` gives a group's per-run values of the metric compared; ``between`` the machines'
    between-session variances; ``inside`` the pairs of ``compared_inside``; ``machine`` the
    between-session variances keyed ``(hardware key, design_of)`` for ``machine_between``
    (``between`` when not given), which a comparison inside a bench session carries for a
    pooled estimate over sessions (``pooling.py``) and does not use itself."""
    sa, sb = session_of(a), session_of(b)
    info: dict[str, Any] = {"a": sa, "b": sb, "shared": sa == sb, "between": None}
    if sa == sb:
        info["basis"] = BASIS[sa.split(" ", 1)[0]]
        machine_estimate = (between if machine is None else machine).get(
            (a.hardware_key, design_of(a))
        )
        if machine_estimate is not None and sa.startswith("bench "):
            # Not used by this comparison: what a pooled estimate over several sessions of
            # the same pair takes as its heterogeneity when it has only two (pooling.py).
            info["machine_between"] = machine_estimate.as_dict()
        return welch_log(values(a), values(b)), info
    same_machine = a.hardware_key == b.hardware_key
    estimate_ = between.get((a.hardware_key, design_of(a))) if same_machine else None
    how = how_run_differs(differs_also)
    sources = sa.startswith("source ") or sb.startswith("source ")
    if (
        not how
        and not sources
        and frozenset((configuration(a), configuration(b))) in (inside or ())
    ):
        info["basis"] = "none"
        info["compared_inside"] = True
        info["why"] = (
            "the same two configurations were also compared inside one session, where the "
            "session's own level does not enter the difference: that comparison is the evidence"
        )
        return Test("not_comparable", None, None, None), info
    if estimate_ is None or how or sources:
        info["basis"] = "none"
        if how:
            info["how_run_differs"] = how
        info["why"] = _why_not(sa, sb, same_machine, estimate_, how)
        return Test("not_comparable", None, None, None), info
    info["basis"] = "between-session variance"
    info["between"] = estimate_.as_dict()
    return welch_between(values(a), values(b), estimate_), info


def _why_not(
    sa: str, sb: str, same_machine: bool, estimate_: Between | None, how: list[str]
) -> str:
    if not same_machine:
        return "the two sides were measured on different machines in different sessions"
    if sa.startswith("source ") or sb.startswith("source "):
        return "the two sides come from different sources (or a source and our own bench)"
    if how:
        return "the two sessions also differ in how each run was made: " + ", ".join(how)
    assert estimate_ is None
    return (
        "the two sides were measured in different bench sessions, and no configuration of "
        "this machine was measured in two sessions, with runs made as these were, to tell how "
        "far sessions move a result"
    )


def design_of(group: Any) -> tuple[str, ...]:
    """How a group's runs were made (``HOW_RUN``: run length, warm-up, pgbench's version), as
    a key: sessions are pooled for the between-session variance only with the design held
    constant. Kept on the group once made (``_design``): every comparison and metric asks
    again (tens of thousands of times on 10,000 runs)."""
    found = getattr(group, "_design", None)
    if found is not None:
        return found
    found = tuple(
        repr(
            sorted(
                (k, v) for k, v in group.incidental.items() if k == name or k.startswith(name + ".")
            )
        )
        for name in HOW_RUN
    )
    with contextlib.suppress(AttributeError):  # a frozen or slotted stand-in: made each time
        group._design = found
    return found


def machine_between(groups: list[Any]) -> dict[Any, Between]:
    """Each machine's between-session variance of tps per design, keyed ``(hardware key,
    design_of)``, from its measured groups (a source's figures are not sessions of a bench).

    A configuration counts as measured again in another session only when its runs were made
    the same way there (two sessions of 10-second and of 60-second trials differ by more than
    the sessions), and an estimate serves only comparisons whose runs were made that way: how
    far sessions of minute-long trials on a quiet machine move a result says nothing of
    sessions of 10-second trials on a busy one."""
    return estimate(
        ((g.hardware_key, design_of(g)), g.factor_key, s, g.values or [g.center])
        for g in groups
        if not (s := session_of(g)).startswith("source ") and (g.values or g.statistic == "single")
    )


def sessions_summary(groups: list[Any]) -> list[dict[str, Any]]:
    """Per machine: its bench sessions and, where a configuration was measured in two or
    more of them with the same design, the between-session variance (``sessions`` of the
    Comparisons JSON): ``between`` is the estimate with the most degrees of freedom and
    ``by_design`` every estimate with the design it holds for (``how_run``)."""
    between = machine_between(groups)
    machines: dict[Any, dict[str, Any]] = {}
    how_run: dict[tuple[Any, tuple[str, ...]], dict[str, Any]] = {}
    for g in groups:
        entry = machines.setdefault(
            g.hardware_key, {"machine": g.machine, "sessions": set(), "between": None}
        )
        session = session_of(g)
        if session.startswith("bench "):
            entry["sessions"].add(session)
        how_run.setdefault(
            (g.hardware_key, design_of(g)),
            {
                k: v
                for k, v in sorted(g.incidental.items())
                if any(k == name or k.startswith(name + ".") for name in HOW_RUN)
            },
        )
    out = []
    for hardware, entry in machines.items():
        if not entry["sessions"]:
            continue
        designs = sorted(
            ((key, found) for key, found in between.items() if key[0] == hardware),
            key=lambda item: (-item[1].df, item[0][1]),
        )
        out.append(
            {
                "machine": entry["machine"],
                "sessions": sorted(entry["sessions"]),
                "between": designs[0][1].as_dict() if designs else None,
                "by_design": [
                    {"how_run": how_run[key], **found.as_dict()} for key, found in designs
                ],
            }
        )
    return sorted(out, key=lambda e: e["machine"])
