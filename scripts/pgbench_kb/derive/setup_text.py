"""Short descriptions of what a run was measured on: storage, controller, and what sets a run
apart from the other runs of its machine (for titles that stay short)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from pgbench_kb.analyze.describe import flush_level
from pgbench_kb.runs import setting_words
from pgbench_kb.runs.vocabulary import LEVEL_NAMES, MEDIA_NAMES

WAL_PLACEMENT = {
    "with-data": "WAL on the data array",
    "own-disk": "WAL on its own disk",
    "own-array": "WAL on its own array",
    "own-partition": "WAL on its own partition",
    "tmpfs": "WAL in memory (tmpfs)",
}


def _get(data: Any, dotted: str) -> Any:
    for key in dotted.split("."):
        data = data.get(key) if isinstance(data, dict) else None
    return data


def describe_array(array: dict[str, Any] | None) -> str | None:
    """``RAID1+0, 4× HDD 15k rpm`` — what a reader needs to place a result."""
    if not array:
        return None
    level = LEVEL_NAMES.get(array.get("level") or "", array.get("level"))
    disks = array.get("disks")
    media = MEDIA_NAMES.get(array.get("media") or "", array.get("media"))
    rpm = array.get("rpm")
    model = array.get("disk_model")
    kind = " ".join(
        str(p)
        for p in (media, f"{rpm / 1000:g}k rpm" if rpm else None, model and f"({model})")
        if p
    )
    parts = [p for p in (level, f"{disks}× {kind}".strip() if disks and kind else kind) if p]
    if level == "single disk" and disks == 1:
        parts = [f"single {kind}".strip() if kind else "single disk"]
    return ", ".join(parts) or None


def describe_controller(controller: dict[str, Any] | None) -> str | None:
    """The controller's write cache as it affects fsync cost."""
    controller = controller or {}
    cache, battery = controller.get("write_cache"), controller.get("battery_backed")
    if cache == "write-back":
        return {True: "battery-backed write cache", False: "write-back cache, no battery"}.get(
            battery, "write-back cache"
        )
    if cache in {"write-through", "disabled"}:
        return "controller write cache off"
    return None


def describe_storage(storage: dict[str, Any] | None) -> str | None:
    if not storage:
        return None
    data = storage.get("data") or {}
    wal = storage.get("wal") or {}
    parts = []
    array = describe_array(data.get("array"))
    if array:
        parts.append(f"data on {array}")
    filesystem = data.get("filesystem")
    if filesystem:
        parts.append(
            filesystem + (f" ({data['mount_options']})" if data.get("mount_options") else "")
        )
    placement = WAL_PLACEMENT.get(wal.get("placement") or "")
    if placement:
        wal_array = describe_array(wal.get("array"))
        parts.append(placement + (f" ({wal_array})" if wal_array and placement else ""))
    controller = describe_controller(storage.get("controller"))
    if controller:
        parts.append(controller)
    return "; ".join(parts) or None


SHORT_LEVEL = {"single": "", "raid10": "RAID1+0"}
SHORT_PLACEMENT = {
    "with-data": "WAL with data",
    "own-disk": "WAL own disk",
    "own-array": "WAL own array",
    "own-partition": "WAL own partition",
    "tmpfs": "WAL in tmpfs",
}


def short_array(array: dict[str, Any] | None) -> str | None:
    """``RAID1+0 4×15k HDD`` — an array in a few characters, for titles and table cells."""
    if not array:
        return None
    level = array.get("level") or ""
    name = SHORT_LEVEL.get(level, LEVEL_NAMES.get(level, level))
    media = MEDIA_NAMES.get(array.get("media") or "", array.get("media") or "")
    rpm = array.get("rpm")
    disk = " ".join(p for p in (f"{rpm / 1000:g}k" if rpm else "", media) if p)
    if array.get("media") == "virtual" and array.get("disk_model"):
        disk = f"{array['disk_model']} {disk}"  # a cloud volume's type: gp3, io2
    disks = array.get("disks")
    many = f"{disks}×{disk}" if disks and disks > 1 else disk
    return " ".join(p for p in (name, many) if p) or None


def short_cache(controller: dict[str, Any] | None) -> str | None:
    controller = controller or {}
    cache, battery = controller.get("write_cache"), controller.get("battery_backed")
    if cache == "write-back":
        return {True: "BBU cache", False: "cache, no BBU"}.get(battery, "write-back cache")
    if cache in {"write-through", "disabled"}:
        return "no write cache"
    return None


def short_wal(wal: dict[str, Any] | None) -> str | None:
    wal = wal or {}
    placement = SHORT_PLACEMENT.get(wal.get("placement") or "")
    array = short_array(wal.get("array"))
    if placement and array and wal.get("placement") != "with-data":
        return f"WAL on {array}"
    return placement


