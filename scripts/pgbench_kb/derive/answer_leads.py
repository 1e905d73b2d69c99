"""What the placeholders of an answer's lead read (``data/answers.yaml``'s header lists them):
``{CLAIM.range}``, ``{CLAIM.sure}``… of a claim as analyze checked it (``ClaimFigures``),
``{SET.verdicts}``, ``{SET.bound}``… of a selection of comparisons (``SetFigures``), and the
formatter that fills a lead and names the line of an unknown placeholder (``LeadFields``).
Figures are written by ``pgbench_kb/numbers.py``."""

from __future__ import annotations

import string
from typing import Any

from pgbench_kb import numbers as fmt
from pgbench_kb.analyze.costs import SMALLEST_CHANGE_PCT, cost_clause, reported, span_clause
from pgbench_kb.analyze.txcosts import COSTS
from pgbench_kb.derive.answers_file import answer_error
from pgbench_kb.runs.runfile import Loaded

#: How the verdicts of comparisons read in a lead, in this order.
VERDICT_PHRASES = (
    ("higher", "higher"),
    ("lower", "lower"),
    ("within_noise", "within the noise"),
    ("spread_unknown", "of unknown spread"),
    ("not_comparable", "not comparable across sessions"),
    ("not_significant", "not significant once adjusted for the other tests"),
)


class ClaimFigures:
    """A claim of ``data/claims.yaml`` as analyze checked it, as a lead's placeholders read."""

    def __init__(
        self,
        claim: dict[str, Any],
        groups: dict[str, Any],
        sources: dict[str, Any],
        pairs: dict[frozenset[str], str] | None = None,
    ):
        self.claim = claim
        self._pairs = pairs or {}
        self.counted = [
            c for c in claim.get("checks") or [] if isinstance(c, dict) and not c.get("set_aside")
        ]
        self._groups = [
            groups[g] for c in self.counted for g in c.get("groups") or [] if g in groups
        ]
        self._sources = sources

    def _changes(self) -> list[float]:
        return [float(c["change_pct"]) for c in self.counted if c.get("change_pct") is not None]

    @property
    def range(self) -> str:
        values = sorted(abs(v) for v in self._changes())
        if not values:
            return "no figures"
        low, high = (f"{v:,.1f}" for v in (values[0], values[-1]))
        return f"{low}%" if low == high else f"{low}–{high}%"

    @property
    def changes(self) -> str:
        return _and([str(fmt.change(v)) for v in self._changes()]) or "no figures"

    @property
    def n(self) -> str:
        return str(len(self._changes()))

    @property
    def machine(self) -> str:
        return _and(sorted({str(g.get("machine")) for g in self._groups})) or "no machine"

    @property
    def source(self) -> str:
        title = str(self.claim.get("source"))
        name = str(self._sources.get(title) or title)
        years = sorted(
            {str((g.get("incidental") or {}).get("provenance.recorded_at", ""))[:4]
             for g in self._groups} - {""}
        )  # fmt: skip
        return f"{name}, {_and(years)}" if years else name

    @property
    def version(self) -> str:
        versions = sorted({str(g.get("config", {}).get("version")) for g in self._groups})
        return f"PostgreSQL {_and(versions)}" if versions else "version not stated"

    @property
    def sure(self) -> str:
        return sureness(self._groups, [self._verdict(c) for c in self.counted])

    @property
    def verdicts(self) -> str:
        return verdict_counts([self._verdict(c) for c in self.counted])

    def _verdict(self, check: dict[str, Any]) -> Any:
        """A check's verdict: its comparison's, or that of the comparison of its two groups."""
        return check.get("verdict") or self._pairs.get(frozenset(check.get("groups") or []))

    @property
    def checked(self) -> str:
        return str(self.claim.get("checked") or "nothing checked")


