"""An existing server (PGHOST or --dsn): the bench works in a database it creates and drops,
refuses the server's own databases, a database holding anything but pgbench's tables and one
somebody else is connected to, keeps two benches out of one database, and never drops what it
did not create."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time

import pytest
import yaml

from benchkit import LIB, Bench, ExistingServer, embedded_bin, free_port, shared_tmp

pytestmark = pytest.mark.postgres


def test_refuses_a_database_with_other_tables_and_changes_nothing(
    bench: Bench, existing_server: ExistingServer
):
    server = existing_server
    server.psql("postgres", "CREATE DATABASE appdb")
    server.psql("appdb", "CREATE TABLE customers (id int PRIMARY KEY, name text)")
    server.psql("appdb", "INSERT INTO customers SELECT g, 'c' || g FROM generate_series(1, 50) g")
    server.psql("appdb", "CREATE TABLE pgbench_accounts (aid int)")  # pgbench's name, not data
    server.psql("appdb", "INSERT INTO pgbench_accounts VALUES (42)")

    done = bench.run(bench.tiny(), "--database", "appdb", **server.env())
    assert done.returncode == 1
    assert done.stderr == (
        f"error: refusing to initialise into the database 'appdb' on the server at "
        f"PGHOST={server.socket_dir} PGPORT=5432: it holds tables other than pgbench's "
        "(public.customers); nothing was changed. Pass --database NAME for a new database the "
        "harness creates (and drops) itself\n"
    )
    assert server.psql("appdb", "SELECT count(*) FROM customers") == "50"
    assert server.psql("appdb", "SELECT aid FROM pgbench_accounts") == "42"
    assert server.psql("postgres", "SELECT datname FROM pg_database ORDER BY 1").split() == [
        "appdb",
        "postgres",
        "template0",
        "template1",
    ]
    assert bench.run_files() == []


def test_runs_in_its_own_database_and_drops_only_that(
    bench: Bench, existing_server: ExistingServer
):
    server = existing_server
    server.psql("postgres", "CREATE DATABASE appdb")
    server.psql("appdb", "CREATE TABLE customers (id int)")
    done = bench.run(bench.tiny(), **server.env())
    assert done.returncode == 0, done.stderr
    assert "created the database 'pgbench_kb'" in done.stderr
    (path,) = bench.run_files()
    run = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert run["provenance"]["harness"]["target"] == "existing"
    assert run["benchmark"]["reset"] == "reinit"
    assert run["postgres"]["initdb_before_run"] is False
    assert run["client"]["network"] == "local-socket"
    assert run["results"]["tps"] > 0
    # its own database is gone, the others are untouched
    assert server.psql("postgres", "SELECT datname FROM pg_database ORDER BY 1").split() == [
        "appdb",
        "postgres",
        "template0",
        "template1",
    ]
    assert server.psql("appdb", "SELECT count(*) FROM pg_tables WHERE tablename = 'customers'")


def test_settings_sets_are_refused_on_an_existing_server(
    bench: Bench, existing_server: ExistingServer
):
    profile = bench.profile(
        "description: x\nscales: [1]\nclients: [1]\nworkloads: [tpcb-like]\nduration_s: 1\n"
        "settings_sets:\n  async: {synchronous_commit: 'off'}\n"
    )
    done = bench.run(profile, **existing_server.env())
    assert done.returncode == 1
    assert done.stderr == (
        f"error: profile '{profile}' changes server settings (settings 'async'); the harness "
        "never restarts or reconfigures an existing server: run this profile on a throwaway "
        "server (the embedded PostgreSQL or PG_BINDIR)\n"
    )
    assert existing_server.psql("postgres", "SHOW synchronous_commit") == "on"


def test_keeps_a_database_it_did_not_create(bench: Bench, existing_server: ExistingServer):
    """An empty database somebody made is used (pgbench's tables only) but never dropped."""
    server = existing_server
    server.psql("postgres", "CREATE DATABASE pgbench_kb")
    done = bench.run(bench.tiny(), **server.env())
    assert done.returncode == 0, done.stderr
    assert "using the existing database 'pgbench_kb'" in done.stderr
    assert len(bench.run_files()) == 1
    kept = "SELECT count(*) FROM pg_database WHERE datname = 'pgbench_kb'"
    assert server.psql("postgres", kept) == "1"
    tables = server.psql("pgbench_kb", "SELECT count(*) FROM pg_tables WHERE tablename ~ '^pgb'")
    assert tables == "4"


LEFT_BEHIND = "created by pgbench-kb for a bench; dropped when the bench ends"


def _comment(server: ExistingServer, db: str) -> str:
    return server.psql(
        "postgres",
        f"SELECT shobj_description(oid, 'pg_database') FROM pg_database WHERE datname = '{db}'",
    )


def test_refuses_the_servers_own_databases_and_templates(
    bench: Bench, existing_server: ExistingServer
):
    """Bug: --database postgres, template1 or any template database was accepted: pgbench -i
    filled the server's own database (or one copied into every new database)."""
    server = existing_server
    server.psql("postgres", "CREATE DATABASE shop_template IS_TEMPLATE true")
    server.psql("shop_template", "CREATE TABLE pgbench_branches (bid int)")
    server.psql("shop_template", "INSERT INTO pgbench_branches VALUES (7)")
    before = server.databases()
    where = f"the server at PGHOST={server.socket_dir} PGPORT=5432"
    for name in ("postgres", "template0", "template1"):
        done = bench.run(bench.tiny(), "--database", name, **server.env())
        assert done.returncode == 1
        assert done.stderr == (
            f"error: refusing to bench in the database '{name}': it is one of the server's own "
            "databases, which pgbench -i must not fill and the bench must never drop; nothing "
            "was changed. Pass --database NAME for a database of the bench's own (default "
            "pgbench_kb)\n"
        )
    done = bench.run(bench.tiny(), "--database", "shop_template", **server.env())
    assert done.returncode == 1
    assert done.stderr == (
        f"error: refusing to bench in the database 'shop_template' on {where}: it is a template "
        "(datistemplate), copied into every database created from it; nothing was changed. "
        "Pass --database NAME for a database of the bench's own\n"
    )
    assert server.databases() == before
    tables = "SELECT count(*) FROM pg_tables WHERE tablename ~ '^pgbench'"
    assert server.psql("postgres", tables) == "0"
    assert server.psql("template1", tables) == "0"
    assert server.psql("shop_template", "SELECT bid FROM pgbench_branches") == "7"
    template = "SELECT datistemplate FROM pg_database WHERE datname = 'shop_template'"
    assert server.psql("postgres", template) == "t"
    assert bench.run_files() == []


def test_refuses_a_database_others_are_connected_to(bench: Bench, existing_server: ExistingServer):
    """Bug: any database whose comment began "created by pgbench-kb" was adopted — and dropped
    when the bench ended — even while another bench or somebody else was working in it. Only
    one nobody is connected to (left behind by a killed bench) is adopted."""
    server = existing_server
    server.psql("postgres", "CREATE DATABASE pgbench_kb")
    server.psql("postgres", f"COMMENT ON DATABASE pgbench_kb IS '{LEFT_BEHIND}'")
    server.psql("pgbench_kb", "CREATE TABLE pgbench_branches (bid int)")
    server.psql("pgbench_kb", "INSERT INTO pgbench_branches VALUES (7)")
    with server.session("pgbench_kb") as pid:
        done = bench.run(bench.tiny(), **server.env())
        assert server.psql("pgbench_kb", "SELECT bid FROM pgbench_branches") == "7"
    assert done.returncode == 1
    assert done.stderr == (
        "error: refusing to bench in the database 'pgbench_kb' on the server at "
        f"PGHOST={server.socket_dir} PGPORT=5432: other sessions are connected to it (pid {pid}, "
        "user postgres, application 'someone') — another bench, or somebody's work; nothing was "
        "changed. Wait until they end, or pass --database NAME for a database of the bench's "
        "own\n"
    )
    assert "pgbench_kb" in server.databases()
    assert _comment(server, "pgbench_kb") == LEFT_BEHIND
    assert bench.run_files() == []

    # nobody connected any more: the left-behind database is adopted, and dropped at the end
    done = bench.run(bench.tiny(seconds=1), **server.env())
    assert done.returncode == 0, done.stderr
    assert "reusing the database 'pgbench_kb' an earlier bench created" in done.stderr
    assert "pgbench_kb" not in server.databases()


def test_two_benches_never_share_a_database(bench: Bench, existing_server: ExistingServer):
    """Bug: a second bench adopted the database the first had created (its comment said
    pgbench-kb), re-initialised it under the first one's pgbench, and dropped it."""
    server = existing_server
    first = bench.start(bench.tiny(seconds=4), **server.env())
    try:
        bench.wait_for_trial(1)
        comment = _comment(server, "pgbench_kb")
        second = bench.run(bench.tiny(seconds=1), **server.env())
        stdout, stderr = first.communicate(timeout=60)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(first.pid, signal.SIGKILL)
    assert comment.startswith("created by pgbench-kb for a bench on host ")
    assert f"(pid {first.pid}, started " in comment
    assert second.returncode == 1
    assert "refusing to bench in the database 'pgbench_kb'" in second.stderr
    assert f"application 'pgbench-kb lock (bench pid {first.pid})'" in second.stderr
    assert first.returncode == 0, stderr
    assert stdout.splitlines()[0] == str(*bench.run_files())
    assert "pgbench_kb" not in server.databases()


def test_the_advisory_lock_keeps_a_second_bench_out(existing_server: ExistingServer):
    """Bug: nothing kept two benches out of one database. Two starting at the same moment both
    pass the check of connected sessions; the session advisory lock lets only one through."""
    server = existing_server
    server.psql("postgres", "CREATE DATABASE pgbench_kb")
    script = (
        f"set -Eeuo pipefail; source {LIB}/common.sh; source {LIB}/server.sh; "
        f"source {LIB}/target.sh; KB_WORK={server.work}; KB_PG_BINDIR={embedded_bin()}; "
        "KB_BENCH_DB=pgbench_kb; kb_target_lock; echo locked; kb_target_unlock; echo released"
    )
    env = {**os.environ, **server.env()}
    held = "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND objid = 1885823595"
    with server.session("pgbench_kb", "SELECT pg_advisory_lock(1885823595), pg_sleep(120)"):
        deadline = time.monotonic() + 15
        while server.psql("postgres", held) != "1":
            assert time.monotonic() < deadline, "the other session did not take the lock"
            time.sleep(0.05)
        done = subprocess.run(["bash", "-c", script], env=env, capture_output=True, text=True)
    assert done.returncode == 1
    assert done.stderr == (
        "error: refusing to bench in the database 'pgbench_kb' on the server at "
        f"PGHOST={server.socket_dir} PGPORT=5432: another bench holds it (advisory lock "
        "1885823595); nothing was changed. Wait until it ends, or pass --database NAME\n"
    )
    done = subprocess.run(["bash", "-c", script], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["locked", "released"]
    assert server.psql("postgres", held) == "0"


@pytest.mark.parametrize(
    ("address", "network", "local"),
    [
        ("", "local-socket", "yes"),
        ("127.0.0.1", "loopback-tcp", "yes"),
        ("::1", "loopback-tcp", "yes"),
        ("10.1.2.3", "other", "no"),
        ("unknown", "other", "no"),
    ],
)
def test_locality_from_the_servers_address(address: str, network: str, local: str):
    """Bug: any --dsn made the server "not local", even host=localhost or a socket path."""
    script = (
        f"source {LIB}/common.sh; source {LIB}/target.sh; kb_target_locality '{address}'; "
        'echo "$KB_NETWORK $KB_SERVER_IS_LOCAL"'
    )
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True)
    assert done.stdout.split() == [network, local]


def test_a_dsn_with_a_socket_path_is_local_and_masked(
    bench: Bench, existing_server: ExistingServer
):
    """Bugs: any --dsn forced KB_SERVER_IS_LOCAL=no, so the server's facts were missing for
    `--dsn host=/socket/dir`; and with --mask-hostnames the DSN's host stayed in
    benchmark.command."""
    server = existing_server
    dsn = f"host={server.socket_dir} port=5432 user=postgres"
    done = bench.run(bench.tiny(seconds=1), "--dsn", dsn, "--mask-hostnames")
    assert done.returncode == 0, done.stderr
    (path,) = bench.run_files()
    text = path.read_text(encoding="utf-8")
    run = yaml.safe_load(text)
    assert run["benchmark"]["command"].endswith(
        "'host=<masked> port=5432 user=postgres dbname=pgbench_kb'"
    )
    assert str(server.socket_dir) not in text
    assert run["server"]["hostname"] is None
    assert "server.hostname" in run["provenance"]["masked"]
    assert run["client"]["network"] == "local-socket"
    assert run["client"]["same_as_server"] is True
    assert run["server"]["cpu"]["threads"] == os.cpu_count()
    assert run["storage"]["data"]["path"] == str(server.work / "pgdata")


def test_a_dsn_to_localhost_records_the_servers_facts(bench: Bench):
    """Bug: any --dsn forced KB_SERVER_IS_LOCAL=no, so `--dsn host=localhost` recorded the
    client but not the server's machine and storage, though the server runs on this host."""
    with shared_tmp("kb-existing-") as work:
        server = ExistingServer(work=work, bindir=embedded_bin(), port=free_port(), tcp=True)
        server.start()
        try:
            dsn = f"host=localhost port={server.port} user=postgres"
            done = bench.run(bench.tiny(seconds=1), "--dsn", dsn)
        finally:
            server.stop()
    assert done.returncode == 0, done.stderr
    (path,) = bench.run_files()
    run = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert run["client"]["network"] == "loopback-tcp"
    assert run["client"]["same_as_server"] is True
    assert run["server"]["cpu"]["threads"] == os.cpu_count()
    assert run["storage"]["data"]["path"] == str(work / "pgdata")
    assert "host=localhost" in run["benchmark"]["command"]
