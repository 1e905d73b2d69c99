"""The settings each PostgreSQL major version knows, and what a run's settings are checked against.

The lists are ``runs/settings/pgMAJOR.tsv``, written by ``scripts/settings-list.sh BINDIR`` from
the ``pg_settings`` view of a throwaway server of that version (name, type, minimum, maximum,
unit, allowed values of an enum). A version without a list is not checked: ``unchecked_note``
says so.

Also here: reading settings from what a person has at hand — psql's ``SHOW ALL`` output
(aligned or unaligned) or a ``postgresql.conf`` — for ``kb import --settings-from``.
"""

from __future__ import annotations

import difflib
import functools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SETTINGS_DIR = Path(__file__).parent / "settings"

BOOL_WORDS = {"on", "off", "true", "false", "yes", "no", "1", "0", "t", "f", "y", "n"}
#: Units a value may carry, in bytes (memory) or microseconds (time).
MEMORY_UNITS = {"B": 1, "kB": 1024, "MB": 1024**2, "GB": 1024**3, "TB": 1024**4}
TIME_UNITS = {"us": 1, "ms": 1000, "s": 10**6, "min": 60 * 10**6, "h": 3600 * 10**6}
TIME_UNITS["d"] = 24 * TIME_UNITS["h"]
NUMBER_WITH_UNIT = re.compile(r"^\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*([A-Za-z]*)\s*$")


@dataclass(frozen=True)
class Setting:
    """One row of ``pg_settings``: what a value of it may be."""

    name: str
    vartype: str  # bool, integer, real, enum, string
    min_val: float | None
    max_val: float | None
    unit: str  # '', '8kB', 'kB', 'MB', 's', 'ms', 'min'…
    enumvals: tuple[str, ...]
    boot_val: str = ""  # the built-in default, in the setting's unit
    context: str = ""  # internal, postmaster, sighup, user…


def major_of(version: Any) -> str | None:
    """'18' of '18.6', '17' of '17devel', '8.4' of '8.4.2' (before 10 a major has two parts)."""
    match = re.match(r"^\s*(\d+)(?:\.(\d+))?", str(version or ""))
    if not match:
        return None
    first = int(match.group(1))
    if first >= 10:
        return str(first)
    return f"{first}.{match.group(2)}" if match.group(2) is not None else None


def known_majors() -> list[str]:
    """The major versions kb has a list for, in version order."""
    names = [p.stem.removeprefix("pg") for p in SETTINGS_DIR.glob("pg*.tsv")]
    return sorted(names, key=lambda n: [int(x) for x in n.split(".")])


@functools.cache
def settings_of(major: str) -> dict[str, Setting] | None:
    """The settings of PostgreSQL ``major`` by lower-case name, or None when kb has no list."""
    path = SETTINGS_DIR / f"pg{major}.tsv"
    if not path.is_file():
        return None
    known: dict[str, Setting] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line or line.startswith("#"):
            continue
        name, vartype, lo, hi, unit, enums, boot, context = (line.split("\t") + [""] * 8)[:8]
        known[name.lower()] = Setting(
            name=name,
            vartype=vartype,
            min_val=float(lo) if lo else None,
            max_val=float(hi) if hi else None,
            unit=unit,
            enumvals=tuple(e for e in enums.split("|") if e),
            boot_val=boot,
            context=context,
        )
    return known


def unchecked_note(version: Any) -> str:
    major = major_of(version) or str(version)
    return (
        f"settings of PostgreSQL {major} are not known to kb (it knows "
        f"{', '.join(known_majors())}); names not checked"
    )


def did_you_mean(word: str, choices: list[str]) -> str:
    close = difflib.get_close_matches(word.lower(), choices, n=1, cutoff=0.75)
    return f" (did you mean {close[0]}?)" if close else ""


def name_problem(name: str, known: dict[str, Setting], major: str) -> str | None:
    """Why ``name`` is not a setting of PostgreSQL ``major`` (None when it is). A name with a
    dot is an extension's or a custom setting, which no list holds."""
    if "." in name or name.lower() in known:
        return None
    names = [s.name for s in known.values()]
    hint = did_you_mean(name, names)
    return f"PostgreSQL {major} has no setting named {name!r}{hint}"


def _scaled(number: float, unit: str, setting: Setting) -> float | None:
    """``number unit`` in the setting's own unit (None when the unit does not fit it)."""
    base = setting.unit
    match = re.fullmatch(r"(\d*)([A-Za-z]+)", base)
    base_count, base_unit = (int(match.group(1) or 1), match.group(2)) if match else (1, base)
    for table in (MEMORY_UNITS, TIME_UNITS):
        if unit in table and base_unit in table:
            return number * table[unit] / (table[base_unit] * base_count)
    return None


