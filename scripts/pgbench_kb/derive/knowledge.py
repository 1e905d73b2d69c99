"""What ``pgbench_kb.analyze`` found (groups of repeats, comparisons, interactions, findings,
curves), read for the site and placed on pages: one comparison page per family of factors.

Nothing is computed again here: centres, spreads, ratios and verdicts are analyze's. This
module only sorts them onto pages and writes them for reading.
"""

from __future__ import annotations

import hashlib
import re
from functools import cache
from pathlib import Path
from typing import Any

# The pages comparisons are filed under (their questions) live in analyze, which adjusts its
# families of tests by them (analyze/questions.py); re-exported here for the pages.
from pgbench_kb import numbers as fmt
from pgbench_kb.analyze.questions import ANALYZE_FAMILY_PAGES, FAMILIES, family_of  # noqa: F401
from pgbench_kb.derive import labels
from pgbench_kb.runs import setting_words
from pgbench_kb.runs.vocabulary import LEVEL_NAMES, MEDIA_NAMES

FAMILY_TITLES = {slug: title for slug, title, _, _ in FAMILIES}
SAFE = re.compile(r"^[a-z0-9][a-z0-9-]*$")

VERDICT_WORDS = {
    "higher": "higher",
    "lower": "lower",
    "within_noise": "no clear difference (within the noise)",
    "spread_unknown": "spread unknown: the change is shown, not judged",
    "not_comparable": "no verdict: the two sides ran in different bench sessions",
}


@cache
def page_slug(text: str) -> str:
    """A URL-safe, stable slug for an id from analyze (a hash suffix when it had to change)."""
    lowered = str(text).lower()
    slug = re.sub(r"[^a-z0-9]+", "-", lowered).strip("-")[:80] or "x"
    if slug != lowered:
        slug = f"{slug}-{hashlib.sha256(str(text).encode()).hexdigest()[:8]}"
    return slug


def from_records(records: list[Any], root: Path | None = None) -> dict[str, Any]:
    """What analyze finds in the runs' records (``analyze.load.record_of`` of each run file,
    made once when derive reads it): the Comparisons JSON object with its groups, and the
    sources' claims of ``ROOT/data/claims.yaml`` checked against it."""
    from pgbench_kb.analyze import knowledge_from_runs
    from pgbench_kb.analyze.claims import load_claims

    claims = load_claims(root) if root is not None else None
    return knowledge_from_runs(records, claims, latency=True)


#: Where a WAL volume sits, as a reader says it.
PLACEMENT_WORDS = {
    "with-data": "with the data",
    "own-disk": "own disk",
    "own-array": "own array",
    "own-partition": "own partition",
}
#: The run format's enumerations that read as codes ("raid10", "hdd"), by the end of their
#: field's path, with the words the pages use for them elsewhere.
ENUM_WORDS: tuple[tuple[str, dict[str, str]], ...] = (
    (".array.level", LEVEL_NAMES),
    (".array.media", MEDIA_NAMES),
    ("storage.wal.placement", PLACEMENT_WORDS),
)


def _enum_words(field: str | None, value: str) -> str:
    for suffix, words in ENUM_WORDS:
        if field and field.endswith(suffix):
            return words.get(value, value)
    return value


def _value(value: Any, field: str | None = None) -> str:
    if type(value) is str:  # the common case, written as it is (an enumeration as words)
        if field == "repeat.session":
            return labels.session_words(value)
        return _enum_words(field, value) if field else value
    if isinstance(value, dict):
        return ", ".join(f"{field_label(k)} {_value(v, k)}" for k, v in value.items())
    if isinstance(value, bool):
        if (field or "").startswith("postgres.settings."):
            return "on" if value else "off"  # as PostgreSQL writes a setting
        return "yes" if value else "no"
    if isinstance(value, float | int):
        figure = fmt.figure(value) or str(value)
        unit = labels.SETTING_UNITS.get((field or "").removeprefix("postgres.settings."))
        if unit and unit[0] in SHORT_UNITS and (field or "").startswith("postgres.settings."):
            return f"{figure} {unit[0]}"  # commit_delay 20,000 µs: a bare number has no unit
        return figure
    return labels.value_words(value)


#: The units a setting's bare number is written with beside it (a count of 8 kB pages is not).
SHORT_UNITS = frozenset({"µs", "ms", "s", "kB"})


def side_value(item: dict[str, Any], field: str) -> Any:
    """A comparison side's value, a setting our harness measured at its default written as the
    default (``fsync`` → ``on``): the server ran it so, while a published run that does not
    name a setting leaves it not stated."""
    value = item.get("value")
    if item.get("published"):
        return value

    def known(v: Any, path: str) -> Any:
        if v is None and path.startswith("postgres.settings."):
            name = path.removeprefix("postgres.settings.")
            return setting_words.value_words(name, None)
        return v

    if isinstance(value, dict):
        return {k: known(v, k) for k, v in value.items()}
    return known(value, field)


