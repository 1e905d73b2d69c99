"""Hand-written texts for the fast reader's tests (tests/runs) and kb check's (tests/check):
what it must give up on, and what it reads like the full loader."""

from __future__ import annotations

from pgbench_kb.runs.runfile import MAX_DEPTH


def _nested(depth: int) -> str:
    return "".join(" " * (2 * d) + f"k{d}:\n" for d in range(depth)) + " " * (2 * depth) + "v: 1\n"


# Each text the fast reader must give up on (the full loader refuses it, or reads it in a way
# the line-by-line reader does not follow).
GIVES_UP = {
    "duplicate key": "a: 1\nb: 2\na: 3\n",
    "anchor and alias": "a: &x 1\nb: *x\n",
    "anchor on a mapping": "a: &x\n  b: 1\n",
    "merge key": "a:\n  b: 1\nc:\n  <<: 1\n",
    "tag": "a: !!str 1\n",
    "local tag": "a: !thing x\n",
    "flow sequence": "a: [1, 2]\n",
    "flow mapping": "a: {b: 1}\n",
    "flow with spaces": "a: [ ]\n",
    "two documents": "a: 1\n---\nb: 2\n",
    "document start": "---\na: 1\n",
    "document end": "a: 1\n...\n",
    "directive": "%YAML 1.1\n---\na: 1\n",
    "tab in indentation": "a:\n\tb: 1\n",
    "tab after the colon": "a:\t1\n",
    "tab inside text": "a: x\ty\n",
    "octal": "a: 012\n",
    "hexadecimal": "a: 0x1f\n",
    "exponent": "a: 1.0e+3\n",
    "nan": "a: .nan\n",
    "infinity": "a: -.inf\n",
    "underscores": "a: 1_000\n",
    "sexagesimal": "a: 190:20:30\n",
    "plus sign": "a: +1\n",
    "figure too long": f"a: {'1' * 41}\n",
    "comment after a value": "a: 1 # one\n",
    "comment after a key": "a: # none\n  b: 1\n",
    "quoted key": "'a': 1\n",
    "double-quoted key": '"a": 1\n',
    "double-quoted value": 'a: "x"\n',
    "literal block": "a: |\n  x\n",
    "folded block": "a: >\n  x\n",
    "key read as a boolean": "on: 1\n",
    "key read as null": "null: 1\n",
    "numeric key": "1: x\n",
    "explicit key": "? a\n: 1\n",
    "value that starts a sequence": "a: - x\n",
    "two spaces after the colon": "a:  x\n",
    "two spaces after the dash": "a:\n-  x\n",
    "text across a blank line": "a: one\n\n  two\n",
    "text across a comment line": "a: one\n# c\n  two\n",
    "quoted text across a blank line": "a: 'one\n\n  two'\n",
    "quoted text across a comment line": "a: 'one\n  # c\n  two'\n",
    "quoted text never closed": "a: 'one\n  two\n",
    "text after the closing quote": "a: 'one\n  two' three\n",
    "a scalar document": "just text\n",
    "carriage return": "a: 1\r\nb: 2\r\n",
    "next line character": "a: x\x85y\n",
    "byte-order mark inside": "a: x\ufeffy\n",
    "control character": "a: x\x07y\n",
    "line separator": "a: x\u2028y\n",
    "nested deeper than the limit": _nested(MAX_DEPTH + 1),
    "key too long for YAML": f"{'k' * 1100}: 1\n",
    "value ending in a colon": "a: x:\n",
    "continuation ending in a colon": "a: x\n  y:\n",
    "reserved character": "a: @x\n",
}


# Each text the fast reader reads, and what YAML 1.1 (as the full loader reads it) makes of it.
READS = {
    "yes is true": ("a: yes\nb: 'yes'\n", {"a": True, "b": "yes"}),
    "dates stay text": (
        "a: 2025-01-02\nb: 2025-01-02 10:00:00\n",
        {"a": "2025-01-02", "b": "2025-01-02 10:00:00"},
    ),
    "tilde is null": ("a: ~\nb: null\nc:\n", {"a": None, "b": None, "c": None}),
    "1e3 is text in YAML 1.1": ("a: 1e3\n", {"a": "1e3"}),
    "0o12 is text in YAML 1.1": ("a: 0o12\n", {"a": "0o12"}),
    "plain decimals": (
        "a: -0\nb: -0.0\nc: 2.50\nd: 0.1.0\n",
        {"a": 0, "b": -0.0, "c": 2.5, "d": "0.1.0"},
    ),
    "hash without a space": ("a: x#y\n", {"a": "x#y"}),
    "colon without a space": ("a: http://x:80/y\n", {"a": "http://x:80/y"}),
    "escaped quote": ("a: 'it''s'\n", {"a": "it's"}),
    "quoted over lines": (
        "a: 'one: two # three\n  four''s\n  five'\nb: 1\n",
        {"a": "one: two # three four's five", "b": 1},
    ),
    "plain over lines": ("a: one\n  --two\n  three\n", {"a": "one --two three"}),
    "empty collections": ("a: []\nb: {}\n", {"a": [], "b": {}}),
    "sequence not indented": ("a:\n- 1\n- - 2\n  - 3\n", {"a": [1, [2, 3]]}),
    "null items": ("a:\n-\n- b\n", {"a": [None, "b"]}),
    "comments and blank lines between keys": ("# c\na: 1\n\n  # c\nb: 2\n", {"a": 1, "b": 2}),
    "nested to the limit": (_nested(MAX_DEPTH - 1), None),
}
