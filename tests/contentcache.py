"""Results computed once per content of a folder: a slow step whose output depends only on the
files of one folder (`epistemic bench --check-oracles` on the benchmark's tasks) is computed
into a cache folder named by the hash of those files, and reused by any later run, or any
other xdist worker, while they are unchanged. A change to any file (its bytes, its name, one
added or removed) gives another hash, so the step runs again.

The cache lives in pytest's cache (`.pytest_cache/d/`): `pytest --cache-clear` drops it, and
a run with `-p no:cacheprovider` computes afresh into a temporary folder.

Imported as `from contentcache import ...`; pytest puts tests/ on the path (pyproject's
`pythonpath`)."""

from __future__ import annotations

import fcntl
import hashlib
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

DONE = ".complete"  # written last: a folder without it is a computation that did not finish
IGNORED = ("__pycache__",)


def content_hash(folder: Path) -> str:
    """SHA-256 (hex) over every file under `folder`: its path relative to it and its bytes
    (Python's bytecode caches left out). Symbolic links count by their target's text."""
    digest = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder)
        if any(part in IGNORED for part in rel.parts) or path.suffix == ".pyc":
            continue
        if path.is_symlink():
            body = b"link:" + str(path.readlink()).encode()
        elif path.is_file():
            body = path.read_bytes()
        else:
            continue
        name = rel.as_posix().encode()
        digest.update(len(name).to_bytes(8, "big") + name)
        digest.update(len(body).to_bytes(8, "big") + body)
    return digest.hexdigest()


def computed_once(root: Path, name: str, source: Path, compute: Callable[[Path], None]) -> Path:
    """The folder `root/<name>-<hash of source>`, filled by `compute(folder)` unless an earlier
    run already filled it. Concurrent callers (xdist workers) wait on a lock, so one computes
    and the others reuse; a folder left by an interrupted computation is done again. Older
    folders of the same name (other contents of `source`) are removed."""
    root.mkdir(parents=True, exist_ok=True)
    folder = root / f"{name}-{content_hash(source)[:20]}"
    with (root / f"{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (folder / DONE).exists():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            compute(folder)
            (folder / DONE).touch()
        for older in root.glob(f"{name}-*"):
            if older != folder:
                shutil.rmtree(older, ignore_errors=True)
    return folder


def cache_root(config: pytest.Config, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where `computed_once` keeps its folders: pytest's cache, or a temporary folder when the
    cache provider is off (then nothing is reused)."""
    cache = getattr(config, "cache", None)
    if cache is None:
        return tmp_path_factory.mktemp("computed-once")
    return Path(cache.mkdir("computed-once"))