def value_problem(value: Any, setting: Setting) -> str | None:
    """Why ``value`` cannot be a value of ``setting`` (None when it can, or kb cannot tell)."""
    kind = setting.vartype
    if value is None or kind == "string":
        return None
    text = str(value).strip()
    if kind == "bool":
        if isinstance(value, bool) or text.lower() in BOOL_WORDS:
            return None
        return f"{text!r} is not on or off ({setting.name} is a boolean)"
    if kind == "enum":
        allowed = [e.lower() for e in setting.enumvals]
        if isinstance(value, bool):
            return None if {"on", "off"} <= set(allowed) else _enum_text(text, setting)
        if text.lower() in allowed:
            return None
        if {"on", "off"} <= set(allowed) and text.lower() in BOOL_WORDS:
            return None
        return _enum_text(text, setting)
    if kind in {"integer", "real"}:
        if isinstance(value, bool):
            return f"{text} is not a number ({setting.name} is {_kind_words(setting)})"
        match = NUMBER_WITH_UNIT.match(text)
        if match is None:
            return f"{text!r} is not a number ({setting.name} is {_kind_words(setting)})"
        number, unit = float(match.group(1)), match.group(2)
        if unit:
            scaled = _scaled(number, unit, setting)
            if scaled is None:
                return (
                    f"{text!r}: the unit {unit!r} does not fit {setting.name} "
                    f"({_kind_words(setting)})"
                )
            number = scaled
        if kind == "integer" and not unit and not float(number).is_integer():
            return f"{text} is not a whole number ({setting.name} is {_kind_words(setting)})"
        lo, hi = setting.min_val, setting.max_val
        if (lo is not None and number < lo) or (hi is not None and number > hi):
            return f"{text} is outside {setting.name}'s range {_range_words(setting)}"
    return None


def _enum_text(text: str, setting: Setting) -> str:
    hint = did_you_mean(text, list(setting.enumvals))
    return f"{text!r} is not one of: {', '.join(setting.enumvals)}{hint}"


def _kind_words(setting: Setting) -> str:
    what = "a whole number" if setting.vartype == "integer" else "a number"
    return f"{what} in {setting.unit}" if setting.unit else what


def _range_words(setting: Setting) -> str:
    def shown(v: float | None) -> str:
        return "?" if v is None else (str(int(v)) if float(v).is_integer() else f"{v:g}")

    unit = f" {setting.unit}" if setting.unit else ""
    return f"{shown(setting.min_val)}…{shown(setting.max_val)}{unit}"


# ---------------------------------------------------------------------------------------------
# Settings from what a person has: SHOW ALL output, or postgresql.conf


def read_settings_text(text: str, *, source: str) -> dict[str, str]:
    """Setting name → value text from psql's ``SHOW ALL`` output (aligned, with its header and
    ``|`` columns, or unaligned ``name|value|description``) or from a ``postgresql.conf``
    (``name = value  # comment``). Lines of neither form are skipped; a file with no setting at
    all is an error. Raises ``ValueError`` with the line that could not be read."""
    settings: dict[str, str] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#") or set(line) <= set("-+ "):
            continue
        if re.match(r"^\(\d+ rows?\)$", line):
            continue
        if "|" in line:
            parts = [p.strip() for p in line.split("|")]
            name, value = parts[0], parts[1] if len(parts) > 1 else ""
            if name.lower() == "name" and value.lower() == "setting":
                continue  # the header of SHOW ALL
        else:
            match = re.match(r"^([A-Za-z_][A-Za-z0-9_.]*)\s*=?\s*(.*)$", line)
            if match is None:
                raise ValueError(f"{source}:{number}: cannot read {raw.strip()[:60]!r}")
            name, value = match.group(1), _conf_value(match.group(2))
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.]*", name):
            raise ValueError(f"{source}:{number}: {name[:60]!r} is not a setting name")
        settings[name.lower()] = value
    if not settings:
        raise ValueError(f"{source}: no setting found (give SHOW ALL output or a postgresql.conf)")
    return settings


def _conf_value(rest: str) -> str:
    """The value of a postgresql.conf line: quoted ('' inside quotes is a quote) or up to a #."""
    rest = rest.strip()
    if rest.startswith("'"):
        match = re.match(r"^'((?:[^']|'')*)'", rest)
        if match:
            return match.group(1).replace("''", "'")
    return rest.split("#", 1)[0].strip()


#: Settings that say where a server keeps its files, not how it is configured.
LOCATION_SETTINGS = {"data_directory", "config_file", "hba_file", "ident_file", "external_pid_file"}


def _normal(value: str, setting: Setting) -> Any:
    """A value in a form that compares equal to the default's when it means the same."""
    text = value.strip()
    if setting.vartype == "bool":
        lowered = text.lower()
        return lowered in {"on", "true", "yes", "1", "t", "y"} if lowered in BOOL_WORDS else text
    if setting.vartype in {"integer", "real"}:
        match = NUMBER_WITH_UNIT.match(text)
        if match is None:
            return text
        number, unit = float(match.group(1)), match.group(2)
        scaled = _scaled(number, unit, setting) if unit else number
        return text if scaled is None else round(scaled, 6)
    return text.lower()


def typed_value(value: str, setting: Setting | None) -> Any:
    """A setting as a run file holds it: true/false, a number without unit, else the text."""
    if setting is None:
        return value
    if setting.vartype == "bool" and value.strip().lower() in BOOL_WORDS:
        return bool(_normal(value, setting))
    if setting.vartype == "integer" and re.fullmatch(r"-?\d+", value.strip()):
        return int(value)
    if setting.vartype == "real" and re.fullmatch(r"-?\d+(\.\d*)?", value.strip()):
        return float(value)
    return value


def settings_to_record(given: dict[str, str], major: str | None) -> dict[str, Any]:
    """What a run records of settings read from SHOW ALL or a postgresql.conf: those not at
    their built-in default (all of them when kb has no list for the version), typed as the
    harness records them; never the locations of files, nor the build's fixed values."""
    known = settings_of(major) if major else None
    picked: dict[str, Any] = {}
    for name, value in given.items():
        setting = (known or {}).get(name)
        if name in LOCATION_SETTINGS or (setting is not None and setting.context == "internal"):
            continue
        if setting is not None and _normal(value, setting) == _normal(setting.boot_val, setting):
            continue
        picked[name] = typed_value(value, setting)
    return picked