class SetFigures:
    """A selection of comparisons (tps) of one answer, as a lead's placeholders read.

    Its unit is the *test* (analyze/multiplicity.py): a pair compared inside several bench
    sessions is one test, its pooled estimate (``pooled``: the Comparisons JSON's, by id), in
    place of its sessions' comparisons; every other comparison is a test of its own. Counts and
    ranges of ``higher`` and ``lower`` take only the tests significant after the family-wise
    adjustment; a test whose unadjusted verdict was higher or lower and that does not survive
    reads "not significant once adjusted"."""

    def __init__(
        self,
        items: list[dict[str, Any]],
        groups: dict[str, Any],
        left_out: int = 0,
        pooled: dict[str, dict[str, Any]] | None = None,
        costs: dict[str, list[dict[str, Any]]] | None = None,
    ):
        self.items = items
        self._groups = groups
        self._left_out = left_out
        self.tests = _tests(items, pooled or {})
        self._costs = [
            c
            for item in items
            for c in (costs or {}).get(str(item.get("id")), [])
            if c.get("verdict") != "not_comparable"
        ]

    def _count(self, verdict: str) -> int:
        return sum(1 for t in self.tests if _verdict(t) == verdict)

    @property
    def n(self) -> str:
        return str(len(self.tests))

    @property
    def higher(self) -> str:
        return str(self._count("higher"))

    @property
    def lower(self) -> str:
        return str(self._count("lower"))

    @property
    def higher_range(self) -> str:
        return self._range("higher")

    @property
    def lower_range(self) -> str:
        return self._range("lower")

    def _range(self, verdict: str) -> str:
        """``+154.8% to +161.5%``: the changes of the tests with this verdict (significant
        after adjustment), or ``none``; a pooled estimate alone reads with its 95% interval,
        ``+158.1% [+128.4%, +176.0%]``."""
        chosen = [
            t for t in self.tests if _verdict(t) == verdict and t.get("change_pct") is not None
        ]
        if not chosen:
            return "none"
        if all(t.get("ci95_pct") for t in chosen):
            return _and(
                [
                    f"{fmt.change(t['change_pct'])} [{fmt.change(t['ci95_pct'][0])}, "
                    f"{fmt.change(t['ci95_pct'][1])}]"
                    for t in sorted(chosen, key=lambda t: float(t["change_pct"]))
                ]
            )
        values = sorted(float(t["change_pct"]) for t in chosen)
        low, high = fmt.change(values[0]), fmt.change(values[-1])
        return str(low) if low == high else f"{low} to {high}"

    @property
    def verdicts(self) -> str:
        if not self.items and self._left_out:
            return "none with a verdict (their sides were run differently)"
        return verdict_counts([_verdict(t) for t in self.tests])

    @property
    def bound(self) -> str:
        """``between −3.1% and +2.4%``: where the 95% intervals of the tests within the noise —
        pooled estimates, or comparisons measured inside one bench session — leave any
        difference (from the lowest of their lows to the highest of their highs), or ``not
        bounded`` when none has an interval."""
        lows, highs = [], []
        for t in self.tests:
            if t.get("verdict") != "within_noise":
                continue
            if t.get("ci95_pct"):
                lows.append(1 + float(t["ci95_pct"][0]) / 100)
                highs.append(1 + float(t["ci95_pct"][1]) / 100)
                continue
            interval = (t.get("test") or {}).get("ci95_ratio")
            one_session = (t.get("sessions") or {}).get("shared") is True
            if (
                one_session
                and isinstance(interval, list)
                and len(interval) == 2
                and all(isinstance(v, int | float) for v in interval)
            ):
                lows.append(float(interval[0]))
                highs.append(float(interval[1]))
        if not lows:
            return "not bounded"
        low, high = fmt.change(100 * (min(lows) - 1)), fmt.change(100 * (max(highs) - 1))
        return f"between {low} and {high}"

    @property
    def costs(self) -> str:
        """``2.0× the WAL bytes and 3.9–4.0× the full-page images``: each cost that
        every decided comparison of the set reports the same way (``costs.reported``: at least
        the smallest change worth reporting, significant once adjusted, or zero against not),
        as a range over them; ``no cost changed by 5% or more`` when none."""
        clauses = []
        for metric in COSTS:
            found = [c for c in self._costs if c.get("metric") == metric]
            decided = [c for c in found if c.get("verdict") in ("higher", "lower", "within_noise")]
            if not decided or not all(reported(c) for c in decided):
                continue
            if len({c["verdict"] for c in decided}) > 1:
                continue
            ratios = sorted(float(c["ratio"]) for c in decided if c.get("ratio") is not None)
            if len(ratios) < len(decided):
                clauses.append(cost_clause(decided[0]))
                continue
            clauses.append(span_clause(metric, ratios))
        if not clauses:
            return f"no cost changed by {fmt.figure(SMALLEST_CHANGE_PCT)}% or more"
        return _and(clauses)

    @property
    def machines(self) -> str:
        return _and(sorted({str(c.get("machine")).split(" ")[0] for c in self.items})) or "none"

    @property
    def version(self) -> str:
        versions = {
            str(self._groups.get(str(c.get(s, {}).get("group")), {}).get("config", {}).get(
                "version"))
            for c in self.items for s in ("a", "b")
        } - {"None"}  # fmt: skip
        return f"PostgreSQL {_and(sorted(versions))}" if versions else "version not stated"


