"""The results explorer (``/results/``: every configuration, with its facets) and the data of
"compare any N" (``/compare/``: a page the browser fills from ``compare/data/*.json``).

The explorer is a plain table that works without JavaScript; each row carries its facets
(``data-facets``), the other names people type for its values (``data-words``: ``raid10``,
``RAID 1+0``, ``battery``) and its key for "compare any N" (``data-key``). The version
column sorts as versions (``data-value``: 8.0 < 8.4 < 10.1).

Compare any N reads ``compare/data/index.json`` (every configuration: key, title, machine,
figure, the bench session it was measured in, and which machine file holds its facts) and,
for those picked, their machines' files (``compare/data/<machine>.json``: each
configuration's facts as label → value, and the verdict of each controlled comparison between
two of them, its sentence naming the sides ``{A}`` and ``{B}`` for the page to name by the
reader's letters), so that the page loads what it shows and not the facts of every
configuration at 10,000 runs.
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Any

from pgbench_kb import jsontext
from pgbench_kb import numbers as fmt
from pgbench_kb.derive import knowledge, labels
from pgbench_kb.derive.setup_text import WAL_PLACEMENT
from pgbench_kb.derive.writer import Site
from pgbench_kb.runs import setting_words
from pgbench_kb.runs.vocabulary import LEVEL_NAMES, MEDIA_NAMES

#: The facets of the explorer, in the order shown, by the search filter they come from.
FACETS = (
    ("PostgreSQL", "postgresql"),
    ("RAID level", "raid level"),
    ("WAL placement", "wal placement"),
    ("Write cache", "write cache"),
    ("Machine", "machine"),
    ("Workload", "workload"),
    ("Origin", "origin"),
    ("Source", "source"),
    ("Author", "author"),
)

#: Other names people type for a facet value (lower case), beside the value itself.
WORDS = {
    "RAID1+0": ("raid10", "raid 10", "raid 1+0", "raid1/0", "raid 1/0", "stripe of mirrors"),
    "RAID1": ("raid 1", "mirror"),
    "RAID0": ("raid 0", "stripe"),
    "RAID5": ("raid 5",),
    "RAID6": ("raid 6",),
    "RAID50": ("raid 50", "raid5+0"),
    "RAID60": ("raid 60", "raid6+0"),
    "single disk": ("no raid", "one disk"),
    "BBU cache": ("battery", "battery-backed", "bbu", "write-back", "write back cache"),
    "no write cache": ("write-through", "write through"),
}


def version_key(version: Any) -> int | None:
    """A number that sorts versions as versions: ``8.0`` < ``8.4.2`` < ``10.1`` < ``17devel``
    < ``17.0``; ``None`` without a leading number."""
    match = re.match(r"^(\d+)(?:\.(\d+))?(?:\.(\d+))?(.*)$", str(version or "").strip())
    if not match:
        return None
    major, minor, patch, rest = match.groups()
    key = int(major) * 1_000_000 + int(minor or 0) * 1_000 + int(patch or 0)
    # 17devel, 9.6beta2: before the release they lead to.
    return key * 10 + (0 if rest and not minor else 5)


def facet_values(facets: dict[str, str]) -> dict[str, str]:
    """A row's facets by the name shown (``PostgreSQL``: ``8.4``, not ``PostgreSQL 8.4``)."""
    found = {}
    for shown, name in FACETS:
        value = facets.get(name) or facets.get(shown)
        if value:
            found[shown] = value.removeprefix("PostgreSQL ") if shown == "PostgreSQL" else value
    return found


def row_words(facets: dict[str, str]) -> str:
    """The other names of a row's facet values, for the word filter."""
    words: list[str] = []
    for value in facets.values():
        words += WORDS.get(value, ())
    return " ".join(dict.fromkeys(words))


def explorer_row(
    row: dict[str, Any],
    title: str,
    url: str,
    *,
    key: str,
    n: Any,
    tps: Any,
    tps_raw: Any,
    spread: str,
    cv: Any,
    facets: dict[str, str],
) -> dict[str, Any]:
    """One line of the results explorer: a group of repeats, or a run in no group."""
    shown = facet_values(facets)
    return {
        "key": key,
        "title": title,
        "url": url,
        "machine": row["machine"],
        "storage": row["storage_short"] or "",
        "version": row["postgres_version"] or "",
        "version_key": version_key(row["postgres_version"]),
        "workload": row["workload"] or "custom",
        "clients": row["clients"],
        "n": n,
        "tps": tps,
        "tps_raw": tps_raw,
        "spread": spread,
        "cv": fmt.percent(cv) if isinstance(cv, int | float) else "",
        "cv_raw": cv,
        "latency": row["latency_shown"],
        "latency_raw": row["latency_avg_ms"],
        "facets": shown,
        "words": row_words(shown),
    }


