"""Front doors. Each package's `__init__` names what other packages may use of it (its
`EXPORTS`), and import-linter forbids reaching past it to the modules behind. A name is
imported from its module when it is first used, so that importing a package costs nothing
until one of its names is needed (start-up stays lazy)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping


def front_door(package: str, exports: Mapping[str, str]) -> Callable[[str], object]:
    """The module-level `__getattr__` of `package`, whose `exports` map each public name to
    "submodule:attribute". A name it does not export is an AttributeError, so that
    `from package import submodule` still imports the submodule (inside the package). The
    name is read from its module each time (nothing is copied to the package): a module's
    attribute replaced later (a test's monkeypatch) is what the next import gets."""

    def __getattr__(name: str) -> object:
        where = exports.get(name)
        if where is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, _, attribute = where.partition(":")
        # Through the import system, never sys.modules alone: a module another thread is
        # still importing is waited for, not read half made. The builtin, not importlib:
        # nothing more to import.
        found = __import__(f"{package}.{module}", fromlist=(attribute,))
        return getattr(found, attribute)

    return __getattr__