class SeriesFigures:
    """The release series of one machine (``series`` in the Comparisons JSON), as the
    placeholders of an answer's ``series`` sentence read them: ``{series.workload}``,
    ``{series.client}``, ``{series.releases}``, ``{series.clients}``, ``{series.modes}``,
    ``{series.n}`` (series), ``{series.steps}`` (steps from one release to the next, over
    every series), ``{series.verdicts}`` (theirs, as a lead counts verdicts: higher or lower
    only when significant after the adjustment), ``{series.apart}`` (steps that cross bench
    sessions), ``{series.sessions}`` and ``{series.overall}`` (first release against last:
    the range of the changes, and whether they are judged)."""

    def __init__(self, series: list[dict[str, Any]]):
        self.series = series
        self._steps = [
            r["step"]
            for s in series
            for r in s.get("rows") or []
            if isinstance(r, dict) and isinstance(r.get("step"), dict)
        ]

    def _held(self, path: str) -> list[Any]:
        values = {(s.get("held_equal") or {}).get(path) for s in self.series} - {None}
        return sorted(values, key=lambda v: (isinstance(v, str), v))

    @property
    def n(self) -> str:
        return str(len(self.series))

    @property
    def workload(self) -> str:
        return _and([str(v) for v in self._held("benchmark.workload.name")]) or "not stated"

    @property
    def client(self) -> str:
        versions = sorted({v for s in self.series for v in s.get("pgbench_versions") or []})
        return f"pgbench {_and(versions)}" if versions else "pgbench of a version not stated"

    @property
    def releases(self) -> str:
        found: dict[str, None] = {}
        for s in self.series:
            for row in s.get("rows") or []:
                found.setdefault(str(row.get("version")), None)
        names = list(found)
        if not names:
            return "no release"
        return f"{len(names)} releases, {names[0]} to {names[-1]}"

    @property
    def clients(self) -> str:
        values = [v for v in self._held("benchmark.clients") if isinstance(v, int)]
        if not values:
            return "clients not stated"
        if len(values) == 1:
            return str(fmt.count(values[0], "client"))
        return f"{fmt.figure(values[0])} to {fmt.figure(values[-1])} clients"

    @property
    def modes(self) -> str:
        return _and([str(v) for v in self._held("benchmark.query_mode")]) or "not stated"

    @property
    def steps(self) -> str:
        return str(len(self._steps))

    @property
    def verdicts(self) -> str:
        verdicts = []
        for step in self._steps:
            verdict = step.get("verdict")
            if verdict in ("higher", "lower") and not step.get("significant"):
                verdict = "not_significant"
            verdicts.append(verdict)
        return verdict_counts(verdicts)

    @property
    def apart(self) -> str:
        return str(sum(1 for step in self._steps if step.get("crosses_sessions")))

    @property
    def sessions(self) -> str:
        return str(len({x for s in self.series for x in s.get("sessions") or []}))

    @property
    def overall(self) -> str:
        """``+11.6% to +9,168%, not judged: each first and last ran in different bench
        sessions``, or the verdicts when they ran in one."""
        ends = [s.get("overall") or {} for s in self.series]
        changes = sorted(float(o["change_pct"]) for o in ends if o.get("change_pct") is not None)
        if not changes:
            return "no figures"
        low, high = fmt.change(changes[0]), fmt.change(changes[-1])
        span = str(low) if low == high else f"{low} to {high}"
        if all(o.get("crosses_sessions") for o in ends):
            return (
                f"{span}, shown, not judged: each first and last release ran in different "
                "bench sessions"
            )
        return f"{span}; {verdict_counts([o.get('verdict') for o in ends])}"


