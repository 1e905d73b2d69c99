"""``kb diff`` written for people: plain text for a terminal, Markdown for a pull-request
comment. Both say the same, from the object ``diff.diff_sides`` returns."""

from __future__ import annotations

import re
from typing import Any

from pgbench_kb.review.target import MARK  # the poster looks for it

#: The most lines of one list a report shows; the rest are counted.
SHOWN = 25


def _change(c: dict[str, Any]) -> str:
    pct = c["change_pct"]
    change = "?" if pct is None else f"{pct:+.1f}%"
    return f"{c['machine']}: {c['label']}: {c['a']} → {c['b']}: {change}, {c['verdict']}"


def _machine(m: dict[str, str]) -> str:
    note = {
        "complete": "its hardware note is here",
        "draft": "its hardware note is still a draft",
        "missing": "no hardware note",
    }[m["note"]]
    return f"{m['machine']}: {note} (content/hardware/{m['machine']}.md)"


def _group(g: dict[str, Any]) -> str:
    center = "?" if g["center"] is None else f"{g['center']:,.1f}"
    cv = "spread unknown" if g["cv_pct"] is None else f"CV {g['cv_pct']:.1f}%"
    facts = ", ".join(f"{k.rsplit('.', 1)[-1]} {v}" for k, v in sorted(g["factors"].items()))
    state = "new" if g["new"] else "runs changed"
    return (
        f"{g['machine']}: {g['id']} ({state}): {g['n']} run(s), {g['statistic']} {center} tps "
        f"({cv}); {facts}"
    )


def _was(c: dict[str, Any]) -> str:
    before = c["before"]
    if before["change_pct"] is None:
        return _change(c["after"])
    return f"{_change(c['after'])} (was {before['change_pct']:+.1f}%, {before['verdict']})"


def _section(title: str, lines: list[str], bullet: str) -> list[str]:
    if not lines:
        return []
    shown = [f"{bullet}{line}" for line in lines[:SHOWN]]
    if len(lines) > SHOWN:
        shown.append(f"{bullet}… and {len(lines) - SHOWN} more")
    return [title, *shown, ""]


def _parts(d: dict[str, Any]) -> list[tuple[str, list[str]]]:
    runs = d["runs"]
    per = [
        f'{m["machine"]}, runs signed "{m["contributor"]}": '
        + ", ".join(f"{len(m[k])} {k}" for k in ("added", "changed", "removed") if m[k])
        for m in runs["by_machine"]
    ]
    comparisons = d["comparisons"]
    return [
        ("What to look at", d["look_at"]),
        ("Runs by machine and contributor", per),
        ("New machines", [_machine(m) for m in d.get("machines_added", [])]),
        ("Configurations new or with new runs", [_group(g) for g in d.get("groups_added", [])]),
        ("Verdicts that flip", [
            f"{_change(c['before'])} ⇒ {c['after']['verdict']} ({c['after']['change_pct']:+.1f}%)"
            if c["after"]["change_pct"] is not None else _change(c["before"])
            for c in d["verdicts_flipped"]
        ]),
        ("New comparisons", [_change(c) for c in comparisons["added"]]),
        ("Comparisons whose figures changed", [_was(c) for c in comparisons["changed"]]),
        ("Comparisons removed", [_change(c) for c in comparisons["removed"]]),
        ("New key findings", d["key_findings"]["added"]),
        ("Key findings no longer shown", d["key_findings"]["removed"]),
        ("Claims whose verdict changes", [
            f"{c['id']}: {c['before']} ⇒ {c['after']}" for c in d["claims_changed"]
        ]),
        ("New kb check messages", d["new_check_messages"]),
    ]  # fmt: skip


