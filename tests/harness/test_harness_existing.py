"""An existing server (PGHOST or --dsn): the bench works in a database it creates and drops,
refuses the server's own databases, a database holding anything but pgbench's tables and one
somebody else is connected to, keeps two benches out of one database, and never drops what it
did not create."""

from __future__ import annotations

import contextlib
import os
import pty
import select
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
        f"PGHOST={server.socket_dir} PGPORT=5432: it holds objects other than pgbench's tables "
        "(table public.customers); nothing was changed. Pass --database NAME for a new database "
        "the harness creates (and drops) itself\n"
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
    # An existing server's folders are not the bench's to write in: no fingerprint, and why.
    flush = run["storage"]["flush"]
    assert flush["wal"] is None and flush["measured_at"] is None
    assert flush["unavailable"].startswith("an existing server: its data and WAL folders")
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

    # nobody connected any more: the database is used, but a comment alone does not prove that
    # a bench of ours made it, so it is kept (see test_a_comment_alone_does_not_make_it_ours)
    done = bench.run(bench.tiny(seconds=1), **server.env())
    assert done.returncode == 0, done.stderr
    assert "its comment names a pgbench-kb bench, but not one of yours" in done.stderr
    assert "pgbench_kb" in server.databases()


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


def test_a_comment_alone_does_not_make_a_database_ours(
    bench: Bench, existing_server: ExistingServer
):
    """Bug: a database was adopted as the bench's own — and dropped at the end — on the strength
    of its comment alone, which anybody can write. Only a token the bench keeps locally proves
    it (see test_a_database_left_by_a_killed_bench_is_dropped_by_the_next)."""
    server = existing_server
    server.psql("postgres", "CREATE DATABASE pgbench_kb")
    forged = f"{LEFT_BEHIND[:-1]} (pid 1, started 2026-01-01T00:00:00Z, token 0123456789abcdef)"
    server.psql("postgres", f"COMMENT ON DATABASE pgbench_kb IS '{forged}'")
    done = bench.run(bench.tiny(seconds=1), **server.env())
    assert done.returncode == 0, done.stderr
    assert "reusing" not in done.stderr
    assert "not one of yours: it is not dropped" in done.stderr
    assert "pgbench_kb" in server.databases()
    assert _comment(server, "pgbench_kb") == forged


@pytest.mark.parametrize(
    ("sql", "named"),
    [
        ("CREATE SEQUENCE invoice_numbers", "sequence public.invoice_numbers"),
        (
            "CREATE FUNCTION add_one(int) RETURNS int LANGUAGE sql AS 'SELECT $1 + 1'",
            "function public.add_one",
        ),
        ("CREATE TYPE mood AS ENUM ('ok', 'not')", "type public.mood"),
        ("SELECT lo_from_bytea(0, 'kept')", "1 large object(s)"),
        ("CREATE SCHEMA accounting", "schema accounting"),
    ],
)
def test_refuses_a_database_holding_objects_other_than_tables(
    bench: Bench, existing_server: ExistingServer, sql: str, named: str
):
    """Bug: only tables, views and foreign tables counted as somebody's data: a database
    holding only sequences, functions, types or large objects was accepted and left with
    pgbench's tables in it (or, adopted by its comment, dropped with them)."""
    server = existing_server
    server.psql("postgres", "CREATE DATABASE pgbench_kb")
    server.psql("pgbench_kb", sql)
    done = bench.run(bench.tiny(), **server.env())
    assert done.returncode == 1
    assert done.stderr.startswith(
        "error: refusing to initialise into the database 'pgbench_kb' on the server at "
    ), done.stderr
    assert f"it holds objects other than pgbench's tables ({named}); nothing was changed" in (
        done.stderr
    )
    tables = "SELECT count(*) FROM pg_tables WHERE tablename ~ '^pgbench'"
    assert server.psql("pgbench_kb", tables) == "0"
    assert "pgbench_kb" in server.databases()


