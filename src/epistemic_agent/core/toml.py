"""TOML text to a dict, through the one accessor of `tomllib`.

`tomllib` costs about 9 ms to import (a third of Python's own start-up), and `epistemic exec`
reads TOML only when the workspace has a policy file or the user a models file.
"""

from __future__ import annotations

from typing import Any

from .errors import EpistemicError


class TomlError(EpistemicError, ValueError):
    """Not valid TOML; the message is tomllib's, with its line and column."""


def loads(text: str) -> dict[str, Any]:
    """`tomllib.loads(text)`; its TOMLDecodeError comes out as TomlError, same message."""
    import tomllib  # lazy: its cost is paid only when a TOML file is read

    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise TomlError(str(error)) from None
