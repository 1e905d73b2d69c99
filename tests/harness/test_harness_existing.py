"""An existing server (PGHOST): the bench works in a database it creates and drops, refuses a
database holding anything but pgbench's tables, and never drops what it did not create."""

from __future__ import annotations

import pytest
import yaml

from benchkit import Bench, ExistingServer

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
