"""Answer pages (``/answers/<slug>/``): one per question a tuner brings (RAID level, WAL
placement, write cache, commit_delay, durability, memory, checkpoints, versions, OS and
filesystem, clients and scale), and the answers the home page leads with.

The words come from ``data/answers.yaml`` (the question, the lead's sentence around its
placeholders, the mechanism with its sources); every figure comes from what ``analyze`` found —
the sources' claims checked against the runs and the comparisons of the question's families.
A lead assumes things of the claims it names (``expects``): when a verdict changes, the build
stops with the line to rewrite instead of publishing a sentence the figures no longer bear.
"""

from __future__ import annotations

import re
import string
from collections import defaultdict
from pathlib import Path
from typing import Any

import yaml

from pgbench_kb import numbers as fmt
from pgbench_kb.derive import knowledge
from pgbench_kb.derive.writer import Site
from pgbench_kb.errors import DeriveError

ANSWERS_FILE = Path("data") / "answers.yaml"
#: The longest a lead may be once filled (the home page shows each one).
LEAD_WORDS = 45
#: How the verdicts of comparisons read in a lead, in this order.
VERDICT_PHRASES = (
    ("higher", "higher"),
    ("lower", "lower"),
    ("within_noise", "within the noise"),
    ("spread_unknown", "of unknown spread"),
    ("not_comparable", "not comparable across sessions"),
)
ANSWER_KEYS = {
    "slug", "title", "label", "families", "same_disks", "claims", "sets", "expects", "lead",
    "why", "unknown",
}  # fmt: skip
REQUIRED = ("slug", "title", "label", "families", "lead", "why")
#: What a set of comparisons selects by (data/answers.yaml's header).
SET_KEYS = {"family", "machine", "factor", "workload"}
#: The field a set's ``workload`` selects by, and the evidence is grouped by.
WORKLOAD = "benchmark.workload.name"


class _Loader(yaml.SafeLoader):
    """Keeps each mapping's line, so an error names the line to edit."""


def _mapping_with_line(loader: _Loader, node: yaml.MappingNode) -> dict[str, Any]:
    mapping = loader.construct_mapping(node, deep=True)
    mapping["__line__"] = node.start_mark.line + 1
    return mapping


_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping_with_line)


def _error(message: str, line: Any, field: str, hint: str) -> DeriveError:
    return DeriveError(
        message, path=str(ANSWERS_FILE), line=line if isinstance(line, int) else None,
        field=field, hint=hint,
    )  # fmt: skip


def load_answers(root: Path) -> dict[str, Any]:
    """``data/answers.yaml``, checked: every answer has its keys, known families and claims."""
    path = root / ANSWERS_FILE
    if not path.is_file():
        return {"answers": [], "sources": {}, "cites": {}}
    try:
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=_Loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise _error(
            f"not valid YAML: {getattr(exc, 'problem', exc)}",
            mark.line + 1 if mark else None, "(file)", "fix the YAML syntax at that line",
        ) from exc  # fmt: skip
    if not isinstance(data, dict) or not isinstance(data.get("answers"), list):
        raise _error("has no list of answers", 1, "answers", "see the header of the file")
    families = {slug for slug, *_ in knowledge.FAMILIES}
    seen: set[str] = set()
    for answer in data["answers"]:
        line = answer.get("__line__") if isinstance(answer, dict) else None
        if not isinstance(answer, dict):
            raise _error("an answer must be a mapping", line, "answers", "see the file's header")
        for key in REQUIRED:
            if not answer.get(key):
                raise _error(f"answer has no {key}", line, key, f"add `{key}:` to the answer")
        for key in answer:
            if key != "__line__" and key not in ANSWER_KEYS:
                raise _error(
                    f"unknown key {key!r}", line, key,
                    f"use one of {', '.join(sorted(ANSWER_KEYS))}",
                )  # fmt: skip
        slug = str(answer["slug"])
        if not knowledge.SAFE.match(slug) or slug in seen:
            raise _error(
                f"slug {slug!r} is not a unique lower-case slug", line, "slug",
                "use letters, digits and hyphens, once per file",
            )  # fmt: skip
        seen.add(slug)
        for family in answer["families"]:
            if family not in families:
                raise _error(
                    f"unknown comparison family {family!r}", line, "families",
                    f"use one of {', '.join(sorted(families))}",
                )  # fmt: skip
        for name, spec in (answer.get("sets") or {}).items():
            if name == "__line__":
                continue
            if not isinstance(spec, dict) or str(spec.get("family")) not in families:
                raise _error(
                    f"set {name!r} has no known family", line, f"sets.{name}",
                    f"give it family: one of {', '.join(sorted(families))}",
                )  # fmt: skip
            unknown = sorted(set(spec) - SET_KEYS - {"__line__"})
            if unknown:
                raise _error(
                    f"set {name!r} has unknown key {unknown[0]!r}", line, f"sets.{name}",
                    f"use {', '.join(sorted(SET_KEYS))}",
                )  # fmt: skip
        for name in re.findall(r"\[([a-z0-9-]+)\]", str(answer["why"])):
            if name not in (data.get("cites") or {}):
                raise _error(
                    f"the mechanism cites [{name}], which `cites` does not list", line, "why",
                    f"add {name} under cites, or cite a listed source",
                )  # fmt: skip
    return data


