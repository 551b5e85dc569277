"""The per-workspace cache of classifications used by one-shot `epistemic exec`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from epistemic_agent import __version__
from epistemic_agent.effects.cache import EffectCache
from epistemic_agent.effects.classify import classify
from epistemic_agent.effects.model import REVISION

COMMANDS = ["ls -la", "echo hi > out.txt", "rm -rf build", "make test", "git commit -m x"]


def test_cached_classifications_equal_fresh_ones(tmp_path: Path) -> None:
    path = tmp_path / "cache.json"
    first = EffectCache(path)
    assert [first.classify(c) for c in COMMANDS] == [classify(c) for c in COMMANDS]
    first.save()
    assert set(json.loads(path.read_text())["entries"]) == set(COMMANDS)
    again = EffectCache(path)
    assert [again.classify(c) for c in COMMANDS] == [classify(c) for c in COMMANDS]


def test_a_cache_from_another_version_or_a_broken_file_is_ignored(tmp_path: Path) -> None:
    path = tmp_path / "cache.json"
    forged = {"class": "read-only", "writes": [], "deletes": [], "dynamic": False, "reasons": []}
    path.write_text(json.dumps({"version": "0.0.0-old", "entries": {"rm -rf x": forged}}))
    assert EffectCache(path).classify("rm -rf x").cls == "mutating"
    path.write_text("{not json")
    assert EffectCache(path).classify("rm -rf x").cls == "mutating"
    path.write_text(json.dumps({"version": __version__, "entries": {"rm -rf x": {"class": 1}}}))
    assert EffectCache(path).classify("rm -rf x").cls == "mutating"


def test_a_cache_from_an_older_revision_of_the_tables_is_ignored(tmp_path: Path) -> None:
    """Same version, tables changed since (a write the old tables missed): not reused."""
    path = tmp_path / "cache.json"
    forged = {"class": "read-only", "writes": [], "deletes": [], "dynamic": False, "reasons": []}
    old = {"version": __version__, "revision": REVISION - 1, "entries": {"sort -o x f": forged}}
    path.write_text(json.dumps(old))
    assert EffectCache(path).classify("sort -o x f").cls == "mutating"
    path.write_text(json.dumps({"version": __version__, "entries": {"sort -o x f": forged}}))
    assert EffectCache(path).classify("sort -o x f").cls == "mutating"
    current = {**old, "revision": REVISION}
    path.write_text(json.dumps(current))
    assert EffectCache(path).classify("sort -o x f").cls == "read-only"  # trusted as written
    cache = EffectCache(tmp_path / "new.json")
    cache.classify("ls")
    cache.save()
    assert json.loads((tmp_path / "new.json").read_text())["revision"] == REVISION


def test_a_cached_command_does_not_load_the_parser(tmp_path: Path) -> None:
    path = tmp_path / "cache.json"
    cache = EffectCache(path)
    cache.classify("ls -la")
    cache.save()
    code = (
        "import sys; from pathlib import Path; from epistemic_agent.effects.cache import "
        f"EffectCache; EffectCache(Path({str(path)!r})).classify('ls -la'); "
        "assert 'tree_sitter' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