def test_a_role_that_cannot_see_other_sessions_is_refused(
    bench: Bench, existing_server: ExistingServer
):
    """Bug: to a role that is neither superuser nor in pg_read_all_stats, other roles'
    sessions show a NULL backend_type, so the "other sessions use this database" check missed
    them: a bench dropped the pgbench tables another user was querying and exited 0."""
    server = existing_server
    server.psql("postgres", "CREATE ROLE kb_bencher LOGIN CREATEDB")
    server.psql("postgres", "CREATE ROLE kb_analyst LOGIN")
    server.psql("postgres", "CREATE DATABASE pgbench_kb OWNER kb_bencher")
    server.psql("pgbench_kb", "CREATE TABLE pgbench_branches (bid int)")
    server.psql("pgbench_kb", "ALTER TABLE pgbench_branches OWNER TO kb_bencher")
    server.psql("pgbench_kb", "GRANT SELECT ON pgbench_branches TO kb_analyst")
    server.psql("pgbench_kb", "INSERT INTO pgbench_branches VALUES (7)")
    env = {**server.env(), "PGUSER": "kb_bencher"}
    with server.session("pgbench_kb", user="kb_analyst") as pid:
        done = bench.run(bench.tiny(), **env)
        assert done.returncode == 1
        assert done.stderr == (
            "error: refusing to bench in the existing database 'pgbench_kb' on the server at "
            f"PGHOST={server.socket_dir} PGPORT=5432: the role 'kb_bencher' cannot see other "
            "roles' sessions (neither superuser nor a member of pg_read_all_stats), so it "
            "cannot tell whether somebody works in it; nothing was changed. GRANT "
            "pg_read_all_stats TO kb_bencher, or pass --database NAME for a new database the "
            "bench creates (and drops) itself\n"
        )
        server.psql("postgres", "GRANT pg_read_all_stats TO kb_bencher")
        done = bench.run(bench.tiny(), **env)
        assert done.returncode == 1
        assert f"other sessions are connected to it (pid {pid}, user kb_analyst" in done.stderr
        assert server.psql("pgbench_kb", "SELECT bid FROM pgbench_branches") == "7"
    assert bench.run_files() == []


def test_a_database_named_by_a_reserved_word(bench: Bench, existing_server: ExistingServer):
    """Bug: --database select (a reserved word) failed with a syntax error at CREATE DATABASE:
    the name was not quoted."""
    server = existing_server
    done = bench.run(bench.tiny(seconds=1), "--database", "select", **server.env())
    assert done.returncode == 0, done.stderr
    assert "created the database 'select'" in done.stderr
    assert "select" not in server.databases()
    assert len(bench.run_files()) == 1


def test_a_database_left_by_a_killed_bench_is_dropped_by_the_next(
    bench: Bench, existing_server: ExistingServer
):
    """Bug: after `kill -9` of a bench on an existing server, its database stayed, and the
    next bench could only recognise it by a comment anybody can write. The bench keeps the
    token it wrote into the comment in its runtime folder; the next one finds the dead bench's
    record, says so, and drops that database — and only that one."""
    server = existing_server
    proc = bench.start(bench.tiny(seconds=2), **server.env())
    try:
        bench.wait_for_trial(1)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
    for work in bench.work_dirs():
        subprocess.run(["rm", "-rf", str(work)], check=False)
    busy = "SELECT count(*) FROM pg_stat_activity WHERE datname = 'pgbench_kb'"
    deadline = time.monotonic() + 20
    while server.psql("postgres", busy) != "0":
        assert time.monotonic() < deadline, "the killed bench's pgbench did not end"
        time.sleep(0.2)
    assert "pgbench_kb" in server.databases()
    done = bench.run(bench.tiny(seconds=1), **server.env())
    assert done.returncode == 0, done.stderr
    assert f"an earlier bench (pid {proc.pid}) ended without cleaning up: " in done.stderr
    assert "left the database 'pgbench_kb' on a server" in done.stderr
    assert "reusing the database 'pgbench_kb' an earlier bench of yours created" in done.stderr
    assert "pgbench_kb" not in server.databases()


