""" "What links here" for hand-written pages: the links between notes and guides.

Pages written by ``kb derive`` show their own relations (a run its group and comparisons, a
note its runs); this adds the links people wrote in Markdown, ``[text](/hardware/box/)``.
"""

from __future__ import annotations

import re
from pathlib import Path

from pgbench_kb.errors import KbError
from pgbench_kb.runs.check.content import read_front_matter
from pgbench_kb.runs.files import content_pages

LINK = re.compile(r"\]\((/[a-z0-9/_-]*?)/?(?:#[^)]*)?\)")


def page_url(path: Path, content: Path) -> str:
    """``content/guides/x.md`` → ``guides/x/``; ``content/guides/_index.md`` → ``guides/``."""
    relative = path.relative_to(content).with_suffix("")
    parts = [p for p in relative.parts if p != "_index"]
    return "/".join(parts) + "/" if parts else ""


def backlinks(root: Path) -> dict[str, list[dict[str, str]]]:
    """Target URL (``hardware/box/``) → the hand-written pages that link to it."""
    content = root / "content"
    found: dict[str, dict[str, dict[str, str]]] = {}
    for page in content_pages(root):
        text = page.read_text(encoding="utf-8", errors="replace")
        try:
            title = str(read_front_matter(text, str(page)).get("title") or page.stem)
        except KbError:  # kb check reports a broken page; it then has no backlinks
            continue
        source = page_url(page, content)
        for target in LINK.findall(text):
            target = target.strip("/") + "/"
            if target != source:
                found.setdefault(target, {})[source] = {"title": title, "url": source}
    return {target: list(pages.values()) for target, pages in sorted(found.items())}
