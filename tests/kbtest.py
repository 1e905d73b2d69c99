"""Helpers for the tests: paths of this checkout, the real kb command, a site build and a local
static file server. Fixtures built on them live in conftest.py."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import http.server
import os
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
VENV_BIN = REPO / ".venv" / "bin"
KB = VENV_BIN / "kb"
#: Real pgbench outputs (8.0-era to 18) kept as parser fixtures; tests read nothing outside
#: the repository.
REFERENCE_OUTPUTS = REPO / "tests" / "parse" / "fixtures"
CHROMIUM_CANDIDATES = ("/usr/bin/chromium", "/usr/bin/chromium-browser")
SITE_SOURCES = ("config.toml", "layouts", "static", "content")
#: What the project ships as knowledge: tests that compare with goldens or shipped figures read
#: these as committed (``shipped_root``), so runs a user benched into the checkout change nothing.
SHIPPED_KNOWLEDGE = ("data", "content")
#: The one switch that rewrites golden files (read every diff it makes before committing).
UPDATE_GOLDENS = os.environ.get("KB_UPDATE_GOLDENS") == "1"


def assert_golden(path: Path, text: str) -> None:
    """``text`` equals the golden file ``path``; with KB_UPDATE_GOLDENS=1 the file is written
    first (then read the diff)."""
    if UPDATE_GOLDENS:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert path.is_file(), f"no golden {path.name}: run once with KB_UPDATE_GOLDENS=1, read it"
    assert text == path.read_text(encoding="utf-8")


def _git(*args: str) -> str | None:
    done = subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True)
    return done.stdout.strip() if done.returncode == 0 else None


def shipped_source() -> str:
    """Where ``shipped_root`` takes data/ and content/ from, in words (the pytest header)."""
    if _git("rev-parse", "--verify", "-q", "HEAD") is None:
        return "data/ and content/ as they are on disk (not a git checkout: no HEAD to read)"
    return "data/ and content/ as committed at HEAD (git archive), not as benched since"


@functools.cache
def shipped_root() -> Path:
    """A folder holding data/ and content/ as committed at HEAD (``git archive``), extracted
    once per HEAD and shared by test processes; the checkout itself outside a git checkout.
    Read it, never write to it: copy it first (``copy_day_one``)."""
    trees = [_git("rev-parse", "-q", "--verify", f"HEAD:{name}") for name in SHIPPED_KNOWLEDGE]
    if None in trees:
        return REPO
    key = hashlib.sha256(" ".join(trees).encode()).hexdigest()[:16]
    target = Path(tempfile.gettempdir()) / f"pgbench-kb-shipped-{key}"
    if (target / ".complete").is_file():
        return target
    staging = Path(tempfile.mkdtemp(prefix="pgbench-kb-shipped.", dir=target.parent))
    archive = subprocess.run(
        ["git", "archive", "--format=tar", "HEAD", *SHIPPED_KNOWLEDGE],
        cwd=REPO,
        capture_output=True,
        check=True,
    )
    subprocess.run(["tar", "-x", "-C", str(staging)], input=archive.stdout, check=True)
    (staging / ".complete").touch()
    try:
        staging.rename(target)
    except OSError:  # another test process extracted the same commit first
        shutil.rmtree(staging, ignore_errors=True)
    return target


@functools.cache
def _shipped_runs() -> tuple[dict, ...]:
    """Every shipped run file's data (``shipped_root``), read once per test process with the
    one reader (``runs.runfile.read_run``)."""
    from pgbench_kb.runs.runfile import read_run

    runs = sorted((shipped_root() / "data" / "runs").rglob("*.yaml"))
    return tuple(read_run(path).data for path in runs)


def imported_set_runs(name: str) -> list[dict]:
    """The shipped runs ``kb import`` wrote for the result set ``name`` (their repeat groups
    start with it), in path order."""
    return [
        r
        for r in _shipped_runs()
        if (r.get("repeat") or {}).get("group", "").startswith(f"{name}-")
    ]


def run_kb(
    *args: str,
    cwd: Path | None = None,
    input: str | None = None,
    env: dict[str, str] | None = None,
    process: bool = False,
) -> subprocess.CompletedProcess[str]:
    """Run ``kb ARGS`` and return what a finished process gives (never raises): its exit
    status, standard output and error as text.

    By default in this process: ``pgbench_kb.cli.main`` (the real parser, handlers and error
    lines) with its standard streams captured, ``cwd`` entered, ``env`` as the whole
    environment (as for a process) while it runs, and an uncaught exception
    turned into exit status 1 with its traceback on standard error, as Python does. That
    spares a Python start-up and the package's imports per call (about half a second of CPU
    each). ``process=True`` runs the installed ``kb`` executable instead: for what only a
    process shows (the entry point, signals, limits, exit status from the shell)."""
    if process:
        return subprocess.run(
            [str(KB), *args],
            cwd=cwd,
            input=input,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
    return _run_kb_here(list(args), cwd, input, env)


def _run_kb_here(
    argv: list[str], cwd: Path | None, input: str | None, env: dict[str, str] | None
) -> subprocess.CompletedProcess[str]:
    import io
    import signal
    import sys
    import traceback

    from pgbench_kb.cli import main

    def stream(data: bytes = b"") -> io.TextIOWrapper:
        return io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", errors="replace")

    def text_of(out: io.TextIOWrapper) -> str:
        out.flush()  # read back as subprocess.run(text=True) does: universal newlines
        return stream(out.buffer.getvalue()).read()  # type: ignore[attr-defined]

    stdin, stdout, stderr = stream((input or "").encode("utf-8")), stream(), stream()
    saved = sys.stdin, sys.stdout, sys.stderr
    sigint = signal.getsignal(signal.SIGINT)
    here, environment = os.getcwd(), dict(os.environ)
    if env is not None:
        os.environ.clear()
        os.environ.update(env)
    # argparse wraps help to the terminal's width: a process with its output captured has no
    # terminal, so 80 columns unless COLUMNS says otherwise
    columns = os.environ.setdefault("COLUMNS", "80") if "COLUMNS" not in os.environ else None
    sys.stdin, sys.stdout, sys.stderr = stdin, stdout, stderr
    try:
        if cwd is not None:
            os.chdir(cwd)
        status = main(argv)
    except SystemExit as exc:  # argparse (--help, a usage error) and sys.exit
        if exc.code is None or isinstance(exc.code, int):
            status = exc.code or 0
        else:
            print(exc.code, file=stderr)
            status = 1
    except Exception:  # what the interpreter would print before exiting with 1
        traceback.print_exc(file=stderr)
        status = 1
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved
        os.chdir(here)
        if columns is not None or env is not None:
            os.environ.clear()
            os.environ.update(environment)
        if signal.getsignal(signal.SIGINT) is not sigint:
            signal.signal(signal.SIGINT, sigint)
    return subprocess.CompletedProcess(
        ["kb", *argv], status, stdout=text_of(stdout), stderr=text_of(stderr)
    )


def build_site(root: Path) -> Path:
    """Build the site of ``root`` with the real scripts/site.sh; return its public/ folder."""
    done = subprocess.run(
        [str(REPO / "scripts" / "site.sh"), "--root", str(root)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, f"site build failed:\n{done.stdout}\n{done.stderr}"
    return root / "public"


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *_args) -> None:
        pass


@contextlib.contextmanager
def serve(folder: Path) -> Iterator[str]:
    """Serve ``folder`` on 127.0.0.1 (a free port) for the duration; yield its base URL."""
    handler = functools.partial(_QuietHandler, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


CHROMIUM_ARGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


TEST_NOTE = """---
schema_version: 1
title: Test server
roles: [server]
description: A machine for the site tests.
---
A small test machine.
"""


def import_reference_run(root: Path, name: str = "wiki-8.0-raid5-4x10k.txt") -> Path:
    """Import a reference output into ``root`` with a hardware note; return the run file."""
    (root / "content" / "hardware" / "test-server.md").write_text(TEST_NOTE, encoding="utf-8")
    done = run_kb(
        "import",
        str(REFERENCE_OUTPUTS / name),
        "--root",
        str(root),
        "--machine",
        "test-server",
        "--set",
        "provenance.recorded_at=2006-06-01",
        "--set",
        "provenance.contributor=site test",
        # what a measured run by hand must carry besides (CONTRIBUTING.md)
        "--set",
        "postgres.version=8.0",
        "--set",
        "postgres.settings={}",
        "--set",
        "storage.data.array.media=hdd",
    )
    assert done.returncode == 0, done.stderr
    return Path(done.stdout.strip())


#: Would set a global if any of it ran: in a script element, an event handler, a URL.
PAYLOAD = (
    "<script>window.__kb_pwned = 1</script>"
    '<img src=x onerror="window.__kb_pwned = 2">'
    '"\' a<b & c="d" </textarea></pre>'
)


def copy_day_one(root: Path, *, transcribed_only: bool = False) -> Path:
    """The repository's site sources (this checkout's layouts, static files and config) and its
    shipped knowledge (data/ and content/ as committed, ``shipped_root``) copied to ``root``
    (a new folder); returns it. ``transcribed_only`` leaves out the measured runs and their raw
    files (the published history alone: a tenth of the runs, for tests of logic that needs a
    real tree but not all of it)."""
    root.mkdir()
    for name in (*SITE_SOURCES, "data"):
        source = (shipped_root() if name in SHIPPED_KNOWLEDGE else REPO) / name
        (shutil.copytree if source.is_dir() else shutil.copy2)(source, root / name)
    if transcribed_only:
        for path in sorted((root / "data" / "runs").rglob("*.yaml")):
            if "\norigin: measured\n" in path.read_text(encoding="utf-8"):
                path.unlink()
                for raw in (root / "data" / "raw").rglob(f"{path.stem}.*"):
                    raw.unlink()
    return root


def copy_built(public: Path, root: Path) -> Path:
    """A built project (the root above ``public``: sources, data, build/ caches and public/)
    copied to ``root`` (a new folder), to change without rebuilding; returns ``root``."""
    shutil.copytree(public.parent, root, symlinks=True)
    # scripts/site.sh writes Hugo's config with absolute mounts: point the copy's at the copy
    config = root / "build" / "hugo.toml"
    if config.is_file():
        text = config.read_text(encoding="utf-8")
        config.write_text(text.replace(str(public.parent), str(root)), encoding="utf-8")
    return root


def tree_digest(folder: Path) -> str:
    """The SHA-256 of every file under ``folder`` (paths and bytes)."""
    total = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            total.update(path.relative_to(folder).as_posix().encode() + b"\0")
            total.update(hashlib.sha256(path.read_bytes()).digest())
    return total.hexdigest()


def build_day_one_site_with_payload(root: Path) -> Path:
    """The repository's site sources and data copied to ``root`` (a new folder), the payload
    run imported beside them, and the site built; return its public/ folder."""
    import_payload_run(copy_day_one(root))
    return build_site(root)


def import_payload_run(root: Path) -> Path:
    """A run (with -P progress and -r statements) whose free-text fields all carry PAYLOAD:
    notes, contributor, settings label, source title, a setting's value."""
    (root / "content" / "hardware" / "test-server.md").write_text(TEST_NOTE, encoding="utf-8")
    meta = root / "payload-meta.yaml"
    import yaml

    meta.write_text(
        yaml.safe_dump(
            {
                "origin": "transcribed",
                "provenance": {
                    "recorded_at": "2006-06-01",
                    "contributor": PAYLOAD,
                    "notes": PAYLOAD,
                    "source": {
                        "title": PAYLOAD,
                        "title_is_descriptive": False,
                        "kind": "wiki-page",
                        "year": 2006,
                    },
                },
                "postgres": {
                    "settings_profile": PAYLOAD,
                    "settings": {"application_name": PAYLOAD},
                },
            }
        ),
        encoding="utf-8",
    )
    done = run_kb(
        "import",
        str(REFERENCE_OUTPUTS / "pg15-real-tpcb-P1-r.txt"),
        "--root",
        str(root),
        "--machine",
        "test-server",
        "--meta",
        str(meta),
    )
    meta.unlink()
    assert done.returncode == 0, done.stderr
    return Path(done.stdout.strip())