def run_on_a_terminal(args: list[str], env: dict[str, str], timeout: float) -> tuple[int, str]:
    """Run ``args`` in a new session whose controlling terminal is a fresh pseudo-terminal (so
    a prompt would open /dev/tty and wait there, as it does for a user); return its exit
    status and everything it wrote to the terminal. Killed after ``timeout`` seconds."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: stdin, stdout and stderr are the terminal
        try:
            os.execve(args[0], args, env)
        finally:
            os._exit(127)
    seen = b""
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([fd], [], [], 0.2)
            if ready:
                try:
                    chunk = os.read(fd, 4096)
                except OSError:  # EIO: the terminal's other side is closed, the child is done
                    break
                if not chunk:
                    break
                seen += chunk
        else:
            os.kill(pid, signal.SIGKILL)
    finally:
        _, status = os.waitpid(pid, 0)
        os.close(fd)
    return os.waitstatus_to_exitcode(status), seen.decode("utf-8", "replace")


def test_a_server_that_wants_a_password_fails_fast(bench: Bench, existing_server: ExistingServer):
    """Bug: on a terminal, a server that asks for a password made the bench wait at a prompt.
    The bench never prompts (psql -w): on a real terminal, it stops at once and says where the
    password goes."""
    server = existing_server
    server.psql("postgres", "CREATE ROLE kb_locked LOGIN PASSWORD 'secret'")
    hba = server.work / "pgdata" / "pg_hba.conf"
    hba.write_text("local all kb_locked scram-sha-256\n" + hba.read_text(), encoding="utf-8")
    server.psql("postgres", "SELECT pg_reload_conf()")
    started = time.monotonic()
    status, screen = run_on_a_terminal(
        bench.args(bench.tiny()), bench.env(**{**server.env(), "PGUSER": "kb_locked"}), 60
    )
    assert time.monotonic() - started < 30, screen  # a prompt would have waited the 60 s out
    assert status == 1, screen
    assert "Password" not in screen  # nothing asked the terminal for one
    assert (
        f"error: cannot connect to the server at PGHOST={server.socket_dir} PGPORT=5432: it asks "
        "for a password and none was given ("
    ) in screen, screen
    assert "put it in PGPASSWORD or a ~/.pgpass file (the bench never prompts)" in screen
    assert bench.run_files() == []


def test_losing_the_create_database_race_is_named_and_drops_nothing(
    bench: Bench, existing_server: ExistingServer, tmp_path
):
    """Bug: a bench that lost the race to create its database (another bench, or somebody,
    created it between the bench's look-up and its CREATE DATABASE) stopped with PostgreSQL's
    bare "already exists". It now says what happened and what to do, and leaves the winner's
    database alone.

    The race is forced, not hoped for: the bench runs with PG_BINDIR pointing at the real
    binaries, except that psql first lets the "other bench" (the real psql, on the real server)
    create the database when it is asked to create it — exactly the window of a real race."""
    server = existing_server
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for binary in server.bindir.iterdir():
        (bindir / binary.name).symlink_to(binary)
    (bindir / "psql").unlink()
    wrapper = (
        "#!/usr/bin/env bash\n"
        'for arg in "$@"; do\n'
        '  if [[ "$arg" == "CREATE DATABASE "* ]]; then\n'
        f'    "{server.bindir}/psql" -X -q -d postgres -c "CREATE DATABASE pgbench_kb" >/dev/null\n'
        f'    "{server.bindir}/psql" -X -q -d pgbench_kb '
        '-c "CREATE TABLE winner_was_here (id int)" >/dev/null\n'
        "  fi\n"
        "done\n"
        f'exec "{server.bindir}/psql" "$@"\n'
    )
    (bindir / "psql").write_text(wrapper, encoding="utf-8")
    (bindir / "psql").chmod(0o755)

    done = bench.run(bench.tiny(seconds=1), **{**server.env(), "PG_BINDIR": str(bindir)})

    assert done.returncode == 1, done.stderr
    assert (
        "error: the database 'pgbench_kb' appeared on the server at "
        in done.stderr.splitlines()[-1]
    ), done.stderr
    assert "while this bench was about to create it" in done.stderr
    assert "Run the bench again once that one ends, or pass --database NAME" in done.stderr
    assert "already exists" not in done.stderr  # PostgreSQL's bare message is not the message
    assert "pgbench_kb" in server.databases()  # the winner's database is kept …
    assert server.psql("pgbench_kb", "SELECT count(*) FROM winner_was_here") == "0"  # … whole
    assert bench.run_files() == []
