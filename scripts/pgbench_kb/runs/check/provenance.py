"""Rules on ``provenance`` and ``repeat``: real dates; declared, masked and uncertain paths;
what every contributed run must carry (``rules_required``) and what a transcribed run may claim
of its source (``rules_transcribed``)."""

from __future__ import annotations

import calendar
import re
from typing import Any

from pgbench_kb.runs.check.report import Issue, one_line
from pgbench_kb.runs.check.values import date_prefix, dotted_get
from pgbench_kb.runs.schema import DATE_HINT, property_at

MIN_YEAR = 1990
_DATE_PARTS = re.compile(
    r"(\d{4})(?:-(\d{2})(?:-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?"
    r"(?:Z|[+-](\d{2}):?(\d{2}))?)?)?)?"
)


def date_problem(text: str) -> str | None:
    """Why an ISO 8601 date or time (as the schema's pattern allows) is not a real one."""
    match = _DATE_PARTS.fullmatch(text)
    if match is None:
        return None
    year, month, day, hour, minute, second, zone_h, zone_m = (
        int(part) if part is not None else None for part in match.groups()
    )
    assert year is not None
    if year < MIN_YEAR:
        return f"{text} is before {MIN_YEAR}; pgbench results are not that old"
    if month is not None and not 1 <= month <= 12:
        return f"{text} is not a real date: there is no month {month}"
    if month is not None and day is not None:
        days = calendar.monthrange(year, month)[1]
        if not 1 <= day <= days:
            name = calendar.month_name[month]
            return f"{text} is not a real date: {name} {year} has {days} days"
    for value, top, what in (
        (hour, 23, "hour"),
        (minute, 59, "minute"),
        (second, 59, "second"),
        (zone_h, 23, "time zone hour"),
        (zone_m, 59, "time zone minute"),
    ):
        if value is not None and value > top:
            return f"{text} is not a real time: {what} {value} is above {top}"
    return None


def masked_path_problem(dotted: str) -> str | None:
    """Why ``dotted`` cannot be listed in ``provenance.masked``: not a field, or not nullable."""
    prop = property_at("run", dotted)
    if prop is None:
        return f"{one_line(dotted, 80)!r} is not a field of a run file"
    kinds = prop.get("type")
    if "null" not in (kinds if isinstance(kinds, list) else [kinds]):
        return (
            f"{dotted!r} cannot be masked: it cannot be null (mask a value such as server.hostname)"
        )
    return None


def rules_provenance(run: dict[str, Any], *, today: str) -> list[Issue]:
    prov = run["provenance"]
    issues = []
    for key in ("recorded_at", "contributed_at"):
        value = prov.get(key)
        problem = date_problem(value) if isinstance(value, str) else None
        if problem is not None:
            issues.append(Issue(f"provenance.{key}", f"{problem} ({DATE_HINT})"))
        elif key == "recorded_at" and date_prefix(value) > today[: len(date_prefix(value))]:
            issues.append(Issue("provenance.recorded_at", f"{value} is in the future"))
    if run["origin"] == "transcribed" and prov.get("harness") is not None:
        issues.append(
            Issue("provenance.harness", "a transcribed run was not measured by a harness")
        )
    for index, dotted in enumerate(prov.get("declared") or []):
        if property_at("run", dotted) is None:
            issues.append(
                Issue(f"provenance.declared.{index}", f"{dotted!r} is not a field of a run file")
            )
    for index, dotted in enumerate(prov.get("masked") or []):
        problem = masked_path_problem(dotted)
        if problem is not None:
            issues.append(Issue(f"provenance.masked.{index}", problem))
        elif dotted_get(run, dotted) is not None:
            issues.append(Issue(dotted, "is listed in provenance.masked, so it must be null"))
    for index, dotted in enumerate(prov.get("uncertain") or []):
        if property_at("run", dotted) is None:
            issues.append(
                Issue(f"provenance.uncertain.{index}", f"{dotted!r} is not a field of a run file")
            )
        elif dotted_get(run, dotted) is None:
            issues.append(
                Issue(
                    dotted,
                    "is listed in provenance.uncertain but is null (an unknown value is null; "
                    "uncertain marks a value that is the likely reading of its source)",
                )
            )
    if prov.get("uncertain") and not prov.get("notes"):
        issues.append(
            Issue("provenance.notes", "say in notes why the values in provenance.uncertain are")
        )
    repeat = run.get("repeat")
    if repeat and repeat["index"] > repeat["of"]:
        issues.append(Issue("repeat.index", f"repeat {repeat['index']} of {repeat['of']}"))
    return issues


