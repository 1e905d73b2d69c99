"""``kb diff`` written for people: plain text for a terminal, Markdown for a pull-request
comment. Both say the same, from the object ``diff.diff_sides`` returns."""

from __future__ import annotations

from typing import Any

#: The most lines of one list a report shows; the rest are counted.
SHOWN = 25

MARK = "<!-- pgbench-kb diff -->"


def _change(c: dict[str, Any]) -> str:
    pct = c["change_pct"]
    change = "?" if pct is None else f"{pct:+.1f}%"
    return f"{c['machine']}: {c['label']}: {c['a']} → {c['b']}: {change}, {c['verdict']}"


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
        f"{m['machine']} ({m['contributor']}): "
        + ", ".join(f"{len(m[k])} {k}" for k in ("added", "changed", "removed") if m[k])
        for m in runs["by_machine"]
    ]
    comparisons = d["comparisons"]
    return [
        ("What to look at", d["look_at"]),
        ("Runs by machine and contributor", per),
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


def as_text(d: dict[str, Any]) -> str:
    lines = [summary_line(d), ""]
    for title, items in _parts(d):
        lines += _section(title, items, "  - ")
    return "\n".join(lines).rstrip("\n") + "\n"


def _md(text: str) -> str:
    """Text safe inside a Markdown list item: no HTML, no links or images made from it."""
    for char in "\\`*_[]<>!|#":
        text = text.replace(char, "\\" + char)
    return text.replace("\n", " ")


def as_markdown(d: dict[str, Any]) -> str:
    """The pull-request comment (``MARK`` first, so a workflow can find and update it)."""
    lines = [MARK, "### What this change does to the knowledge", "", _md(summary_line(d)), ""]
    if not any(items for _title, items in _parts(d)):
        lines.append("Nothing that the site publishes changes.")
    for title, items in _parts(d):
        lines += _section(f"**{title}**", [_md(i) for i in items], "- ")
    return "\n".join(lines).rstrip("\n") + "\n"
