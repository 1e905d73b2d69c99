"""What a hand-written page's Markdown body may hold (hardware notes, guides, section pages).

The body is read by a real CommonMark parser (markdown-it-py in its CommonMark mode), and the
rules apply to what it finds — the images, links and raw HTML of the token tree — rather than
to patterns in the text, which missed what CommonMark allows (regression #33, attack 9: an
image destination in ``<…>``, an image after a lazy continuation line, a reference definition
inside a block quote, a destination on the next line, escaped or entity-written schemes all
passed ``kb check`` and ``kb derive``; only the browser's content security policy stopped the
request).

- **No raw HTML.** Hugo's Markdown renderer leaves raw HTML out and warns, and the site build
  treats warnings as errors, so a note with ``<b>`` would stop the build with a message that
  names no line. This finds such HTML first (CommonMark's HTML blocks and inline HTML: tags,
  comments, declarations…), with its line. Text that only contains ``<`` (``latency < 5 ms``,
  ``a<b``), autolinks (``<https://…>``) and anything inside code spans or code blocks is fine.
  An ``<iframe>``, ``<script>`` or ``<img>`` is raw HTML, so refused wherever it points.
- **No shortcodes but ``ALLOWED_SHORTCODES``.** Hugo runs shortcodes everywhere in the body,
  code blocks included (``{{</* x */>}}`` is how a page shows one as text), so they are looked
  for in the whole body. ``youtube``, ``figure``, ``x``… would embed other sites' content.
- **No image from outside the site.** An image whose destination (as the browser would read
  it: entities and escapes decoded, tabs and line breaks dropped) has a scheme (``https:``,
  ``data:``) or is a network path (``//host``, ``\\host``): a reader's browser would ask
  another host. Links to other sites stay allowed (they are followed only when clicked).
  Hugo's Markdown (Goldmark) also reads footnotes (``[^1]: …``) and definition lists, whose
  indented continuation lines CommonMark takes for code: on a page with a footnote or a
  definition-list line, the footnote markers are read as text and indented code blocks are
  read again as Markdown for images.
- **No Markdown attributes** (``## Title {style="…"}``, ``{.class}``): they would let a page
  restyle the site (config.toml turns Goldmark's attribute syntax off as well).

A body longer than ``MAX_BODY_CHARS`` (64 Ki characters) is refused unread: the parser's time
is linear, but up to 30 µs a character on hostile text.

``kb check`` reports each as an error; ``kb derive`` refuses to build with one.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from urllib.parse import unquote

from markdown_it import MarkdownIt
from markdown_it.token import Token

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
#: A destination with a scheme (``https:``, ``data:``) or a network path (``//host``,
#: ``\\host``, ``/\host``), as a browser reads it.
OUTSIDE = re.compile(r"^(?:[A-Za-z][A-Za-z0-9+.-]*:|[/\\]{2})")
#: What browsers drop from a URL before reading it: ASCII tabs and line breaks anywhere, C0
#: controls and spaces at the ends.
_URL_DROPPED = re.compile(r"[\t\n\r]")
_URL_ENDS = "".join(map(chr, range(0x21)))
#: A footnote definition's marker (``[^1]:``), which Goldmark reads and CommonMark does not.
FOOTNOTE_MARK = re.compile(r"^( {0,3})\[\^[^\]\n]+\]:[ \t]?", re.MULTILINE)
#: A line that starts a definition in Goldmark's definition lists (``: text``).
DEFINITION_LINE = re.compile(r"^ {0,3}:[ \t]", re.MULTILINE)
#: The longest body read (characters). The parser spends some µs on each character of prose
#: and up to 30 on hostile text (``![`` repeated: 29 s for 1 MiB); the longest page written so
#: far is under 6,000 characters.
MAX_BODY_CHARS = 64 * 1024
#: How deep indented code is read again as Markdown (a footnote's code holding a footnote…).
MAX_REREAD_DEPTH = 3
_PARSER = MarkdownIt("commonmark")
# Every destination is kept as written, to be judged here: markdown-it leaves out the ones it
# deems unsafe (``javascript:``, most ``data:``) as text, which Goldmark may not.
_PARSER.validateLink = lambda _url: True
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
    """``(line, tag)`` of the first raw HTML on each line of the Markdown body of ``text``
    (1-based lines of the whole file, front matter included)."""
    found: dict[int, str] = {}
    for line, kind, value in markdown_items(text):
        if kind == "html":
            tag = RAW_HTML.search(value)
            found.setdefault(line, tag.group(0) if tag else value.strip()[:40])
    return sorted(found.items())


@functools.lru_cache(maxsize=8)
def markdown_items(text: str) -> tuple[tuple[int, str, str], ...]:
    """``(line, kind, value)`` of each image (``src``), link (``href``) and raw HTML
    (``html``) of the body of ``text``, from its CommonMark parse; 1-based lines of the file."""
    start = _body_start(text)
    body = "\n".join(text.split("\n")[start - 1 :])
    if len(body) > MAX_BODY_CHARS:
        return ((start, "too long", str(len(body))),)
    if "![" not in body and "<" not in body:
        return ()  # no image and no HTML can be there: the parse (some µs a character) is spared
    goldmark_blocks = bool(FOOTNOTE_MARK.search(body) or DEFINITION_LINE.search(body))
    return tuple(_items(body, start, goldmark_blocks, 0))


def _items(body: str, first: int, reread: bool, depth: int) -> Iterator[tuple[int, str, str]]:
    if reread:
        body = FOOTNOTE_MARK.sub(r"\1", body)
    for token in _PARSER.parse(body, {}):
        line = first + (token.map[0] if token.map else 0)
        if token.type == "html_block":
            if depth == 0:
                yield line, "html", token.content
        elif token.type == "inline":
            yield from _inline_items(token.children or [], line, depth)
        elif token.type == "code_block" and reread and depth < MAX_REREAD_DEPTH:
            # Goldmark may lay this out as a footnote's or a definition's paragraph.
            yield from _items(token.content, line, reread, depth + 1)


def _inline_items(children: list[Token], line: int, depth: int) -> Iterator[tuple[int, str, str]]:
    for child in children:
        if child.type in ("softbreak", "hardbreak"):
            line += 1
        elif child.type == "image":
            yield line, "image", str(child.attrs.get("src") or "")
            yield from _inline_items(child.children or [], line, depth)
        elif child.type == "link_open":
            yield line, "link", str(child.attrs.get("href") or "")
        elif child.type == "html_inline" and depth == 0:
            yield line, "html", child.content


def is_outside(destination: str) -> bool:
    """Whether a browser would fetch ``destination`` (an image's, as the parser gives it,
    percent-encoded) from another host, or from no host (``data:``)."""
    url = _URL_DROPPED.sub("", unquote(destination)).strip(_URL_ENDS)
    return bool(OUTSIDE.match(url))


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
    for number, kind, value in markdown_items(text):
        if kind == "image" and is_outside(value):
            problems.append((number, _outside_image(value)))
        elif kind == "too long":
            problems.append(
                (
                    number,
                    f"the body is {int(value):,} characters long; a page's Markdown is read up "
                    f"to {MAX_BODY_CHARS // 1024} Ki characters (a page is prose; link to long "
                    "material instead)",
                )
            )
    for number, visible in _prose_lines(text):
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


def _outside_image(target: str) -> str:
    return (
        f"image {unquote(target)[:80]!r} comes from outside the site (readers' browsers would ask "
        "another host): link to it instead, or add the image to the site"
    )
