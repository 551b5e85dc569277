"""One workspace, found as git finds a repository: a command run in a subfolder uses the
workspace above it (the nearest folder with a record, within the git repository; else the
repository's root), says so, and never starts a second record inside the source tree unless
asked (`--here`)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import anyio

from conftest import epistemic
from mcpclient import connect

LOOK = "see what the workspace holds before anything else"


def exec_in(folder: Path, *opts: str) -> subprocess.CompletedProcess[str]:
    return epistemic(
        "exec", *opts, "--type", "collect-info", "--reason", LOOK, "--", "pwd",
        cwd=folder, no_traceback=True,
    )  # fmt: skip


def header(workspace: Path) -> dict[str, object]:
    first = (workspace / ".epistemic" / "journal.jsonl").read_text().split("\n", 1)[0]
    return dict(json.loads(first))


def repo(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "repo"
    (root / "src" / "deep").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root, root / "src" / "deep"


def test_exec_in_a_subfolder_of_a_repository_records_at_its_root(tmp_path: Path) -> None:
    root, deep = repo(tmp_path)
    done = exec_in(deep)
    assert done.returncode == 0 and done.stdout.strip() == str(root)
    assert f"epistemic: workspace {root} (the root of the git repository" in done.stderr
    assert not (deep / ".epistemic").exists() and not (root / "src" / ".epistemic").exists()
    assert header(root)["workspace"] == str(root)
    again = exec_in(root / "src")  # continues the same session, from anywhere inside
    assert again.returncode == 0
    assert (
        len([line for line in (root / "RATIONALE.md").read_text().splitlines() if "pwd" in line])
        >= 2
    )


def test_the_nearest_record_upwards_is_the_workspace_without_git(tmp_path: Path) -> None:
    top = tmp_path / "project"
    (top / "a" / "b").mkdir(parents=True)
    assert exec_in(top).returncode == 0
    done = exec_in(top / "a" / "b")
    assert done.returncode == 0 and done.stdout.strip() == str(top)
    assert f"its record, {top / '.epistemic'}, is above" in done.stderr
    assert not (top / "a" / "b" / ".epistemic").exists()
    log = epistemic("log", "--json", cwd=top / "a" / "b")  # readers find it too
    assert log.returncode == 0 and len(json.loads(log.stdout)) == 2


def test_a_record_above_the_repository_is_another_projects(tmp_path: Path) -> None:
    (tmp_path / ".epistemic").mkdir()
    root, deep = repo(tmp_path)
    assert exec_in(deep).stdout.strip() == str(root)
    assert (root / ".epistemic").is_dir()


def test_here_starts_a_workspace_of_its_own_inside_another(tmp_path: Path) -> None:
    root, deep = repo(tmp_path)
    done = exec_in(deep, "--here")
    assert done.returncode == 0 and done.stdout.strip() == str(deep)
    assert "epistemic: workspace" not in done.stderr
    assert (deep / ".epistemic").is_dir() and not (root / ".epistemic").exists()


def test_a_plain_folder_is_its_own_workspace_without_a_word(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    done = exec_in(plain)
    assert (
        done.returncode == 0 and done.stdout.strip() == str(plain) and done.stderr.count("\n") <= 1
    )


def test_an_mcp_server_named_a_subfolder_serves_the_repository(tmp_path: Path) -> None:
    root, deep = repo(tmp_path)

    async def main() -> None:
        async with connect(deep) as client:
            args = {"command": "pwd", "type": "collect-info", "reason": LOOK}
            result = await client.call_tool("bash", args)
            assert str(root) in str(result.content)

    anyio.run(main)
    assert header(root)["workspace"] == str(root) and not (deep / ".epistemic").exists()
