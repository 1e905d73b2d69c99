"""What a hand-written page's Markdown body may hold (hardware notes, guides, section pages).

- **No raw HTML.** Hugo's Markdown renderer leaves raw HTML out and warns, and the site build
  treats warnings as errors, so a note with ``<b>`` would stop the build with a message that
  names no line. This finds such HTML first, with its line. Text that only contains ``<``
  (``latency < 5 ms``, ``a<b``), autolinks (``<https://…>``) and anything inside code spans or
  code blocks is fine.
- **No shortcodes but ``ALLOWED_SHORTCODES``.** Hugo runs shortcodes everywhere in the body,
  code blocks included (``{{</* x */>}}`` is how a page shows one as text), so they are looked
  for in the whole body. ``youtube``, ``figure``, ``x``… would embed other sites' content.
- **No image from outside the site.** ``![alt](https://…)``, ``![alt](//host/…)``, a ``data:``
  image, or a reference image whose definition points outside: a reader's browser would ask
  another host (the site's content security policy would block it too).
- **No Markdown attributes** (``## Title {style="…"}``, ``{.class}``): they would let a page
  restyle the site (config.toml turns Goldmark's attribute syntax off as well).

``kb check`` reports each as an error; ``kb derive`` refuses to build with one.
"""

from __future__ import annotations

import re

# CommonMark's raw HTML (spec 6.6): open and closing tags, comments, processing instructions,
# declarations and CDATA. A bare "<" followed by a space, a digit or "=" is text.
_ATTRIBUTE = r"""(?:\s+[A-Za-z_:][\w.:-]*(?:\s*=\s*(?:[^\s"'=<>`]+|'[^']*'|"[^"]*"))?)"""
RAW_HTML = re.compile(
    r"<[A-Za-z][A-Za-z0-9-]*" + _ATTRIBUTE + r"*\s*/?>"
    r"|</[A-Za-z][A-Za-z0-9-]*\s*>"
    r"|<!--|<\?|<![A-Za-z]|<!\[CDATA\["
)
AUTOLINK = re.compile(r"<(?:[A-Za-z][A-Za-z0-9+.-]{1,31}:[^\s<>]*|[^\s<>@]+@[^\s<>]+)>")
FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
CODE_SPAN = re.compile(r"(`+)(?:.|\n)*?(?<!`)\1(?!`)")

#: Hugo's shortcodes a page may use: they lay out local text only.
ALLOWED_SHORTCODES = frozenset({"highlight", "details"})
#: ``{{<`` or ``{{%``, then the shortcode's name (or ``/name`` closing it). ``{{</*`` shows a
#: shortcode as text.
SHORTCODE = re.compile(r"\{\{[<%]\s*(?!/\*)/?\s*([^\s>%}]*)")
#: An inline image ``![alt](target …)`` (the target may be in ``<…>``).
IMAGE = re.compile(r"!\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]*)")
#: A reference image ``![alt][label]``, ``![label][]`` or ``![label]``.
IMAGE_REF = re.compile(r"!\[((?:[^\]\\]|\\.)*)\](?:\[((?:[^\]\\]|\\.)*)\])?")
#: A link reference definition ``[label]: target``.
DEFINITION = re.compile(r"^ {0,3}\[((?:[^\]\\]|\\.)+)\]:\s*<?(\S*?)>?(?:\s|$)")
#: A target with a scheme (``https:``, ``data:``) or a network path (``//host``).
OUTSIDE = re.compile(r"^(?:[A-Za-z][A-Za-z0-9+.-]*:|//|\\\\)")
#: Goldmark's attribute syntax at the end of a line: ``{#id}``, ``{.class}``, ``{key=value}``.
ATTRIBUTES = re.compile(
    r"\{[ \t]*(?:[#.][A-Za-z_-][\w-]*|[A-Za-z_:][\w.:-]*[ \t]*=)[^{}\n]*\}[ \t]*$"
)


