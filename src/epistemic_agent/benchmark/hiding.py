"""What the agent of one task run must not see, and the decoys it sees instead.

- Every copy of the benchmark's task folders this machine is known to hold (the package's own,
  an installed distribution's, an editable install's source) shows a decoy in its place: the
  same folder and file names, every file empty. Nothing real is behind it, and what is opened
  there is watched (peek.py).
- The git folders of the checkouts those copies live in (their history holds every oracle),
  the run's private folder (judge.Private) and whatever the caller adds (`--hide`) are hidden.
- In the output folder, everything but the run's own workspace is hidden: other tasks'
  workspaces, earlier results, the reference sessions' finished workspaces of
  `--check-oracles`.
"""

from __future__ import annotations

import json
import os
from importlib.metadata import distributions
from pathlib import Path
from urllib.parse import unquote, urlparse

from ..core import struct
from .tasks import TASKS_DIR


@struct
class Hiding:
    """`hidden` paths (empty in the act's view) and `decoys` (folder -> the decoy shown)."""

    hidden: tuple[str, ...]
    decoys: tuple[tuple[str, str], ...]

    def argv(self) -> list[str]:
        """The `epistemic run` options that apply it."""
        args: list[str] = []
        for path in self.hidden:
            args += ["--hide", path]
        for folder, decoy in self.decoys:
            args += ["--decoy", folder, decoy]
        return args


def task_copies() -> list[Path]:
    """Every benchmark task folder of this tool known here: the imported package's, and any
    other installed distribution's or editable source's."""
    found = [TASKS_DIR]
    for dist in distributions():
        if (dist.metadata["Name"] or "").lower().replace("_", "-") != "epistemic-agent":
            continue
        candidates = [Path(str(dist.locate_file("epistemic_agent/benchmark/tasks")))]
        source = _editable_source(dist.read_text("direct_url.json"))
        if source is not None:
            candidates += [source / "src/epistemic_agent/benchmark/tasks"]
        found += [path.resolve() for path in candidates if path.is_dir()]
    return list(dict.fromkeys(found))


def _editable_source(direct_url: str | None) -> Path | None:
    try:
        data = json.loads(direct_url or "null")
    except ValueError:
        return None
    if not isinstance(data, dict) or not str(data.get("url", "")).startswith("file://"):
        return None
    return Path(unquote(urlparse(data["url"]).path))


def git_folders(paths: list[Path]) -> list[Path]:
    """The git folders (a worktree's own and the common one) of the checkouts holding
    `paths`: their objects hold every version of every oracle."""
    found: list[Path] = []
    for path in paths:
        for folder in (path, *path.parents):
            marker = folder / ".git"
            if not os.path.lexists(marker):
                continue
            found.append(marker)
            if marker.is_file():
                found += _worktree_dirs(marker)
            break
    return [path for path in dict.fromkeys(found) if os.path.lexists(path)]


def _worktree_dirs(marker: Path) -> list[Path]:
    """A worktree's `.git` file names its own git folder, which names the common one."""
    try:
        line = marker.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return []
    if not line.startswith("gitdir:"):
        return []
    own = (marker.parent / line.removeprefix("gitdir:").strip()).resolve()
    found = [own]
    try:
        common = (own / "commondir").read_text(encoding="utf-8").strip()
        found.append((own / common).resolve())
    except OSError:
        pass
    return found


def make_decoy(source: Path, target: Path) -> None:
    """The tree of `source` (folders and file names) at `target`, every file empty."""
    target.mkdir(parents=True, exist_ok=True)
    for root, dirs, files in os.walk(source):
        here = target / Path(root).relative_to(source)
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for name in dirs:
            (here / name).mkdir(exist_ok=True)
        for name in files:
            (here / name).touch()


def out_siblings(out: Path, workspace: Path) -> list[Path]:
    """Everything in the output folder but the path down to `workspace` (and the workspace)."""
    hidden: list[Path] = []
    try:
        chain = workspace.relative_to(out).parts
    except ValueError:
        return hidden
    level = out
    for part in chain:
        try:
            entries = sorted(level.iterdir())
        except OSError:
            break
        hidden += [entry for entry in entries if entry.name != part]
        level = level / part
    return hidden


def plan(
    out: Path,
    workspace: Path,
    private: Path,
    extra: tuple[str, ...] = (),
    root: Path = TASKS_DIR,
    more: tuple[Path, ...] = (),
) -> Hiding:
    """What one run's agent must not see (module docstring); `root` is the folder of tasks in
    use, shown as the decoy like every other copy, and so are `more` copies found elsewhere."""
    decoy = private / "decoy"
    make_decoy(root, decoy)
    copies = list(dict.fromkeys([root.resolve(), *task_copies(), *more]))
    decoys = tuple((str(copy), str(decoy)) for copy in copies)
    hidden = [private, *git_folders(copies), *out_siblings(out, workspace)]
    hidden += [Path(path) for path in extra]
    inside = [path for path in hidden if _holds(path, workspace)]
    kept = [str(path) for path in hidden if path not in inside]
    return Hiding(tuple(dict.fromkeys(kept)), decoys)


def _holds(path: Path, workspace: Path) -> bool:
    """Whether hiding `path` would hide the workspace itself (never done)."""
    try:
        workspace.resolve().relative_to(path.resolve())
    except ValueError:
        return False
    return True
