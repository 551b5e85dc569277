"""Test suites and repositories, read through the launcher (part of judgelib; stdlib only)."""

from __future__ import annotations

import json
import os
import secrets
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

try:
    from .judgerun import Ran, python3, run_code, scratch, special
    from .judgerun import sha256_of as _sha256
except ImportError:  # beside an oracle, in the judge's folder
    from judgerun import (  # type: ignore[no-redef,import-not-found]
        Ran,
        python3,
        run_code,
        scratch,
        special,
    )
    from judgerun import sha256_of as _sha256  # type: ignore[no-redef]


def tree(folder: Path, skip: Sequence[str] = ()) -> dict[str, tuple[str, str]]:
    """Every entry beneath `folder` (relative path -> kind, content digest or link target)."""
    found: dict[str, tuple[str, str]] = {}
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if d not in skip)
        for name in [*dirs, *sorted(f for f in files if f not in skip)]:
            path = Path(root) / name
            rel = path.relative_to(folder).as_posix()
            if path.is_symlink():
                found[rel] = ("link", os.readlink(path))
            elif path.is_dir():
                found[rel] = ("dir", "")
            elif special(path):
                found[rel] = ("special", "")
            else:
                mode = "x" if os.access(path, os.X_OK) else "-"
                found[rel] = (f"file{mode}", _sha256(path))
    return found


#: Run as a file in the copy: discovers like `python3 -m unittest` (or loads one module), and
#: prints one line per test outcome, then a last line, after a marker the tests cannot know
#: in advance (they could still print a fake one: outcomes are cross-checked by the oracle).
UNITTEST_HARNESS = r"""
import json, sys, unittest
marker, names, failfast = sys.argv[1], sys.argv[2:], False
if names and names[0] == "--failfast":
    failfast, names = True, names[1:]
sys.path.insert(0, ".")
loader = unittest.TestLoader()
suite = loader.loadTestsFromNames(names) if names else loader.discover(".")
class Result(unittest.TestResult):
    def __init__(self):
        super().__init__()
        self.seen = []
    def note(self, test, outcome):
        self.seen.append((test.id(), outcome))
    def addSuccess(self, test): self.note(test, "ok")
    def addFailure(self, test, err): self.note(test, "failure"); super().addFailure(test, err)
    def addError(self, test, err): self.note(test, "error"); super().addError(test, err)
    def addSkip(self, test, reason): self.note(test, "skipped")
    def addExpectedFailure(self, test, err): self.note(test, "expected failure")
    def addUnexpectedSuccess(self, test): self.note(test, "unexpected success")
    def addSubTest(self, test, subtest, err):
        if err is not None:
            self.note(test, "failure")
            super().addSubTest(test, subtest, err)
result = Result()
result.failfast = failfast
suite.run(result)
sys.stdout.flush()
print("\n" + marker + json.dumps(result.seen), flush=True)
"""


class Suite:
    """What a unittest run came to: each test's outcomes (a test with subtests may have
    several), and whether every one is a plain success."""

    def __init__(self, ran: Ran, outcomes: dict[str, list[str]] | None) -> None:
        self.ran = ran
        self.outcomes = outcomes or {}
        self.reported = outcomes is not None

    @property
    def passed(self) -> bool:
        """Ran, exited 0, reported, every test a success: skips and expected failures count as
        failures, and so does a suite that runs no test at all."""
        return (
            self.ran.ok
            and self.reported
            and bool(self.outcomes)
            and all(set(found) == {"ok"} for found in self.outcomes.values())
        )

    def bad(self) -> dict[str, list[str]]:
        return {name: found for name, found in self.outcomes.items() if set(found) != {"ok"}}

    def describe(self) -> str:
        if self.ran.timed_out:
            return "ran over its time budget"
        if not self.reported:
            return f"did not finish ({self.ran.tail()})"
        if not self.outcomes:
            return "ran no test"
        bad = self.bad()
        if not bad:
            return f"exited {self.ran.exit}"
        kinds = sorted({outcome for found in bad.values() for outcome in found if outcome != "ok"})
        return f"{len(bad)} of {len(self.outcomes)} tests did not pass ({', '.join(kinds)})"