@contextlib.contextmanager
def serve_under(folder: Path, prefix: str) -> Iterator[str]:
    """Serve ``folder`` at ``/prefix/`` of a local server (as a project site on a static host);
    yield the base URL ending in ``/prefix/``."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="kb-serve.") as parent:
        (Path(parent) / prefix).symlink_to(folder.resolve(), target_is_directory=True)
        with serve(Path(parent)) as base:
            yield f"{base}{prefix}/"


def random_synth_run(rng, index: int) -> dict:
    """A kb synth run of a random machine, version and workload (for readers' tests)."""
    from pgbench_kb.runs.synth import MACHINES, VERSIONS, WORKLOADS, synth_run

    shape = {
        "group": f"g{index}",
        "machine": rng.choice(MACHINES),
        "version": rng.choice(VERSIONS),
        "workload": rng.choice(WORKLOADS),
        "scale": 10,
        "clients": 4,
        "threads": 2,
        "duration_s": 60,
        "tps": 1000.0,
        "noise": 0.02,
        "day": "2025-03-04",
    }
    return synth_run(rng, index, 1, shape)[0]


#: How Chromium reports a request it abandoned itself, because the page navigated away while the
#: request was in flight (a search fragment still loading when a result is clicked). It is the
#: browser's doing, not the site's, so it is not counted as a failed request.
ABANDONED_BY_NAVIGATION = "net::ERR_ABORTED"


def watch_page(page, base: str | None = None) -> list[str]:
    """The list a page fills with everything it does that it should not: console errors and
    warnings, uncaught errors, failed requests, 4xx/5xx responses and, when ``base`` (the
    served site's address) is given, requests leaving the site."""
    problems: list[str] = []

    def console(message) -> None:
        if message.type in {"error", "warning"}:
            problems.append(f"console {message.type}: {message.text}")

    def failed(request) -> None:
        if request.failure != ABANDONED_BY_NAVIGATION:
            problems.append(f"failed ({request.failure}): {request.url}")

    page.on("console", console)
    page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
    page.on("requestfailed", failed)
    page.on("response", lambda r: r.status >= 400 and problems.append(f"HTTP {r.status}: {r.url}"))
    if base is not None:
        origin = "/".join(base.split("/", 3)[:3]) + "/"
        page.on(
            "request",
            lambda r: r.url.startswith((origin, "data:")) or problems.append(f"outside: {r.url}"),
        )
    return problems


#: Pages visit_all loads at once: what loading pages one by one costs is mostly each page's
#: wait for its network to fall idle (500 ms with nothing in flight), which tabs overlap.
VISIT_TABS = 4


def visit_all(browser, base: str, paths: list[str], check, *, tabs: int = VISIT_TABS) -> list[str]:
    """Load every path of the site served at ``base`` in ``tabs`` pages at once, each waited on
    until its network is idle (as ``goto(…, wait_until="networkidle")``), and call
    ``check(page, path)`` on each once it is; return what ``watch_page`` saw on all of them.
    ``browser`` opens the pages: the browser (a context each) or one context. The pages are the
    test's (closed after it with their contexts)."""
    pages = [browser.new_page() for _ in range(min(tabs, len(paths)) or 1)]
    seen = [watch_page(page, base) for page in pages]
    for start in range(0, len(paths), len(pages)):
        batch = list(zip(pages, paths[start : start + len(pages)], strict=False))
        for page, path in batch:
            page.goto(base + path, wait_until="commit")
        for page, path in batch:
            page.wait_for_load_state("networkidle")
            check(page, path)
    return [problem for problems in seen for problem in problems]