def short_storage(storage: dict[str, Any] | None) -> str | None:
    """``RAID5 4×10k HDD, ext3, WAL on RAID1 2×10k HDD, BBU cache``"""
    storage = storage or {}
    data = storage.get("data") or {}
    parts = [
        short_array(data.get("array")),
        data.get("filesystem"),
        short_wal(storage.get("wal")),
        short_cache(storage.get("controller")),
    ]
    return ", ".join(p for p in parts if p) or None


def _get(data: Any, dotted: str) -> Any:
    for key in dotted.split("."):
        data = data.get(key) if isinstance(data, dict) else None
    return data


def _patches(run: dict[str, Any]) -> str | None:
    patches = _get(run, "postgres.build.patches")
    if patches:
        return "patched: " + ", ".join(str(p) for p in patches)
    return "unpatched" if _get(run, "postgres.build.source") else None


def _os(run: dict[str, Any]) -> str | None:
    os_facts = _get(run, "server.os") or {}
    return " ".join(str(v) for v in (os_facts.get("name"), os_facts.get("release")) if v) or None


def _emulated_flush(run: dict[str, Any]) -> str | None:
    """``flush emulated 8 ms`` for a run under an emulated commit flush (issue 30), ``flush
    traced, no delay`` for one under the tracer alone, else None:
    the device's own flush is not a configuration of its own (runs that measured it and runs
    that did not are the same configuration)."""
    return flush_level(
        _get(run, "storage.flush.emulated.target_ms"),
        _get(run, "storage.flush.emulated.traced_only"),
    )


#: What may set runs of one machine apart, in title order: (key, how to write it short).
DISTINGUISHERS: tuple[tuple[str, Any], ...] = (
    ("build", _patches),
    ("version", lambda r: f"PG {v}" if (v := _get(r, "postgres.version")) else None),
    ("os", _os),
    ("data", lambda r: short_array(_get(r, "storage.data.array"))),
    ("filesystem", lambda r: _get(r, "storage.data.filesystem")),
    ("wal", lambda r: short_wal(_get(r, "storage.wal"))),
    ("cache", lambda r: short_cache(_get(r, "storage.controller"))),
    ("flush", lambda r: _emulated_flush(r)),
    ("query_mode", lambda r: f"-M {m}" if (m := _get(r, "benchmark.query_mode")) else None),
    ("scale", lambda r: f"scale {s}" if (s := _get(r, "benchmark.scale")) is not None else None),
    ("profile", lambda r: _get(r, "postgres.settings_profile")),
)


def title_features(run: dict[str, Any]) -> dict[str, Any]:
    """What ``distinguishing_features`` needs of one run (small: computed once per run file)."""
    return {
        "features": {key: how(run) for key, how in DISTINGUISHERS},
        "settings": _get(run, "postgres.settings") or {},
        "transcribed": run.get("origin") == "transcribed",
        "version": _get(run, "postgres.version"),
    }


def distinguishing(runs: list[dict[str, Any]]) -> list[list[str]]:
    """For each run of one machine, the short words that set it apart from the others: only
    the features whose value varies among them, and settings only when no settings profile
    names the difference. Two runs that differ in nothing get the same words."""
    return distinguishing_features([title_features(run) for run in runs])


def distinguishing_features(runs: list[dict[str, Any]]) -> list[list[str]]:
    """``distinguishing`` from each run's ``title_features``. A settings profile is named only
    for a transcribed run (the source's name for its configuration): our bench's profile names
    (``profile``, ``baseline``) say nothing of the settings, which are named instead — of each
    setting that varies, the value a strict majority of the runs share goes without saying."""
    features = [
        run["features"] if run["transcribed"] else {**run["features"], "profile": None}
        for run in runs
    ]
    varying = [k for k, _ in DISTINGUISHERS if len({str(f[k]) for f in features}) > 1]
    profiles_named = "profile" in varying
    settings = [run["settings"] for run in runs]
    names = sorted({name for s in settings for name in s})
    varying_settings = [n for n in names if len({str(s.get(n)) for s in settings}) > 1]
    usual = {}
    for n in varying_settings:
        value, count = Counter(str(s.get(n)) for s in settings).most_common(1)[0]
        if 2 * count > len(settings):
            usual[n] = value
    words = []
    for run, feature, setting in zip(runs, features, settings, strict=True):
        shown = [str(feature[k]) for k in varying if feature[k] is not None]
        if not profiles_named:
            shown += [
                _setting_words(n, setting.get(n), run)
                for n in varying_settings
                if usual.get(n) != str(setting.get(n))
            ]
        words.append(shown)
    return words


def _setting_words(name: str, value: Any, run: dict[str, Any]) -> str:
    """``max_wal_size=1GB``; a setting the run left unset: ``not stated`` by a transcribed
    run's source, else what the server ran with (``checkpoint_timeout at its default (5min)``,
    ``setting_words.default_words``)."""
    if value is None and run["transcribed"]:
        return f"{name}=not stated"
    return setting_words.phrase(name, value, run.get("version"))