def _body_start(text: str) -> int:
    """Line number (1-based) of the first body line after YAML front matter, 1 without."""
    lines = text.split("\n")
    if lines and lines[0].strip() == "---":
        for index, line in enumerate(lines[1:], start=2):
            if line.strip() == "---":
                return index + 1
    return 1


def _prose_lines(text: str) -> list[tuple[int, str]]:
    """``(line, text)`` of each body line outside code blocks, code spans and autolinks blanked
    (1-based lines of the whole file, front matter included)."""
    lines = text.split("\n")
    start = _body_start(text)
    found: list[tuple[int, str]] = []
    fence: str | None = None
    for number, line in enumerate(lines[start - 1 :], start=start):
        marker = FENCE.match(line)
        if fence:
            if marker and marker.group(1)[0] == fence[0] and len(marker.group(1)) >= len(fence):
                fence = None
            continue
        if marker:
            fence = marker.group(1)
            continue
        if line.startswith("    ") or line.startswith("\t"):
            continue  # an indented code block (or a continuation; either way not HTML here)
        visible = CODE_SPAN.sub(lambda m: " " * len(m.group(0)), line)
        visible = AUTOLINK.sub(lambda m: " " * len(m.group(0)), visible)
        found.append((number, visible))
    return found


def raw_html_lines(text: str) -> list[tuple[int, str]]:
    """``(line, tag)`` of every raw HTML tag in the Markdown body of ``text`` (1-based lines of
    the whole file, front matter included)."""
    found_tags: list[tuple[int, str]] = []
    for number, visible in _prose_lines(text):
        found = RAW_HTML.search(visible)
        if found:
            found_tags.append((number, found.group(0)))
    return found_tags


RAW_HTML_MESSAGE = "raw HTML {tag!r} is not allowed in a note"
RAW_HTML_HINT = "write it in Markdown, or put it in `backticks` to show it as text"


def body_problems(text: str) -> list[tuple[int, str]]:
    """``(line, message)`` of every rule above but raw HTML that the body of ``text`` breaks:
    shortcodes, images from outside the site, Markdown attributes."""
    problems: list[tuple[int, str]] = []
    start = _body_start(text)
    lines = text.split("\n")
    for number, line in enumerate(lines[start - 1 :], start=start):
        for match in SHORTCODE.finditer(line):
            name = match.group(1)
            if name not in ALLOWED_SHORTCODES:
                shown = name[:40] or "(no name on this line)"
                problems.append(
                    (
                        number,
                        f"shortcode {shown!r} is not allowed (allowed: "
                        f"{', '.join(sorted(ALLOWED_SHORTCODES))}; write {{{{</* … */>}}}} to "
                        "show one as text)",
                    )
                )
    prose = _prose_lines(text)
    definitions: dict[str, str] = {}
    for _number, visible in prose:
        found = DEFINITION.match(visible)
        if found:
            definitions.setdefault(_label(found.group(1)), found.group(2))
    for number, visible in prose:
        for match in IMAGE.finditer(visible):
            if OUTSIDE.match(match.group(1)):
                problems.append((number, _outside_image(match.group(1))))
        for match in IMAGE_REF.finditer(visible):
            if visible[match.end() : match.end() + 1] == "(":
                continue  # an inline image, seen above
            label = _label(match.group(2) or match.group(1))
            target = definitions.get(label)
            if target is not None and OUTSIDE.match(target):
                problems.append((number, _outside_image(target)))
        if ATTRIBUTES.search(visible):
            problems.append(
                (
                    number,
                    "Markdown attributes ({…} at the end of a line) are not allowed: they "
                    "would restyle the site (remove them; put braces in `backticks` to show "
                    "them as text)",
                )
            )
    problems.sort(key=lambda p: p[0])
    return problems


def _label(text: str) -> str:
    return " ".join(text.split()).casefold()


def _outside_image(target: str) -> str:
    return (
        f"image {target[:80]!r} comes from outside the site (readers' browsers would ask "
        "another host): link to it instead, or add the image to the site"
    )