#: What every run must carry, and how a contributor supplies it.
REQUIRED_OF_EVERY_RUN = (
    (
        "provenance.contributor",
        "a contributed run names who contributed it: kb import takes git config user.name (or "
        "the login name), or give --set provenance.contributor='Your Name'",
    ),
)
#: What a measured run must carry besides. A transcribed run carries its source instead, and
#: only what that source states (a version or settings it does not give stay null).
REQUIRED_OF_MEASURED_RUNS = (
    (
        "postgres.version",
        "a measured run names its PostgreSQL version: the harness records it; by hand give "
        "--set postgres.version=17.2 (what SHOW server_version says)",
    ),
    (
        "postgres.settings",
        "a measured run lists every setting not at its default ({} when all are defaults): the "
        "harness records them; by hand give --set postgres.settings.shared_buffers=1GB for each, "
        "or --set 'postgres.settings={}'",
    ),
    (
        "storage.data",
        "a measured run says what its data was stored on: the harness records the volume; by "
        "hand give at least --set storage.data.array.media=ssd (or storage.data.filesystem=ext4; "
        "level, disks and rpm when known)",
    ),
)
STORAGE_FACTS = ("filesystem", "device", "array.media", "array.level")


def _missing(run: dict[str, Any], dotted: str) -> bool:
    value = dotted_get(run, dotted)
    if dotted == "storage.data":
        return not isinstance(value, dict) or all(
            dotted_get(value, fact) is None for fact in STORAGE_FACTS
        )
    return value is None or value == ""


def rules_required(run: dict[str, Any]) -> list[Issue]:
    """The provenance every contributed run carries (CONTRIBUTING.md, "What a run must
    carry"): who contributed it; for a measured run also the PostgreSQL version, the settings
    and the storage (the last two unless it was imported from a result tree someone else
    published, whose author may not have said: then null settings are explained in
    provenance.notes); a transcribed run names its source (the schema requires title,
    kind and year) and says whether the title is the source's own."""
    if run.get("synthetic"):
        return []
    required = list(REQUIRED_OF_EVERY_RUN)
    if run["origin"] == "measured":
        required += REQUIRED_OF_MEASURED_RUNS
        if (run["provenance"].get("source") or {}).get("kind") == "measurement":
            # Imported from a result tree someone else published: its storage and settings
            # are what the author stated, and unknown (null) when not stated: the machine's
            # note says why for the storage, provenance.notes for the settings.
            required = [r for r in required if r[0] not in ("storage.data", "postgres.settings")]
    issues = [Issue(dotted, f"missing: {how}") for dotted, how in required if _missing(run, dotted)]
    if (
        run["origin"] == "measured"
        and "postgres.settings" not in [r[0] for r in required]
        and _missing(run, "postgres.settings")
        and not run["provenance"].get("notes")
    ):
        issues.append(
            Issue(
                "provenance.notes",
                "missing: postgres.settings is null (the source does not state them): say so "
                "in provenance.notes (run.provenance.notes of the mapping)",
            )
        )
    source = run["provenance"].get("source") or {}
    if run["origin"] == "transcribed" and source.get("title_is_descriptive") is None:
        issues.append(
            Issue(
                "provenance.source.title_is_descriptive",
                "missing: say whether provenance.source.title is the document's own title "
                "(false) or a description of a source whose title is not known (true): "
                "--set provenance.source.title_is_descriptive=false",
            )
        )
    return issues


def rules_transcribed(run: dict[str, Any]) -> list[Issue]:
    """What a transcribed run may claim: no more than its source states."""
    if run["origin"] != "transcribed":
        return []
    postgres = run.get("postgres") or {}
    if postgres.get("settings") == {} and postgres.get("settings_profile") != "defaults":
        return [
            Issue(
                "postgres.settings",
                "an empty mapping says every setting was at its default, which the source must "
                "state: write null when it does not give the settings, or set "
                "postgres.settings_profile: defaults when it says so",
            )
        ]
    return []
