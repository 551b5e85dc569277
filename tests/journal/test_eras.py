"""Journals written by earlier versions of the tool (tests/fixtures/journals/<era>/, see its
README) read through the schema and its named migrations, verify, and give sensible answers
to `log`, `stats --json` and `show --json`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import epistemic_strict
from epistemic_agent.core.clock import epoch_of
from epistemic_agent.journal.log import decode
from epistemic_agent.journal.migrations import MIGRATIONS, applied, upgrade
from epistemic_agent.journal.reading import read_numbered
from epistemic_agent.journal.schema import Known, parse

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "journals"
#: Each era, and the migrations its records need (what changed after it, in the record).
ERAS = {
    "pre-policy": {"header-started-epoch"},  # before policies, approvals, effects, confinement
    "pre-confinement": set(),  # policies and approvals; acts not yet confined
    "pre-sessions": {"confinement-readable-absent"},  # confined; one session per workspace
    "sessions": {"confinement-readable-absent"},  # sessions in folders; no read allow-list yet
    "current": set(),
}
JOURNALS = [(era, run) for era in ERAS for run in ("exec", "demo")]


def _journal(era: str, run: str) -> Path:
    return FIXTURES / era / run / ".epistemic" / "journal.jsonl"


def _raw(era: str, run: str) -> list[dict[str, object]]:
    lines = _journal(era, run).read_bytes().splitlines()
    records = [decode(line) for line in lines]
    assert all(record is not None for record in records)
    return [record for record in records if record is not None]


def test_every_era_has_its_fixtures() -> None:
    assert sorted(path.name for path in FIXTURES.iterdir() if path.is_dir()) == sorted(ERAS)


@pytest.mark.parametrize(("era", "run"), JOURNALS)
def test_each_era_reads_through_the_schema_and_its_migrations(era: str, run: str) -> None:
    numbered, notes = read_numbered(_journal(era, run))
    assert notes == []
    views = [parse(record) for _, record in numbered]
    known = [view for view in views if isinstance(view, Known)]
    assert len(known) == len(views)
    assert [(view.kind, view.problems) for view in known if view.problems] == []
    assert [view.extra for view in known if view.extra] == []
    found = {name for record in _raw(era, run) for name in applied(record)}
    assert found == ERAS[era]


@pytest.mark.parametrize("migration", [m.name for m in MIGRATIONS])
def test_without_its_migration_an_era_does_not_read_in_the_current_shape(migration: str) -> None:
    eras = [era for era, needed in ERAS.items() if migration in needed]
    assert eras, f"no fixture needs {migration}: a migration must be keyed by a real era"
    for era in eras:
        records = [upgrade(record, frozenset({migration})) for record in _raw(era, "exec")]
        views = [parse(record) for record in records]
        assert any(isinstance(v, Known) and v.problems for v in views), era


def test_migrations_do_not_change_the_record_as_written() -> None:
    header = _raw("pre-policy", "exec")[0]
    before = dict(header)
    upgraded = upgrade(header)
    assert header == before
    assert upgraded["started_epoch"] == epoch_of(str(header["started"]))


@pytest.mark.system  # end to end, slow for the default tier
@pytest.mark.parametrize(("era", "run"), JOURNALS)
def test_each_era_verifies_and_its_readers_answer(era: str, run: str, tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    shutil.copytree(FIXTURES / era / run, workspace)
    raw = _raw(era, run)
    calls = [r for r in raw if r.get("kind") in ("call", "rejected")]
    verified = epistemic_strict("verify", str(workspace))
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert verified.stdout.startswith(f"intact: {len(raw)} line(s)")
    log = epistemic_strict("log", "-C", str(workspace))
    assert log.returncode == 0, log.stderr
    assert str(raw[1 if run == "exec" else 4].get("act", "")) in log.stdout
    stats = json.loads(epistemic_strict("stats", str(workspace), "--json").stdout)
    (session,) = stats["sessions"]
    assert session["session"] == raw[0]["session"]
    assert session["calls"] == len(calls)
    shown = json.loads(epistemic_strict("show", "1", "-C", str(workspace), "--json").stdout)
    assert shown["seq"] == 1
    assert shown["integrity"]["status"] == "intact"
