"""structs.struct: the dataclass stand-in used on the start-up path."""

from __future__ import annotations

import pytest

from epistemic_agent.core.structs import FrozenInstanceError, field, struct


@struct
class Point:
    x: int
    y: int = 0
    tags: list[str] = field(default_factory=list)
    note: str = field(default="", compare=False)


@struct(frozen=False)
class Counter:
    name: str
    count: int = 0

    def __post_init__(self) -> None:
        self.count += 1


@struct
class Point3(Point):
    z: int = 5


def test_init_defaults_factories_and_keywords() -> None:
    p = Point(1)
    assert (p.x, p.y, p.tags, p.note) == (1, 0, [], "")
    assert Point(1).tags is not Point(1).tags
    assert Point(x=2, y=3).y == 3


def test_missing_extra_and_too_many_fields_are_type_errors() -> None:
    with pytest.raises(TypeError, match="missing the field 'x'"):
        Point()  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="no field 'w'"):
        Point(1, w=2)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="takes 4 fields"):
        Point(1, 2, [], "", 5)  # type: ignore[call-arg]


def test_equality_hash_and_compare_false() -> None:
    assert Point(1, 2) == Point(1, 2, note="other")
    assert Point(1, 2) != Point(1, 3)
    assert hash(Point(1, 2, (), "a")) == hash(Point(1, 2, (), "b"))  # type: ignore[arg-type]
    assert Point(1) != Point3(1)
    assert {Point(1, 2, ()), Point(1, 2, ())} == {Point(1, 2, ())}  # type: ignore[arg-type]


def test_frozen_refuses_assignment_and_deletion() -> None:
    p = Point(1)
    with pytest.raises(FrozenInstanceError):
        p.x = 2  # type: ignore[misc]
    with pytest.raises(AttributeError):
        del p.y  # type: ignore[misc]


def test_mutable_struct_runs_post_init_and_is_unhashable() -> None:
    c = Counter("a")
    assert c.count == 1
    c.count = 5
    assert c.count == 5
    with pytest.raises(TypeError):
        hash(c)


def test_inheritance_keeps_field_order_and_repr() -> None:
    p = Point3(1, 2)
    assert (p.x, p.y, p.z) == (1, 2, 5)
    assert repr(p) == "Point3(x=1, y=2, tags=[], note='', z=5)"