def run_unittest(
    copy: Path, timeout: float, names: Sequence[str] = (), failfast: bool = False
) -> Suite:
    """The copy's tests (discovered like `python3 -m unittest`, or the named modules) run
    through the launcher, one outcome per test."""
    harness = copy.parent / f"harness-{secrets.token_hex(4)}.py"
    harness.write_text(UNITTEST_HARNESS, encoding="utf-8")
    marker = f"@@outcomes-{secrets.token_hex(8)}@@"
    argv = [python3(), "-B", str(harness), marker, *(["--failfast"] if failfast else []), *names]
    try:
        ran = run_code(argv, copy, timeout, readable=[harness])
    finally:
        harness.unlink(missing_ok=True)
    outcomes: dict[str, list[str]] | None = None
    for line in ran.stdout.splitlines():
        if line.startswith(marker):
            try:
                seen = json.loads(line[len(marker) :])
            except ValueError:
                continue
            outcomes = {}
            for name, outcome in seen:
                outcomes.setdefault(str(name), []).append(str(outcome))
    return Suite(ran, outcomes)


# -- repositories ----------------------------------------------------------------------------

#: Lists a repository's state with plumbing only, its own hooks and fsmonitor switched off
#: (the agent may have configured anything: it runs confined, through the launcher, anyway).
REPO_STATE = r"""
g() { git -c core.fsmonitor=false -c core.hooksPath=/dev/null -c core.untrackedCache=false "$@"; }
echo "== HEAD"; g symbolic-ref -q HEAD || g rev-parse -q --verify HEAD || echo "(none)"
echo "== refs"; g for-each-ref --format='%(refname) %(objectname)'
echo "== objects"
g cat-file --batch-all-objects --unordered --batch-check='%(objectname) %(objecttype)' | sort
echo "== index"; g ls-files --stage
echo "== grafts"
for name in shallow info/grafts objects/info/alternates; do
    [ -e "$(g rev-parse --git-path "$name")" ] && echo "$name"
done
echo "== end"
"""
GIT_ENV = {"GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1", "GIT_OPTIONAL_LOCKS": "0"}


def repository_state(repo: Path, timeout: float) -> dict[str, Any]:
    """HEAD, every ref, every object, the index, grafts, and the working tree of `repo`, read
    in a scratch copy through the launcher (so nothing the agent configured runs here)."""
    with scratch() as folder:
        copy = folder / "repo"
        shutil.copytree(
            repo,
            copy,
            symlinks=True,
            ignore=lambda folder, names: [n for n in names if special(Path(folder, n))],
        )
        ran = run_code(["sh", "-c", REPO_STATE], copy, timeout, env=GIT_ENV)
        if not ran.ok or "== end" not in ran.stdout:
            return {"unreadable": ran.tail()}
        state: dict[str, Any] = {}
        section = ""
        for line in ran.stdout.splitlines():
            if line.startswith("== "):
                section = line[3:]
                state[section] = []
            elif section:
                state[section].append(line)
        state["working tree"] = tree(copy, skip=(".git",))
    state["hooks and config"] = git_setup(repo / ".git")
    return state


#: What in a git folder says what git runs and how it reads the repository: hooks, the
#: configuration (aliases, core.hooksPath, core.fsmonitor, filters...), info/ (attributes,
#: exclude, grafts, sparse-checkout) and the folders that bring in other repositories.
GIT_SETUP = ("hooks", "info", "config", "config.worktree", "commondir", "worktrees", "modules")


def git_setup(git_dir: Path) -> dict[str, tuple[str, str]]:
    """Every entry of the git folder's setup (GIT_SETUP): path -> kind and digest or target."""
    found: dict[str, tuple[str, str]] = {}
    for name in GIT_SETUP:
        path = git_dir / name
        if path.is_symlink():
            found[name] = ("link", os.readlink(path))
        elif path.is_dir():
            found[name] = ("dir", "")
            found.update((f"{name}/{rel}", entry) for rel, entry in tree(path).items())
        elif path.exists():
            found[name] = ("special", "") if special(path) else ("file", _sha256(path))
    return found


def setup_differences(repo: Path, pristine: Path) -> list[str]:
    """The entries of the git setup (hooks, config, info/...) added, removed or changed."""
    now, before = git_setup(repo / ".git"), git_setup(pristine / ".git")
    return sorted(key for key in set(now) | set(before) if now.get(key) != before.get(key))


def state_differences(now: dict[str, Any], before: dict[str, Any]) -> list[str]:
    """The parts of a repository that differ (HEAD, refs, objects, index, working tree)."""
    keys = sorted(set(now) | set(before))
    return [key for key in keys if now.get(key) != before.get(key)]