def summary_line(d: dict[str, Any]) -> str:
    runs, comparisons = d["runs"], d["comparisons"]
    why = d.get("why_no_new_comparison") or []
    because = f" (because {'; '.join(why)})" if why else ""
    return (
        f"{runs['added']} run(s) added, {runs['changed']} changed, {runs['removed']} removed; "
        f"{len(comparisons['added'])} comparison(s) new{because}, "
        f"{len(comparisons['changed'])} changed, "
        f"{len(comparisons['removed'])} removed; {len(d['verdicts_flipped'])} verdict(s) flip; "
        f"{len(d['key_findings']['added'])} key finding(s) new"
    )


def _paths_text(paths: dict[str, Any]) -> list[str]:
    from pgbench_kb.runs.check.report import one_line

    lines = [f"error: {one_line(r['path'], 200)}: {r['why']}" for r in paths.get("refused", [])]
    for kind, items in (paths.get("needs_review") or {}).items():
        shown = ", ".join(one_line(p, 200) for p in items[:10])
        more = f" and {len(items) - 10} more" if len(items) > 10 else ""
        lines.append(f"needs a maintainer's review: changes {kind}: {shown}{more}")
    return [*lines, ""] if lines else []


def as_text(d: dict[str, Any]) -> str:
    """The report for a terminal: each item on one line, control and bidi characters written
    as escapes (a run's text cannot move the cursor or forge a line)."""
    from pgbench_kb.runs.check.report import one_line

    lines = [*_paths_text(d.get("paths") or {}), summary_line(d), ""]
    if not any(items for _title, items in _parts(d)):
        lines += [_nothing_line(d), ""]
    for title, items in _parts(d):
        lines += _section(title, [one_line(i, 1000) for i in items], "  - ")
    for text in d.get("texts") or []:
        lines += [f"{one_line(text['what'], 300)}:"]
        if text["what"].startswith("page "):
            from pgbench_kb.review.texts import page_diff

            diff = page_diff(text["before"], text["after"]).split("\n")
            lines += [f"  {one_line(line, 300)}" for line in diff] + [""]
            continue
        for side in ("before", "after"):
            value = "(none)" if text[side] is None else text[side]
            lines += [f"  {side}: {one_line(value, 2000)}"]
        lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"


#: What the knowledge diff computes: the only things "nothing changes" may speak for.
CHECKED = (
    "the runs, the tps comparisons and their verdicts, the key findings, the claims' "
    "verdicts and kb check's messages"
)
#: A pull-request comment may hold 65,536 characters; the review stops short of that.
MAX_COMMENT_CHARS = 60_000
#: The most characters of one quoted value, and of one text shown before or after.
MAX_QUOTED_CHARS = 400
MAX_BLOCK_CHARS = 4_000


def quote(text: object) -> str:
    """Text from a pull request, safe inside a line of the comment: quoted as data, never
    markup. Control, line-break, zero-width and bidi characters are written as escapes
    (``one_line``); Markdown's punctuation is escaped (no emphasis, code, link, image, HTML,
    table or heading); entities are shown as typed; ``@`` mentions, ``#`` references and bare
    addresses (``https://``, ``www.``) are broken by a zero-width space, so GitHub makes no
    mention, reference or link of them."""
    from pgbench_kb.runs.check.report import one_line

    text = one_line(str(text), MAX_QUOTED_CHARS).replace("&", "&amp;")
    for char in "\\`*_[]<>!|#~":
        text = text.replace(char, "\\" + char)
    # "#" first: the breaks added after it carry a "#" of their own.
    for unsafe, broken in (("#", "#&#8203;"), ("@", "@&#8203;"), ("://", ":&#8203;//"),
                           ("www.", "www&#8203;.")):  # fmt: skip
        text = text.replace(unsafe, broken)
    return text


def fenced(text: str, info: str = "text") -> list[str]:
    """``text`` as a fenced code block: shown as it is written, never rendered (a fence longer
    than any run of backticks in it, so nothing in it can end the block); control and bidi
    characters written as escapes, line by line; cut at ``MAX_BLOCK_CHARS``."""
    from pgbench_kb.runs.check.report import one_line

    if len(text) > MAX_BLOCK_CHARS:
        text = text[:MAX_BLOCK_CHARS] + f"\n… ({len(text) - MAX_BLOCK_CHARS:,} more characters)"
    lines = [one_line(line) for line in text.split("\n")]
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return [fence + info, *lines, fence]