class _Claim:
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


class _Set:
    """A selection of comparisons (tps) of one answer, as a lead's placeholders read."""

    def __init__(self, items: list[dict[str, Any]], groups: dict[str, Any], left_out: int = 0):
        self.items = items
        self._groups = groups
        self._left_out = left_out

    def _count(self, verdict: str) -> int:
        return sum(1 for c in self.items if c.get("verdict") == verdict)

    @property
    def n(self) -> str:
        return str(len(self.items))

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
        """``+154.8% to +161.5%``: the changes of the comparisons with this verdict, or
        ``none``."""
        values = sorted(
            float(c["change_pct"]) for c in self.items
            if c.get("verdict") == verdict and c.get("change_pct") is not None
        )  # fmt: skip
        if not values:
            return "none"
        low, high = fmt.change(values[0]), fmt.change(values[-1])
        return str(low) if low == high else f"{low} to {high}"

    @property
    def verdicts(self) -> str:
        if not self.items and self._left_out:
            return "none with a verdict (their sides were run differently)"
        return verdict_counts([c.get("verdict") for c in self.items])

    @property
    def bound(self) -> str:
        """``between −3.1% and +2.4%``: where the 95% intervals of the comparisons within the
        noise measured inside one bench session leave any difference (from the lowest of their
        lows to the highest of their highs), or ``not bounded`` when none has an interval."""
        lows, highs = [], []
        for c in self.items:
            interval = (c.get("test") or {}).get("ci95_ratio")
            one_session = (c.get("sessions") or {}).get("shared") is True
            if (
                c.get("verdict") == "within_noise"
                and one_session
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


class _Fields(string.Formatter):
    def __init__(self, values: dict[str, Any], line: Any, slug: str) -> None:
        self.values = values
        self.line = line
        self.slug = slug

    def get_value(self, key: Any, args: Any, kwargs: Any) -> Any:
        if key not in self.values:
            raise _error(
                f"answer {self.slug}: the lead names {{{key}…}}, which is neither a claim of "
                "the answer nor one of its sets", self.line, "lead",
                "list the claim under claims, or the set under sets",
            )  # fmt: skip
        return self.values[key]

    def get_field(self, field_name: str, args: Any, kwargs: Any) -> Any:
        try:
            return super().get_field(field_name, args, kwargs)
        except AttributeError as exc:
            raise _error(
                f"answer {self.slug}: the lead's placeholder {{{field_name}}} is not known",
                self.line, "lead", "see the placeholders in the file's header",
            ) from exc  # fmt: skip


def incidental(comparison: dict[str, Any]) -> bool:
    """Whether a comparison's sides were run differently (another run length, warm-up or
    pgbench, in another session): two profiles that happen to share a configuration. Such a
    pair has no verdict and answers no question; answers leave it out and say how many."""
    return bool((comparison.get("sessions") or {}).get("how_run_differs"))


def compared_inside(comparison: dict[str, Any]) -> bool:
    """Whether a comparison pairs across sessions two configurations that were also compared
    inside one session: the one inside is the evidence; answers leave this one out and say how
    many."""
    return bool((comparison.get("sessions") or {}).get("compared_inside"))


def left_out_of_answers(comparison: dict[str, Any]) -> bool:
    """Whether answers leave a comparison out (and count it): see the two above."""
    return incidental(comparison) or compared_inside(comparison)


def _selected(items: list[dict[str, Any]], spec: dict[str, Any]) -> list[dict[str, Any]]:
    """The comparisons of a set: of its machine, factor and workload (incidental pairs are
    already out)."""
    return [
        c for c in items
        if (not spec.get("machine") or str(c.get("machine")).split(" ")[0] == spec["machine"])
        and str(c.get("factor", "")).startswith(str(spec.get("factor") or ""))
        and (
            not spec.get("workload")
            or (c.get("held_equal") or {}).get(WORKLOAD) == spec["workload"]
        )
    ]  # fmt: skip


def build_answers(
    known: dict[str, Any], placed: dict[str, Any], root: Path
) -> list[dict[str, Any]]:
    """Every answer, its lead filled and its evidence placed (what the page and the home show)."""
    data = load_answers(root)
    groups = {str(g.get("id")): g for g in known.get("groups") or [] if isinstance(g, dict)}
    claims = {str(c.get("id")): c for c in known.get("claims") or [] if isinstance(c, dict)}
    raw = {
        str(c.get("id")): c
        for c in known.get("comparisons") or []
        if isinstance(c, dict) and c.get("metric", "tps") == "tps"
    }
    pairs = {
        frozenset((str(c["a"].get("group")), str(c["b"].get("group")))): str(c.get("verdict"))
        for c in raw.values()
        if c.get("kind") != "span"
    }
    by_family: dict[str, list[dict[str, Any]]] = defaultdict(list)
    left_out: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for comparison in raw.values():
        family = knowledge.family_of(str(comparison.get("factor")), comparison.get("family"))
        (left_out if left_out_of_answers(comparison) else by_family)[family].append(comparison)
    shown = {c["id"]: c for items in placed["families"].values() for c in items}
    sources = data.get("sources") or {}
    cites = data.get("cites") or {}
    answers = []
    for answer in data["answers"]:
        line, slug = answer.get("__line__"), str(answer["slug"])
        values: dict[str, Any] = {}
        for cid in answer.get("claims") or []:
            if cid not in claims:
                raise _error(
                    f"answer {slug}: claim {cid!r} is not in data/claims.yaml", line, "claims",
                    "use a claim id of data/claims.yaml",
                )  # fmt: skip
            values[cid] = _Claim(claims[cid], groups, sources, pairs)
        for cid, expected in (answer.get("expects") or {}).items():
            if cid == "__line__":
                continue
            verdict = (claims.get(cid) or {}).get("verdict")
            if verdict != expected:
                raise _error(
                    f"answer {slug}: the lead assumes claim {cid} {expected!r}, but the runs "
                    f"now say {verdict!r}", line, "expects",
                    "rewrite the lead for what the figures say, then update expects",
                )  # fmt: skip
        evidence_raw = [c for f in answer["families"] for c in by_family.get(f, [])]
        if answer.get("same_disks"):
            # The same disks arranged two ways first, the largest difference (the one against
            # the fastest single array) first.
            same = [c for c in by_family.get("storage-layout", []) if c.get("same_disks")]
            same.sort(key=lambda c: -abs(float(c.get("change_pct") or 0)))
            evidence_raw = same + evidence_raw
        for name, spec in (answer.get("sets") or {}).items():
            if name == "__line__":
                continue
            family_items = by_family.get(str(spec.get("family")), [])
            values[name] = _Set(
                _selected(family_items, spec),
                groups,
                left_out=len(_selected(left_out.get(str(spec.get("family")), []), spec)),
            )
        lead = " ".join(
            _Fields(values, line, slug).format(" ".join(str(answer["lead"]).split())).split()
        )
        if len(lead.split()) > LEAD_WORDS:
            raise _error(
                f"answer {slug}: the lead has {len(lead.split())} words once filled (at most "
                f"{LEAD_WORDS}): {lead}", line, "lead", "shorten the lead",
            )  # fmt: skip
        answers.append(
            {
                "slug": slug,
                "url": f"answers/{slug}/",
                "title": str(answer["title"]),
                "label": str(answer["label"]),
                "lead": lead,
                "claims": [_claim_shown(claims[c], sources) for c in answer.get("claims") or []],
                "evidence": _evidence(evidence_raw, shown),
                "unknown": _unknown(
                    answer,
                    evidence_raw,
                    [claims[c] for c in answer.get("claims") or []],
                    [c for f in answer["families"] for c in left_out[f]],
                ),
                "why": _why(str(answer["why"]), cites),
                "cites": _cites_used(str(answer["why"]), cites),
                "links": [
                    {"title": knowledge.FAMILY_TITLES[f], "url": f"comparisons/{f}/"}
                    for f in (["storage-layout"] if answer.get("same_disks") else [])
                    + list(answer["families"])
                    if by_family.get(f)
                ],
                "machines": sorted({str(c.get("machine")).split(" ")[0] for c in evidence_raw}),
                # For the feed (when the runs under the answer last changed), not the page.
                "runs": sorted(
                    {
                        str(r)
                        for c in evidence_raw
                        for s in ("a", "b")
                        for r in (c.get(s) or {}).get("runs") or []
                    }
                ),
            }
        )
    return answers


def _claim_shown(claim: dict[str, Any], sources: dict[str, Any]) -> dict[str, Any]:
    title = str(claim.get("source"))
    checked = ". ".join(
        str(p).strip().rstrip(".") for p in (claim.get("checked"), claim.get("notes")) if p
    )
    return {
        "claim": str(claim.get("claim")),
        "source": str(sources.get(title) or title),
        "verdict": str(claim.get("verdict")),
        "checked": checked or None,
        "reason": claim.get("reason"),
    }


def _evidence(items: list[dict[str, Any]], shown: dict[str, Any]) -> list[dict[str, Any]]:
    """The comparisons, machine by machine (the first one's machine first), each once. Where a
    machine's comparisons ran different workloads, each names its workload (``context``) and
    they are grouped by it, so that "clients: 2 → 4" of one workload is not read as another's."""
    machines: dict[str, list[dict[str, Any]]] = {}
    seen: set[str] = set()
    for comparison in items:
        cid = knowledge.page_slug(str(comparison.get("id")))
        item = shown.get(cid)
        if item is None or cid in seen:
            continue
        seen.add(cid)
        workload = (comparison.get("held_equal") or {}).get(WORKLOAD)
        machines.setdefault(str(comparison.get("machine")), []).append(
            {
                "title": item["title"],
                "url": item["url"],
                "verdict": item["verdict_words"],
                "caveats": item["caveats"],
                "same_disks": bool(comparison.get("same_disks")),
                "unsafe": item["unsafe"],
                "context": str(workload) if workload is not None else None,
            }
        )
    for listed in machines.values():
        if len({c["context"] for c in listed}) > 1:
            listed.sort(key=lambda c: str(c["context"] or ""))
        else:
            for c in listed:
                c["context"] = None
    return [{"machine": m, "comparisons": c} for m, c in machines.items()]


def _unknown(
    answer: dict[str, Any],
    items: list[dict[str, Any]],
    claims: list[dict[str, Any]],
    left_out: list[dict[str, Any]],
) -> list[str]:
    out = []
    incidental_pairs = sum(1 for c in left_out if incidental(c))
    across = sum(1 for c in left_out if compared_inside(c) and not incidental(c))
    total = len(items)
    unknown = sum(1 for c in items if c.get("verdict") == "spread_unknown")
    apart = sum(1 for c in items if c.get("verdict") == "not_comparable")
    # An unsafe setting's note is a warning, not something else that changed with the factor.
    confounded = sum(
        1 for c in items
        if any(f.get("kind") != "unsafe" for f in c.get("confounds") or [] if isinstance(f, dict))
    )  # fmt: skip
    if not total:
        out.append("No comparison in the knowledge base varies this alone.")
    if incidental_pairs:
        out.append(
            f"{incidental_pairs} more comparison{'s' if incidental_pairs != 1 else ''} pair "
            "runs of different bench sessions that were also run differently (run length, "
            "warm-up or pgbench version): no verdict, so left out here; the comparison pages "
            "list them."
        )
    if across:
        out.append(
            f"{across} more comparison{'s' if across != 1 else ''} pair two configurations "
            "across bench sessions that were also compared inside one session: the comparison "
            "inside the session is the evidence (the session's own level does not enter it), so "
            "these have no verdict and are left out here; the comparison pages list them."
        )
    if unknown:
        out.append(
            f"{unknown} of {total} comparisons rest on single runs or on published figures "
            "without their runs: their size is shown, but it cannot be told from noise."
        )
    if apart:
        out.append(
            f"{apart} of {total} compare configurations measured in different bench sessions, "
            "with nothing measured of how far sessions move a result: no verdict is given."
        )
    if confounded:
        out.append(
            f"{confounded} of {total} change something else with the factor (named beside "
            "each): they cannot separate the two."
        )
    for claim in claims:
        if claim.get("verdict") == "cannot be checked":
            reason = str(claim.get("reason") or "no figures").rstrip(".")
            out.append(f"“{claim.get('claim')}” cannot be checked: {reason}.")
    out += [" ".join(str(u).split()) for u in answer.get("unknown") or []]
    return out


def _why(text: str, cites: dict[str, Any]) -> list[dict[str, str]]:
    """The mechanism as parts of text and citations ``[n]`` (numbered in order of use)."""
    order = _cite_order(text)
    parts = []
    for piece in re.split(r"(\[[a-z0-9-]+\])", " ".join(text.split())):
        if re.fullmatch(r"\[[a-z0-9-]+\]", piece):
            key = piece[1:-1]
            parts.append({"cite": str(order.index(key) + 1), "anchor": f"cite-{key}"})
        elif piece:
            parts.append({"text": piece})
    return parts


def _cite_order(text: str) -> list[str]:
    order: list[str] = []
    for key in re.findall(r"\[([a-z0-9-]+)\]", text):
        if key not in order:
            order.append(key)
    return order


def _cites_used(text: str, cites: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {
            "n": str(i),
            "anchor": f"cite-{key}",
            "title": str(cites[key].get("title")),
            "url": cites[key].get("url"),
            "note": cites[key].get("note"),
        }
        for i, key in enumerate(_cite_order(text), start=1)
    ]


def write_answers(site: Site, answers: list[dict[str, Any]]) -> None:
    """One page per answer, and the list of them."""
    for answer in answers:
        site.page(
            f"answers/{answer['slug']}.md",
            {
                "title": answer["title"],
                "description": answer["lead"],
                "params": {
                    "kind": "answer",
                    "answer": {k: v for k, v in answer.items() if k != "runs"},
                },
            },
        )
    site.page(
        "answers/_index.md",
        {
            "title": "Answers",
            "description": "The questions tuners bring, each answered from the runs and the "
            "sources' checked claims, with the evidence machine by machine.",
            "params": {
                "kind": "answers",
                "answers": [
                    {"title": a["title"], "url": a["url"], "lead": a["lead"]} for a in answers
                ],
            },
        },
    )