def write_explorer(
    site: Site,
    rows: list[dict[str, Any]],
    placed: dict[str, Any],
    known: dict[str, Any],
    facets: dict[str, dict[str, str]],
) -> None:
    """The explorer page, the compare page and the compare data."""
    groups = {str(g.get("id")): g for g in known.get("groups") or [] if isinstance(g, dict)}
    explorer = []
    for group in placed["groups"]:
        raw = groups.get(group["id"], {})
        explorer.append(
            explorer_row(
                group["row"], group["title"], group["url"],
                key=knowledge.page_slug(group["id"]),
                n=fmt.count(raw.get("n") or 1, "run"),
                tps=group["center"],
                tps_raw=group["center_raw"] if group["center_raw"] is not None
                else group["row"]["tps"],
                spread=group["spread"] or "",
                cv=(raw.get("spread") or {}).get("cv_pct"),
                facets=facets.get(str(group["row"]["id"])) or {},
            )
        )  # fmt: skip
    in_group = {str(m["id"]) for m in rows if "group" in placed["run_links"].get(str(m["id"]), {})}
    explorer += [
        explorer_row(
            row, row["title"], row["url"], key="", n=row["statistic"], tps=row["tps_shown"],
            tps_raw=row["tps"], spread="", cv=None, facets=facets.get(str(row["id"])) or {},
        )
        for row in rows
        if str(row["id"]) not in in_group and not row.get("smoke")  # smoke runs: no result
    ]  # fmt: skip
    explorer.sort(key=lambda e: (str(e["machine"]), str(e["title"]), str(e["url"])))
    site.page(
        "results/_index.md",
        {
            "title": "Results explorer",
            "description": "Every configuration measured: throughput, latency, clients, "
            "PostgreSQL version, storage and machine; sort, filter by facets, and pick two or "
            "more to compare.",
            "params": {
                "kind": "explorer",
                "rows": explorer,
                "facets": [shown for shown, _ in FACETS],
            },
        },
    )
    write_compare(site, placed, known)


def fact_label(path: str) -> str:
    """A field's name for a reader (``labels.field_label``: ``WAL placement``, ``WAL array disk
    size``), capitalised; a setting keeps its own name, as postgresql.conf spells it."""
    if path.startswith("postgres.settings."):
        return path.removeprefix("postgres.settings.")
    label = labels.field_label(path)
    return label[:1].upper() + label[1:]


def fact_value(path: str, value: Any) -> str:
    """A fact's value with its unit (sizes in bytes as sizes, seconds as seconds; a setting's
    bare number with its unit, as its postgresql.conf line says it)."""
    if path.startswith("postgres.settings."):
        line = labels.conf_line(path.removeprefix("postgres.settings."), value)
        shown, _, unit = line.partition(" = ")[2].partition("  # ")
        return f"{shown} ({unit})" if unit else shown
    if isinstance(value, int | float) and not isinstance(value, bool):
        if path.endswith("_bytes"):
            return fmt.size(value) or str(value)
        if path.endswith("_s"):
            return fmt.seconds(value) or str(value)
        if path.endswith("_kb"):
            return f"{fmt.figure(value)} kB"
    if isinstance(value, str):
        if path.endswith(".level"):
            return LEVEL_NAMES.get(value, value)
        if path.endswith(".media"):
            return MEDIA_NAMES.get(value, value)
        if path.endswith(".placement"):
            return WAL_PLACEMENT.get(value, value)
    return (
        labels.value_words(value)
        if not isinstance(value, int | float)
        else (knowledge._value(value))
    )


def _facts(group: dict[str, Any]) -> dict[str, str]:
    """A configuration's facts as a reader reads them: label → value."""
    facts = {"Machine": str(group.get("machine"))}
    if group.get("client_machine"):
        facts["Client machine"] = str(group["client_machine"])
    facts["Measured in"] = session_words(group.get("session"))
    for path, value in sorted((group.get("factors") or {}).items()):
        facts.setdefault(fact_label(path), fact_value(path, value))
    for path, value in sorted((group.get("incidental") or {}).items()):
        if path in {"repeat.session", "provenance.source.title"}:
            continue  # said by "Measured in"
        facts.setdefault(fact_label(path), fact_value(path, value))
    return facts


def session_words(session: Any) -> str:
    """``bench 20261123T134421Z-0a1b2c`` → ``bench session 2026-11-23 13:44 UTC`` (its random
    token means nothing to a reader); ``source X`` → ``the source "X"``."""
    text = str(session or "")
    if text.startswith("bench "):
        return labels.session_words("bench session " + text.removeprefix("bench "))
    if text.startswith("source "):
        return f"the source “{text.removeprefix('source ')}”"
    if text.startswith("day "):
        return f"runs of {text.rsplit(' ', 1)[-1]}, outside a bench session"
    return text or "not recorded"


