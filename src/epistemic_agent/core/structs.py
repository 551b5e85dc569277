"""`struct`: a lean stand-in for `dataclasses.dataclass` on the start-up path.

`dataclasses` imports `inspect` (and with it `ast`, `dis`, `tokenize`...) and compiles code for
every class: about 15 ms of every `epistemic exec`, which other tools start once per command.
`struct` builds the same things (`__init__` with defaults and factories, `__repr__`, `__eq__`,
`__hash__` and immutability for frozen records, `__post_init__`) from plain closures, and type
checkers understand it through PEP 681's `dataclass_transform`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar, dataclass_transform, overload

if TYPE_CHECKING:
    from collections.abc import Callable

T = TypeVar("T")

_MISSING: Any = object()


class FrozenInstanceError(AttributeError):
    """Assigning to a field of a frozen record."""


class _Field:
    __slots__ = ("compare", "default", "factory")

    def __init__(self, default: Any, factory: Any, compare: bool) -> None:
        self.default, self.factory, self.compare = default, factory, compare


def field(*, default: Any = _MISSING, default_factory: Any = _MISSING, compare: bool = True) -> Any:
    """Like `dataclasses.field`: a default, a factory for mutable defaults, or compare=False."""
    return _Field(default, default_factory, compare)


@overload
def struct(cls: type[T], /) -> type[T]: ...


@overload
def struct(*, frozen: bool = True) -> Callable[[type[T]], type[T]]: ...


@dataclass_transform(frozen_default=True, field_specifiers=(field,))
def struct(cls: Any = None, /, *, frozen: bool = True) -> Any:
    """Decorate a class with annotated fields: `@struct` (frozen) or `@struct(frozen=False)`."""

    def wrap(klass: Any) -> Any:
        return _build(klass, frozen)

    return wrap if cls is None else wrap(cls)


def _fields(klass: Any) -> list[tuple[str, _Field]]:
    inherited: list[tuple[str, _Field]] = list(getattr(klass, "__record_fields__", ()))
    known = {name for name, _ in inherited}
    own = []
    annotations = klass.__dict__.get("__annotations__", {})  # noqa: RUF063 (inspect is slow)
    for name, annotation in annotations.items():
        if str(annotation).startswith(("ClassVar", "typing.ClassVar")):
            continue
        value = klass.__dict__.get(name, _MISSING)
        spec = value if isinstance(value, _Field) else _Field(value, _MISSING, True)
        if isinstance(value, _Field):
            delattr(klass, name)
        if name in known:
            inherited = [(n, spec if n == name else s) for n, s in inherited]
        else:
            own.append((name, spec))
    return inherited + own


def _build(klass: Any, frozen: bool) -> Any:
    fields = _fields(klass)
    names = tuple(name for name, _ in fields)
    compared = tuple(name for name, spec in fields if spec.compare)
    klass.__record_fields__ = tuple(fields)
    klass.__init__ = _make_init(fields, hasattr(klass, "__post_init__"))
    klass.__repr__ = lambda self: (
        f"{type(self).__name__}({', '.join(f'{n}={getattr(self, n)!r}' for n in names)})"
    )
    klass.__eq__ = lambda self, other: (
        NotImplemented
        if other.__class__ is not self.__class__
        else all(getattr(self, n) == getattr(other, n) for n in compared)
    )
    if frozen:
        klass.__hash__ = lambda self: hash(tuple(getattr(self, n) for n in compared))
        klass.__setattr__ = _refuse
        klass.__delattr__ = _refuse
    else:
        klass.__hash__ = None
    return klass


def _make_init(fields: list[tuple[str, _Field]], post_init: bool) -> Callable[..., None]:
    """An __init__ that fills the instance's __dict__ at once (also for frozen structs: their
    __setattr__ refuses, __dict__ does not); about twice as fast as one setattr per field."""
    names = tuple(name for name, _ in fields)
    specs = tuple(spec for _, spec in fields)
    count = len(fields)

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        given = len(args)
        if given > count:
            raise TypeError(f"{type(self).__name__} takes {count} fields, got {given}")
        values = dict(zip(names, args, strict=False))  # fewer args than fields is fine
        for index in range(given, count):
            name = names[index]
            if name in kwargs:
                values[name] = kwargs.pop(name)
                continue
            spec = specs[index]
            if spec.factory is not _MISSING:
                values[name] = spec.factory()
            elif spec.default is not _MISSING:
                values[name] = spec.default
            else:
                raise TypeError(f"{type(self).__name__} is missing the field {name!r}")
        if kwargs:
            raise TypeError(f"{type(self).__name__} has no field {next(iter(kwargs))!r}")
        self.__dict__.update(values)
        if post_init:
            self.__post_init__()

    return __init__


def replace(obj: T, /, **changes: Any) -> T:
    """Like `dataclasses.replace`: a copy of a struct with some fields changed."""
    values = {name: getattr(obj, name) for name, _ in type(obj).__record_fields__}  # type: ignore[attr-defined]
    values.update(changes)
    return type(obj)(**values)


def _refuse(self: Any, name: str, *args: Any) -> None:
    raise FrozenInstanceError(f"cannot change {name!r}: {type(self).__name__} is frozen")