def _paths_block(paths: dict[str, Any]) -> list[str]:
    """The top of a review: what is refused, what needs a maintainer's review."""
    lines: list[str] = []
    refused = paths.get("refused") or []
    if refused:
        lines += ["**Refused: this pull request cannot be merged as it is**", ""]
        lines += [f"- error: {quote(r['path'])}: {quote(r['why'])}" for r in refused[:SHOWN]]
        if len(refused) > SHOWN:
            lines.append(f"- … and {len(refused) - SHOWN} more")
        lines.append("")
    review = paths.get("needs_review") or {}
    if review:
        kinds = ", ".join(review)
        lines += [f"**Needs a maintainer's review: changes {kinds}**", ""]
        for kind, items in review.items():
            shown = ", ".join(quote(p) for p in items[:10])
            more = f" and {len(items) - 10} more" if len(items) > 10 else ""
            lines.append(f"- {kind}: {shown}{more}")
        lines.append("")
    if not refused and not review:
        lines += [
            f"Every changed path is a result ({paths.get('results', 0)} under data/runs/, "
            "data/raw/ or content/hardware/).",
            "",
        ]
    return lines


def _texts_blocks(texts: list[dict[str, Any]]) -> list[list[str]]:
    blocks = []
    for text in texts:
        lines = [f"**{quote(text['what'])}**", ""]
        if text["what"].startswith("page "):
            from pgbench_kb.review.texts import page_diff

            lines += fenced(page_diff(text["before"], text["after"]), "diff")
        else:
            for side in ("before", "after"):
                value = text[side]
                lines += [f"{side}:", *fenced("(none)" if value is None else value), ""]
        blocks.append([*lines, ""])
    return blocks


def _nothing_line(d: dict[str, Any]) -> str:
    """What "nothing changes" speaks for: exactly what was computed, and no more."""
    sentence = f"Nothing changes in {CHECKED}."
    paths = d.get("paths")
    if paths is None:
        return (
            sentence
            + " (This compares data only: files outside data/ and content/ are not looked at.)"
        )
    if paths.get("needs_review") or paths.get("refused"):
        return (
            sentence
            + " The files listed above change the site in ways this review does not compute:"
            " read them."
        )
    return sentence


def as_markdown(d: dict[str, Any]) -> str:
    """The pull-request comment (``MARK`` first, so the poster finds and updates its own
    comment), at most ``MAX_COMMENT_CHARS`` long: whole sections are left out from the end,
    and said to be."""
    title = (
        "What this pull request changes"
        if "paths" in d
        else "What this change does to the knowledge"
    )
    head = [MARK, f"### {title}", ""]
    if "paths" in d:
        head += _paths_block(d["paths"])
    head += [quote(summary_line(d)), ""]
    if "paths" in d and not d["new_check_messages"]:
        head += ["kb check gives no new message.", ""]
    if not any(items for _title, items in _parts(d)):
        head += [_nothing_line(d), ""]
    blocks = [
        _section(f"**{title}**", [quote(i) for i in items], "- ") for title, items in _parts(d)
    ]
    texts = d.get("texts") or []
    if texts:
        blocks.append(["**Words the site shows, before and after** (as written, not rendered)", ""])
        blocks += _texts_blocks(texts)
    lines, size, left = list(head), sum(len(x) + 1 for x in head), 0
    for block in blocks:
        cost = sum(len(x) + 1 for x in block)
        if left or size + cost > MAX_COMMENT_CHARS - 200:
            left += 1
            continue
        lines += block
        size += cost
    if left:
        lines.append(f"… {left} more section(s) left out to keep the comment short: run "
                     "`kb review BASE HEAD` for the whole review.")  # fmt: skip
    return "\n".join(lines).rstrip("\n") + "\n"
