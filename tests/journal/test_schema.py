"""The record schema: the writer refuses a record that does not fit it before writing
anything; readers parse every record into a typed view or an explicit Unknown, keeping what
they do not know and saying what was wrong, never raising."""

from __future__ import annotations

from pathlib import Path
from typing import Any, get_args

import pytest

from epistemic_agent.agent.loop import EXIT_CODES
from epistemic_agent.core.vocabulary import ACT_NAMES
from epistemic_agent.journal.record_fields import check_fields
from epistemic_agent.journal.schema import (
    KINDS,
    Known,
    RecordError,
    Unknown,
    parse,
    problems,
    values,
)
from epistemic_agent.journal.schema.registry import CHAIN
from epistemic_agent.journal.writer import JournalWriter
from epistemic_agent.policy.alerts import EVENTS
from epistemic_agent.policy.supervisor import ON_ERROR, ROLE

T = "2026-11-30T11:27:33.123Z"
STOP: dict[str, Any] = {"kind": "stop", "t": T, "reason": "finished", "message": "done", "steps": 2}


def _writer(tmp_path: Path) -> tuple[JournalWriter, Path]:
    path = tmp_path / "journal.jsonl"
    writer = JournalWriter(path, lambda record, before: None)
    writer.open()
    return writer, path


@pytest.mark.parametrize(
    ("record", "said"),
    [
        ({"kind": "gossip", "t": T}, "the kind 'gossip' is not one of the journal's"),
        ({**STOP, "steps": None} | {"steps": "2"}, "`steps` is not an integer"),
        ({k: v for k, v in STOP.items() if k != "message"}, "`message` is missing"),
        ({**STOP, "reason": "bored"}, "`reason` is 'bored', not one of finished"),
        ({**STOP, "mood": "fine"}, "`mood` is no field of `stop`"),
        ({"kind": "closed", "t": T, "stop": 1}, "`stop` is not a string or null"),
    ],
)
def test_the_writer_refuses_a_record_that_does_not_fit_and_writes_nothing(
    tmp_path: Path, record: dict[str, Any], said: str
) -> None:
    writer, path = _writer(tmp_path)
    with writer.locked():
        writer.append(STOP, durable=False)
        size = path.stat().st_size
        with pytest.raises(RecordError, match=said.replace("(", r"\(")):
            writer.append(record, durable=False)
        assert path.stat().st_size == size
        assert writer.position.lines == 1
        writer.append(STOP, durable=False)  # the writer goes on: nothing half-written
    writer.close()
    assert len(path.read_bytes().splitlines()) == 2


def test_the_writer_checks_the_confinement_object_inside_the_header(tmp_path: Path) -> None:
    header = {
        "kind": "session",
        "session": "0" * 32,
        "started": T,
        "started_epoch": 1.5,
        "tool_version": "0",
        "workspace": "/w",
        "git_head": None,
        "user": "u",
        "host": "h",
        "pid": 1,
        "python": "3",
        "confinement": {"mechanism": "seccomp"},
    }
    writer, path = _writer(tmp_path)
    with writer.locked(), pytest.raises(RecordError) as raised:
        writer.append(header, durable=False)
    assert "`confinement.mechanism` is 'seccomp'" in str(raised.value)
    assert "`confinement.readable` is missing" in str(raised.value)
    assert path.read_bytes() == b""
    writer.close()


def test_parse_gives_a_typed_view_keeping_unknown_fields_and_saying_what_is_wrong() -> None:
    record = {"prev": "0" * 64, "n": 2, "v": 1, **STOP, "steps": "two", "mood": "fine"}
    view = parse(record)
    assert isinstance(view, Known)
    assert view.kind == "stop"
    assert view.get("reason") == "finished"
    assert "steps" not in view.fields  # ill-typed: left out of the typed fields...
    assert view.raw["steps"] == "two"  # ...but kept as read
    assert view.extra == {"mood": "fine"}
    assert view.problems == ("`steps` is not an integer",)


@pytest.mark.parametrize("record", [{"kind": "gossip", "x": 1}, {"kind": 3}, {}, {"t": T}])
def test_a_kind_this_reader_does_not_know_is_unknown_and_kept_raw(
    record: dict[str, Any],
) -> None:
    view = parse(record)
    assert isinstance(view, Unknown)
    assert view.raw is record
    assert view.kind == (record["kind"] if isinstance(record.get("kind"), str) else None)


@pytest.mark.parametrize("value", [float("nan"), float("inf"), True, "1"])
def test_a_number_is_a_finite_int_or_float_and_never_a_boolean(value: object) -> None:
    record = {"kind": "model-error", "t": T, "step": 1, "attempt": value}
    record |= {"status": None, "message": "m", "retrying": False}
    assert problems(record) == ["`attempt` is not an integer"]


def test_the_closed_sets_say_what_the_code_that_writes_them_says() -> None:
    assert get_args(values.Act) == ACT_NAMES
    assert get_args(values.AlertEvent) == tuple(EVENTS)
    assert get_args(values.OnError) == ON_ERROR
    assert get_args(values.Role) == (ROLE,)
    assert get_args(values.StopReason) == tuple(EXIT_CODES)
    assert set(get_args(values.RecordKind)) == set(KINDS)


def test_every_closed_value_is_named_in_its_fields_meaning() -> None:
    fields = [field for kind in KINDS.values() for field in kind.fields] + list(CHAIN)
    for field in fields:
        if field.name == "kind" or field.values == ACT_NAMES:  # acts: `epistemic types`
            continue
        for value in field.values:
            assert f"`{value}`" in field.meaning, (field.name, value)


def test_every_field_has_a_meaning_and_no_kind_names_a_field_twice() -> None:
    for kind in KINDS.values():
        names = [field.name for field in kind.fields]
        assert len(names) == len(set(names)), kind.name
        assert all(field.meaning.strip() for field in kind.fields), kind.name


def test_readers_take_each_fields_type_from_the_schema() -> None:
    numbered: list[tuple[int, dict[str, Any]]] = [
        (1, {"kind": "compaction", "t": T, "step": "one", "trigger": 5}),
        (2, {"kind": "gossip", "t": T, "step": "x"}),  # a foreign kind: only its `t` counts
    ]
    assert check_fields(numbered) == [
        "2 field(s) of the wrong type were read as absent: compaction `step` is not an integer "
        "(line 1); compaction `trigger` is not a string (line 1)"
    ]
    assert numbered[0][1] == {"kind": "compaction", "t": T}
    assert numbered[1][1]["step"] == "x"
