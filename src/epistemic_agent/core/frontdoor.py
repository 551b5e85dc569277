"""Front doors. Each package's `__init__` names what other packages may use of it (its
`EXPORTS`), and import-linter forbids reaching past it to the modules behind. A name is
imported from its module when it is first used, so that importing a package costs nothing
until one of its names is needed (start-up stays lazy)."""

from __future__ import annotations

import importlib
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping


def front_door(package: str, exports: Mapping[str, str]) -> Callable[[str], object]:
    """The module-level `__getattr__` of `package`, whose `exports` map each public name to
    "submodule:attribute". A name it does not export is an AttributeError, so that
    `from package import submodule` still imports the submodule (inside the package)."""

    def __getattr__(name: str) -> object:
        where = exports.get(name)
        if where is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, _, attribute = where.partition(":")
        value = getattr(importlib.import_module(f"{package}.{module}"), attribute)
        setattr(sys.modules[package], name, value)  # the next use is a plain attribute
        return value

    return __getattr__
