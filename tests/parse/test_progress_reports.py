"""progress_reports: the -P lines of a pgbench that is still running (no summary yet)."""

from __future__ import annotations

from pgbench_kb.parse import progress_reports


def test_reads_reports_from_output_without_a_summary():
    text = (
        "pgbench (18.6)\nstarting vacuum...end.\n"
        "progress: 1.0 s, 4216.9 tps, lat 0.944 ms stddev 0.569, 0 failed\n"
        "progress: 2.0 s, NaN tps, lat NaN ms stddev NaN, 0 failed\n"
        "progress: 3.0 s, 3998.6 tps, lat 0.999 ms stddev 0.626, 2 failed\n"
        "progress: 4.0 s, 39"  # still being written
    )
    reports = progress_reports(text)
    assert [r["t_s"] for r in reports] == [1.0, 2.0, 3.0]
    assert reports[0]["tps"] == 4216.9
    assert reports[1]["tps"] is None  # an interval with no transactions is unknown, not 0
    assert reports[2]["failed"] == 2


def test_no_reports_yet():
    assert progress_reports("pgbench (18.6)\nstarting vacuum...") == []