#: Where a comparison's sentence names its sides (``comparison_pages.comparison_shown``):
#: written with placeholders, so that compare any N names them by the letters the reader
#: gave them (``C against A``).
SIDE_NAMES = (
    ("B against A: ", "{B} against {A}: "),
    ("; B is ", "; {B} is "),
    (" against A (", " against {A} ("),
    (" of A)", " of {A})"),
)


def pair_words(sentence: str) -> str:
    """A comparison's sentence with its sides as ``{A}`` and ``{B}``."""
    for plain, placeholder in SIDE_NAMES:
        sentence = sentence.replace(plain, placeholder)
    return sentence


def write_compare(site: Site, placed: dict[str, Any], known: dict[str, Any]) -> None:
    """``compare/data/index.json`` (every configuration, by machine: what the menus list),
    one ``compare/data/<machine>/<configuration>.json`` per configuration (its facts and
    figures and every comparison it is a side of: the page loads only those it shows), and
    the page that reads them."""
    info = {g["id"]: g for g in placed["groups"]}
    shown_of = {c["id"]: c for family in placed["families"].values() for c in family}
    index: dict[str, dict[str, Any]] = {}
    configurations: dict[str, dict[str, Any]] = {}
    settings: dict[str, set[str]] = defaultdict(set)
    machine_of: dict[str, str] = {}
    version_of: dict[str, Any] = {}
    for group in known.get("groups") or []:
        if not isinstance(group, dict) or str(group.get("id")) not in info:
            continue
        placed_group = info[str(group["id"])]
        key = knowledge.page_slug(str(group["id"]))
        machine = knowledge.page_slug(str(group.get("machine")))
        machine_of[str(group["id"])] = machine
        version_of[key] = (group.get("factors") or {}).get("postgres.version")
        index.setdefault(
            machine, {"machine": str(group.get("machine")), "file": machine, "configurations": []}
        )["configurations"].append(
            {
                "key": key,
                "title": placed_group["title"],
                "tps": placed_group["center"],
                # Which bench session: two menus' entries of one title read apart (a
                # source's own configurations are apart by their titles).
                "when": session_words(group.get("session"))
                if not str(group.get("session")).startswith("source ")
                else "",
            }
        )
        configurations[key] = {
            "machine": machine,
            "configuration": {
                "url": placed_group["url"],
                "figure": placed_group["center"],
                "what": placed_group["what"],
                "spread": placed_group["spread"],
                "latency": fmt.ms(group.get("latency_avg_ms")),
                "session": session_words(group.get("session")),
                "facts": _facts(group),
            },
            "comparisons": {},
        }
        settings[machine].update(
            fact_label(p) for p in group.get("factors") or {} if p.startswith("postgres.settings.")
        )
    for comparison in known.get("comparisons") or []:
        if not isinstance(comparison, dict) or comparison.get("metric", "tps") != "tps":
            continue
        if comparison.get("kind") == "span":
            continue  # the two ends of several steps: each step is its own comparison
        a, b = comparison.get("a") or {}, comparison.get("b") or {}
        shown = shown_of.get(knowledge.page_slug(str(comparison.get("id"))))
        if shown is None or str(a.get("group")) not in machine_of:
            continue
        key_a, key_b = (knowledge.page_slug(str(side.get("group"))) for side in (a, b))
        entry = {
            "verdict": str(comparison.get("verdict")),
            "words": pair_words(shown["verdict_words"]),
            "title": shown["title"],
            "url": shown["url"],
        }
        for key in (key_a, key_b):
            if key in configurations:
                configurations[key]["comparisons"][f"{key_a} {key_b}"] = entry
    listed = sorted(index.values(), key=lambda m: m["machine"])
    for machine in listed:
        machine["configurations"].sort(key=lambda e: (e["title"], e["key"]))
    site.static("compare/data/index.json", jsontext.compact({"machines": listed}))
    for key, data in sorted(configurations.items()):
        facts = data["configuration"]["facts"]
        # A setting another configuration of its machine sets, left unset here: the
        # server's default, in words (``setting_words``).
        for name in sorted(settings[data["machine"]] - set(facts)):
            facts[name] = setting_words.default_words(name, version_of[key])
        site.static(
            f"compare/data/{data['machine']}/{key}.json",
            jsontext.compact(
                {"configuration": data["configuration"], "comparisons": data["comparisons"]}
            ),
        )
    site.page(
        "compare/_index.md",
        {
            "title": "Compare configurations",
            "description": "Pick two configurations or more: all side by side, every fact that "
            "differs marked, and for each pair the verdict of its comparison when the site "
            "made one.",
            "params": {"kind": "compare", "not_searched": True},
        },
    )