def _tests(items: list[dict[str, Any]], pooled: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """The tests of a selection: each comparison, except that the comparisons of one pooled
    estimate are that estimate, once (in the place of its first comparison)."""
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for c in items:
        estimate = pooled.get(str((c.get("family") or {}).get("pooled")))
        if estimate is None:
            out.append(c)
        elif estimate["id"] not in seen:
            seen.add(estimate["id"])
            out.append(estimate)
    return out


def _verdict(test: dict[str, Any]) -> Any:
    """A test's verdict as a lead reads it: ``higher`` or ``lower`` only when it is
    significant after the family-wise adjustment, else ``not_significant``."""
    verdict = test.get("verdict")
    if verdict in ("higher", "lower") and not (test.get("family") or {}).get("significant"):
        return "not_significant"
    return verdict


def verdict_counts(verdicts: list[Any]) -> str:
    """``3 of 3 within the noise``, ``1 of 5 higher and 4 of 5 within the noise``."""
    if not verdicts:
        return "not measured"
    parts = [
        f"{verdicts.count(v)} of {len(verdicts)} {words}"
        for v, words in VERDICT_PHRASES
        if verdicts.count(v)
    ]
    rest = len(verdicts) - sum(verdicts.count(v) for v, _ in VERDICT_PHRASES)
    if rest:
        parts.append(f"{rest} of {len(verdicts)} without a verdict of their own")
    return _and(parts)


def _and(parts: list[str]) -> str:
    parts = [p for p in parts if p]
    if len(parts) <= 1:
        return "".join(parts)
    return f"{', '.join(parts[:-1])} and {parts[-1]}"


def sureness(groups: list[dict[str, Any]], verdicts: list[Any]) -> str:
    """How sure a set of figures is, in words."""
    if any(g.get("n") == 1 for g in groups):
        if all(g.get("n") == 1 for g in groups):
            return "single runs: spread unknown, not judged"
        return "partly single runs: spread partly unknown"
    if any(not g.get("spread") for g in groups):
        return "published without their runs: spread unknown, not judged"
    if verdicts and all(v in {"higher", "lower"} for v in verdicts):
        return "outside the noise of the repeats"
    if verdicts and all(v == "within_noise" for v in verdicts):
        return "within the noise of the repeats"
    if not any(verdicts):
        return "repeats published, the comparison not judged"
    return "partly outside the noise of the repeats"


class LeadFields(string.Formatter):
    def __init__(self, values: dict[str, Any], loaded: Loaded, field: str, slug: str) -> None:
        self.values = values
        self.loaded = loaded
        self.field = field
        self.slug = slug

    def get_value(self, key: Any, args: Any, kwargs: Any) -> Any:
        if key not in self.values:
            raise answer_error(
                self.loaded,
                self.field,
                f"answer {self.slug}: the lead names {{{key}…}}, which is neither a claim of "
                "the answer nor one of its sets",
                "list the claim under claims, or the set under sets",
            )
        return self.values[key]

    def get_field(self, field_name: str, args: Any, kwargs: Any) -> Any:
        try:
            return super().get_field(field_name, args, kwargs)
        except AttributeError as exc:
            raise answer_error(
                self.loaded,
                self.field,
                f"answer {self.slug}: the lead's placeholder {{{field_name}}} is not known",
                "see the placeholders in the file's header",
            ) from exc
