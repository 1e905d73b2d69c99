"""The storage fingerprint is a measurement of the machine, not a factor; its emulated level is."""

import pytest

from pgbench_kb.analyze.describe import storage
from pgbench_kb.analyze.factors import kind_of, label
from pgbench_kb.analyze.grids import words


@pytest.mark.parametrize(
    "path",
    [
        "storage.flush.measured_at",
        "storage.flush.wal.sync_method_ms",
        "storage.flush.data.write_flush_8k_ms",
        "storage.flush.unavailable",
        "storage.flush.emulated.measured_ms",
        "storage.flush.emulated.added_us",
    ],
)
def test_a_sessions_measured_flush_never_splits_or_confounds_a_comparison(path):
    assert kind_of(path) == "ignored"


@pytest.mark.parametrize(
    "path", ["storage.flush.emulated.target_ms", "storage.flush.emulated.traced_only"]
)
def test_the_emulated_flush_level_is_a_factor_with_a_readers_name(path):
    assert kind_of(path) == "factor"
    assert "flush" in label(path) and "storage." not in label(path)


@pytest.mark.parametrize(
    ("target", "traced", "said"),
    [
        (2.0, False, "an emulated 2 ms flush"),
        (None, True, "the device's own flush under the tracer"),
        (None, None, "the device's own flush"),
    ],
)
def test_a_flush_level_reads_as_one_level_in_a_grids_sentence(target, traced, said):
    """Bug: the commit-flush grid read "with flush emulation unset, emulated flush latency (ms)
    unset, flush traced without delay unset, tps fell 29.3%" (and "… no" for a boolean)."""
    emulated = "storage.flush.emulated."
    value = {
        emulated + "method": None if traced is None else "strace-inject",
        emulated + "target_ms": target,
        emulated + "traced_only": traced,
    }
    assert words(value, "+".join(value)) == said


def test_a_storage_layout_names_its_emulated_flush():
    """Bug: the commit-flush page's findings read "storage layout: single virtual disk; ext4;
    WAL with data → single virtual disk; ext4; WAL with data: tps 214.7% higher", both sides
    alike, because the emulated flush that differed was not part of the words."""
    disk = {
        "storage.data.array.level": "single",
        "storage.data.array.disks": 1,
        "storage.data.array.media": "virtual",
        "storage.data.filesystem": "ext4",
        "storage.wal.placement": "with-data",
    }
    slow = {**disk, "storage.flush.emulated.target_ms": 8.0}
    traced = {**disk, "storage.flush.emulated.traced_only": True}
    assert storage(disk) == "single virtual disk; ext4; WAL with data"
    assert storage(slow) == "single virtual disk; ext4; WAL with data; flush emulated 8 ms"
    assert storage(traced).endswith("; flush traced, no delay")
