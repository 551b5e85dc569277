"""Name-to-import-path registries: how providers, observers, approvers and supervisors are
found (mini-swe-agent names its environments the same way).

Each registry is a plain dict from a name to `package.module.attribute`. Nothing is imported
until a name is chosen, so a new entry costs one line and a session pays only for what it uses.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any


def load(registry: Mapping[str, str], name: str, what: str) -> Any:
    """The object registered under `name`; KeyError names the known ones (`what`: "observer")."""
    try:
        module_name, _, attribute = registry[name].rpartition(".")
    except KeyError:
        known = ", ".join(registry)
        raise KeyError(f"no {what} named {name!r}; known: {known}") from None
    return getattr(importlib.import_module(module_name), attribute)
