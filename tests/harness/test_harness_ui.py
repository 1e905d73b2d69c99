"""What the bench shows a person without a server: the per-trial result line (what a log keeps
instead of the live line), the summary with its advice on noisy repeats, `make help` and
`make serve` on a busy port."""

from __future__ import annotations

import socket
import subprocess

from benchkit import REPO
from pgbench_kb.bench import ui
from pgbench_kb.runs.check import NOISY_CV


def _run(tps: float, group: str = "g1", clients: int = 4) -> dict:
    return {
        "repeat": {"group": group},
        "benchmark": {"workload": {"name": "tpcb-like"}, "scale": 10, "clients": clients},
        "postgres": {"settings_profile": "defaults"},
        "results": {"tps": tps, "latency_avg_ms": 1.5, "latency_percentiles_ms": {"p99": 4.0}},
    }


def test_the_result_line_is_the_trials_figure():
    """Bug: in a log (not a terminal) each trial's line showed a mid-run progress figure, not
    what the trial measured."""
    line = ui.result_line(_run(4398.2), trial=2, of=6)
    assert line == "trial 2/6 done: 4398 tps, latency 1.500 ms, p99 4.000 ms"


def test_the_summary_says_which_repeats_are_too_noisy_and_what_to_do():
    """Bug: CVs of 9-34% appeared only later, as `kb check` warnings in `make site`; the bench's
    own summary did not say that its repeats were too noisy to compare."""
    quiet = [_run(1000), _run(1010), _run(995)]
    noisy = [_run(1000, "g2", 1), _run(1300, "g2", 1), _run(800, "g2", 1)]
    text = ui.summary_text(quiet + noisy)
    rows = text.splitlines()
    assert rows[2].endswith("0.8%")
    assert rows[3].endswith("noisy")
    assert f"vary between repeats by more than {NOISY_CV:.0%}" in text
    assert "1 of 2 configuration(s)" in text
    assert "duration_s" in text and "warmup_s" in text and "add repeats" in text
    assert "noisy:" not in ui.summary_text(quiet)


def test_the_summary_leaves_disturbed_trials_out_and_names_the_flush_level():
    """Bug: the flush-tracer bench's summary counted its 13 disturbed trials in n and in the
    spread (three of four rows "noisy"), and its native and traced rows both read "profile"."""
    native = [_run(2000), _run(2010), _run(1990)]
    disturbed = {**_run(1200), "machine_load": {"disturbed": True}}
    traced = [_run(2050, "g2"), _run(2040, "g2")]
    for run in traced:
        run["storage"] = {"flush": {"emulated": {"target_ms": None, "traced_only": True}}}
    slow = _run(190, "g3")
    slow["storage"] = {"flush": {"emulated": {"target_ms": 8.0, "traced_only": False}}}
    text = ui.summary_text([*native, disturbed, *traced, slow])
    rows = text.splitlines()
    assert rows[2].split()[4:7] == ["defaults", "3", "2000.0"]
    assert "defaults, flush traced" in rows[3] and "defaults, flush 8 ms" in rows[4]
    assert "left out: 1 disturbed trial(s)" in text
    assert "noisy:" not in text
    assert "left out" not in ui.summary_text(native)


def test_the_summary_is_kept_in_a_file(tmp_path):
    """Bug: the end-of-bench summary table existed only on the terminal."""
    import yaml

    paths = []
    for i, tps in enumerate((1000, 1010)):
        path = tmp_path / f"r{i}.yaml"
        path.write_text(yaml.safe_dump(_run(tps)), encoding="utf-8")
        paths.append(str(path))
    keep = tmp_path / "summary.txt"
    assert ui.main(["summary", "--keep", str(keep), *paths]) == 0
    assert "tps median" in keep.read_text(encoding="utf-8")


def test_make_help_names_machine_and_every_profile():
    """Bug: `make help` did not mention MACHINE, nor what each profile does."""
    done = subprocess.run(["make", "-s", "help"], cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "MACHINE=SLUG" in done.stdout
    for profile in sorted((REPO / "scripts" / "profiles").glob("*.yaml")):
        description = next(
            line.split(":", 1)[1].strip()
            for line in profile.read_text(encoding="utf-8").splitlines()
            if line.startswith("description:")
        )
        assert f"{profile.stem:<11} {description}" in done.stdout


def test_make_serve_on_a_busy_port_says_so():
    """Bug: `make serve` on a port already in use printed a Python traceback."""
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        done = subprocess.run(
            ["make", "-s", "-o", "site", "serve", f"PORT={port}"],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert done.returncode != 0
    assert "Traceback" not in done.stderr
    assert done.stderr.startswith(
        f"error: cannot serve on 127.0.0.1:{port}: Address already in use (another program "
        f"uses that port?): pick another, e.g. make serve PORT={port + 1}\n"
    ), done.stderr


def test_the_progress_watcher_starts_light_and_says_when_it_has(tmp_path):
    """Issue #36: the watcher's start-up (it imported the run-file builder and YAML) ran into
    pgbench's measured run. It now imports neither, and creates --ready once started, which
    bench.sh waits for before pgbench runs."""
    python = REPO / ".venv" / "bin" / "python"
    check = "import sys, pgbench_kb.bench.ui; print(sorted(m for m in sys.modules if m in %r))"
    heavy = {"yaml", "jsonschema", "pgbench_kb.runs.build", "pgbench_kb.bench.quiet"}
    done = subprocess.run(
        [str(python), "-c", check % (heavy,)], capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "[]"
    gone = subprocess.Popen(["true"])
    gone.wait()
    ready = tmp_path / "pgbench.out.ready"
    subprocess.run(
        [str(python), "-m", "pgbench_kb.bench.ui", "progress", "--output",
         str(tmp_path / "pgbench.out"), "--trial", "1", "--of", "1", "--seconds", "1",
         "--later-seconds", "0", "--bench-started", "0", "--done-seconds", "0",
         "--parent", str(gone.pid), "--ready", str(ready)],
        capture_output=True, text=True, check=True, timeout=60,
    )  # fmt: skip
    assert ready.exists()