def center_of(item: dict[str, Any]) -> Any:
    return item.get("center", item.get("centre"))


def spread_words(spread: dict[str, Any] | None) -> str | None:
    if not spread:
        return None
    low, high = spread.get("min"), spread.get("max")
    parts = []
    if isinstance(low, (int, float)) and isinstance(high, (int, float)):
        parts.append(f"{fmt.figure(float(low))} to {fmt.figure(float(high))}")
    cv = spread.get("cv_pct")
    if isinstance(cv, (int, float)):
        parts.append(f"CV {fmt.percent(cv)}")
    return ", ".join(parts) or None


#: A workload's name; a builtin script of the same name says nothing more.
WORKLOAD_NAME = "benchmark.workload.name"


def _said_by_the_name(key: str, keys: list[str]) -> bool:
    """A ``benchmark.workload.scripts.N.builtin`` beside a differing workload name: a builtin
    workload is named after its one script."""
    return (
        WORKLOAD_NAME in keys
        and key.startswith("benchmark.workload.scripts.")
        and (key.endswith(".builtin"))
    )


def differing_values(a: Any, b: Any, field: str | None = None) -> tuple[str, str]:
    """Both sides' values written short; of several fields only those that differ (a builtin
    workload: its name only, as the comparison's title names the field)."""
    if isinstance(a, dict) and isinstance(b, dict):
        keys = [k for k in a if a.get(k) != b.get(k)] or list(a)
        keys = [k for k in keys if not _said_by_the_name(k, keys)]
        if keys == [WORKLOAD_NAME]:
            return _value(a.get(WORKLOAD_NAME)), _value(b.get(WORKLOAD_NAME))
        return (
            ", ".join(f"{field_label(k)} {_value(a.get(k), k)}" for k in keys),
            ", ".join(f"{field_label(k)} {_value(b.get(k), k)}" for k in keys),
        )
    return _value(a, field), _value(b, field)


def field_label(path: str) -> str:
    return labels.field_label(path)


def statistic_words(item: dict[str, Any]) -> str:
    """What a centre is: ``median``, ``published mean``, ``one run``."""
    statistic = str(item.get("statistic") or "median")
    if statistic == "single" or item.get("n") == 1:
        return "one run"
    return f"published {statistic}" if item.get("published") else statistic


def figure_words(item: dict[str, Any]) -> str:
    """What a group's figure is, in words: ``median of 3 runs``, ``published mean of 3 runs``,
    ``published median of 5 runs (the runs themselves not published)``, ``one run``."""
    what = statistic_words(item)
    if what == "one run":
        return what
    words = f"{what} of {fmt.count(item.get('n'), 'run')}"
    if item.get("published") and not item.get("samples") and not item.get("spread"):
        words += " (the runs themselves not published)"
    return words


def side(item: dict[str, Any], shown_value: str, group_urls: dict[str, str]) -> dict[str, Any]:
    center = center_of(item)
    return {
        "value": shown_value,
        "center": fmt.tps(center),
        "center_raw": center,
        "statistic": statistic_words(item),
        "n": fmt.count(item.get("n"), "run"),
        "spread": spread_words(item.get("spread")),
        "group_url": group_urls.get(str(item.get("group"))),
        "runs": [str(r) for r in item.get("runs") or []],
    }


def factor_words(factor: str) -> str:
    return " + ".join(f.removeprefix("postgres.settings.") for f in (factor or "").split("+"))


def held_words(held: dict[str, Any] | None) -> list[str]:
    return [f"{field_label(k)} = {_held_value(v, k)}" for k, v in sorted((held or {}).items())]


def _held_value(value: Any, field: str) -> str:
    """``_value``, and a setting's bare count in other units says what it is (``23,987 (8 kB
    pages ≈ 187 MB)``, not a bare ``23,987``)."""
    shown = _value(value, field)
    name = field.removeprefix("postgres.settings.")
    if name == field or type(value) is not int or shown.endswith(tuple(SHORT_UNITS)):
        return shown
    comment = labels.conf_line(name, value).partition("  # ")[2]
    return f"{shown} ({comment})" if comment else shown


def caveat_words(differs: list[dict[str, Any]] | None) -> list[str]:
    words = []
    for d in differs or []:
        if not isinstance(d, dict):
            continue
        field = str(d.get("field"))
        words.append(
            f"{field_label(field)} also differs: {_value(d.get('a'), field)} (A) vs "
            f"{_value(d.get('b'), field)} (B)"
        )
    return words
