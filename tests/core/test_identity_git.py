"""git as the session runs it on a workspace an agent writes: a time limit (killed with
what it started), a heap limit, the system's git whatever PATH holds, no program of the
workspace's config."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from epistemic_agent.core.identity import GitTimeout, git_head, run_git
from hazards import plant

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "f").write_text("a\n")
    ids = ("-c", "user.name=t", "-c", "user.email=t@example.invalid")
    for args in (("init", "-q"), ("add", "-A"), (*ids, "commit", "-qm", "s")):
        subprocess.run(["git", *args], cwd=ws, check=True, capture_output=True)
    return ws


@pytest.mark.system  # end to end, slow for the default tier
def test_git_blocked_on_a_fifo_is_killed_and_says_so(repo: Path) -> None:
    plant(repo / ".git" / "HEAD", "fifo")
    started = time.monotonic()
    with pytest.raises(GitTimeout, match="git rev-parse timed out after 1 s"):
        run_git(repo, "rev-parse", "HEAD", timeout=1)
    assert time.monotonic() - started < 5


@pytest.mark.system  # end to end, slow for the default tier
def test_git_reading_a_sparse_head_of_4_gb_stops_at_its_heap_limit(repo: Path) -> None:
    """git reads .git/HEAD whole: without a heap limit it takes gigabytes within seconds."""
    plant(repo / ".git" / "HEAD", "sparse")
    probe = (
        "import json, resource, sys; from pathlib import Path\n"
        "from epistemic_agent.core.identity import git_head\n"
        "head = git_head(Path(sys.argv[1]))\n"
        "peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024\n"
        "print(json.dumps([head, peak]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, str(repo)], capture_output=True, text=True, timeout=30
    )
    head, peak_mib = json.loads(done.stdout)
    assert head is None
    assert peak_mib < 600, f"git took {peak_mib} MiB"


def test_the_git_a_relative_path_entry_names_in_the_workspace_never_runs(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ran = repo.parent / "ran"
    fake = repo / "git"
    fake.write_text(f"#!/bin/sh\ntouch {ran}\necho 0000000000000000000000000000000000000000\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", ".:/usr/bin:/bin")
    found = git_head(repo)
    assert found is not None and found != "0" * 40
    assert not ran.exists()
