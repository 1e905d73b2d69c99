"""Random YAML texts near the form ``kb import`` writes, for the fast reader's tests: dumps of
random documents with a few lines altered (values swapped for tricky ones, indents shifted,
blank, comment and continuation lines inserted, keys renamed), line soups, and deep nesting."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

from pgbench_kb.runs.runfile import dump_yaml

KEYS = ["a", "b", "key_1", "a.b", "a-b", "on", "yes", "null", "Null", "y", "1", "_", "x" * 1100]
VALUES = [
    "1", "-1", "0", "-0", "1.5", "-0.0", "012", "0o12", "0x1f", "1e3", "1.0e+3", ".nan", ".inf",
    "yes", "no", "on", "off", "True", "FALSE", "~", "null", "", "2025-01-02",
    "2025-01-02 10:00:00", "'x'", "'it''s'", "'a", "'a' b", "a'", '"q"', "[]", "{}", "[ ]",
    "[1, 2]", "{a: 1}", "&a x", "*a", "!!str x", "|", ">", "- x", "-", "---", "...", "x #c",
    "x#c", "a: b", "a:", "%x", "@x", "`x", "x y", "é", "1" * 50, "1" * 41 + ".0", "+1",
    "1_000", "<<", "=", "?x", ":x", "x\ty", "x:y", "x,y", "x]y", "a\u00a0b", "a\ufeffb",
    "a\x85b", "0.1.0", "1.", ".5", "190:20:30", "-x", "--x", "x -", "x :", "'  '", "''",
]  # fmt: skip
LEAVES = [
    1, -2, 2.5, True, None, "text", "two words", "2025-01-02", "yes", "", "it's", [], {},
    "a " * 60, "x" * 120, "0.1.0", "é", "it's a " * 20, "key: value # not " * 8, "'q' " * 30,
    "--opt=1 " * 20, "- x " * 30, "a  b " * 25, "x''y " * 25, "yes " * 30,
]  # fmt: skip


def _tree(rng: random.Random, depth: int = 0) -> Any:
    roll = rng.random()
    if depth > 4 or roll < 0.45:
        return rng.choice(LEAVES)
    if roll < 0.75:
        names = ["a", "b", "c", "key", "d.e", "f-g"]
        return {rng.choice(names) + str(i): _tree(rng, depth + 1) for i in range(rng.randint(1, 4))}
    return [_tree(rng, depth + 1) for _ in range(rng.randint(1, 3))]


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _mutate(rng: random.Random, text: str) -> str:
    lines = text.split("\n")
    for _ in range(rng.randint(0, 3)):
        i = rng.randrange(len(lines))
        line = lines[i]
        kind = rng.randrange(12)
        if kind == 0:
            lines.insert(i, "")
        elif kind == 1:
            lines.insert(i, " " * rng.choice([0, 2, 4]) + "# c")
        elif kind == 2:
            lines[i] = " " + line
        elif kind == 3 and line.startswith(" "):
            lines[i] = line[1:]
        elif kind == 4 and ": " in line:
            lines[i] = line.partition(": ")[0] + ": " + rng.choice(VALUES)
        elif kind == 5 and ": " in line:
            key, _, value = line.partition(": ")
            lines[i] = key + rng.choice([":  ", ":\t", ":", ": "]) + value
        elif kind == 6:
            extra = rng.choice([*VALUES, "word", "more words", "k: v", "- x", "end'"])
            lines.insert(i + 1, " " * (_indent(line) + rng.choice([0, 1, 2, 4])) + extra)
        elif kind == 7:
            lines.insert(i, rng.choice(["---", "...", "--- x", "%YAML 1.1", "\t", " \t# c"]))
        elif kind == 8 and line.lstrip(" ").startswith("- "):
            lines[i] = line.replace("- ", rng.choice(["-  ", "-", "- - ", "-\t"]), 1)
        elif kind == 9 and ":" in line:
            lines[i] = " " * _indent(line) + rng.choice(KEYS) + line[line.index(":") :]
        elif kind == 10:
            lines[i] = line + rng.choice([" #c", "  ", " ", "#", ":", " :", "'"])
        elif kind == 11:
            lines.insert(i, lines[i])
    return "\n".join(lines)


def _soup(rng: random.Random) -> str:
    out = []
    for _ in range(rng.randint(1, 8)):
        indent = " " * rng.choice([0, 0, 2, 2, 4, 1, 3, 6])
        dash = rng.choice(["", "", "- ", "- - ", "-", "-  "])
        roll = rng.random()
        if roll < 0.45:
            body = rng.choice(KEYS[:12]) + rng.choice([": ", ": ", ":", ":  "]) + rng.choice(VALUES)
        elif roll < 0.7:
            body = rng.choice(KEYS[:12]) + ":"
        elif roll < 0.85:
            body = rng.choice([*VALUES, "word", "two words"])
        else:
            body = rng.choice(["# c", ""])
        out.append(indent + dash + body)
    return "\n".join(out) + rng.choice(["", "\n"])


def _nest(rng: random.Random) -> str:
    depth = rng.randint(28, 36)
    if rng.random() < 0.5:
        body = "".join(" " * (2 * d) + f"k{d}:\n" for d in range(depth))
        return body + " " * (2 * depth) + "v: 1\n"
    return "".join(" " * (2 * d) + "-\n" for d in range(depth)) + " " * (2 * depth) + "x\n"


def random_texts(rng: random.Random, count: int) -> Iterator[str]:
    for _ in range(count):
        roll = rng.random()
        if roll < 0.03:
            yield _nest(rng)
        elif roll < 0.3:
            yield _soup(rng)
        else:
            tree = _tree(rng) if rng.random() < 0.9 else {"k": _tree(rng)}
            yield _mutate(rng, dump_yaml(tree))
