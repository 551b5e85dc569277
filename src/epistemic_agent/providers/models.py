"""What is known of a model: prices, context window, output limit (docs/models.md).

The built-in table (model_table.py) is extended or overridden by a TOML file of the user's:
`--models FILE`, else `$EPISTEMIC_MODELS`, else `~/.config/epistemic/models.toml` (under
`$XDG_CONFIG_HOME` when set) if it exists. A model found in neither has no price: its cost is
recorded as null, never guessed.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

from ..core import EpistemicError, TomlError, loads, struct
from .model_table import ALIASES, BUILTIN, DEFAULT_MAX_OUTPUT

if TYPE_CHECKING:
    from typing import Any

PRICE_KEYS = ("input", "output", "cache_write", "cache_read")
MAX_TOKENS_PARAMS = ("max_tokens", "max_completion_tokens")
ROW_KEYS = (*PRICE_KEYS, "context_window", "max_output", "max_tokens_param", "reasoning")
KEYS = (*ROW_KEYS, "prompt_cache_key")
ENV = "EPISTEMIC_MODELS"
_SNAPSHOT = re.compile(r"-(\d{8}|\d{4}-\d{2}-\d{2}|latest)$")


class ModelConfigError(EpistemicError, ValueError):
    """The models file cannot be read or holds a bad entry; the message says where."""


@struct
class ModelInfo:
    """One model's entry, merged from the table and the configuration."""

    model: str
    entry: str | None = None  # the table or configuration key that matched; None: unknown
    input: float | None = None
    output: float | None = None
    cache_write: float | None = None
    cache_read: float | None = None
    context_window: int | None = None
    max_output: int = DEFAULT_MAX_OUTPUT
    max_tokens_param: str | None = None
    reasoning: bool = False
    prompt_cache_key: bool | None = None  # None: only OpenAI's own API takes one
    source: str = "unknown"  # "built-in", or the configuration file that set something

    @property
    def priced(self) -> bool:
        return self.input is not None and self.output is not None

    def price(self) -> dict[str, float] | None:
        """The four rates used for costs (a missing cache rate is the input rate)."""
        if self.input is None or self.output is None:
            return None
        return {
            "input": self.input,
            "output": self.output,
            "cache_write": self.input if self.cache_write is None else self.cache_write,
            "cache_read": self.input if self.cache_read is None else self.cache_read,
        }

    def cost(
        self,
        input_tokens: int | None,
        output_tokens: int | None,
        read: int | None,
        written: int | None,
    ) -> float | None:
        """US dollars for one request: uncached input, cache writes, cache reads, output.
        None when the price or the token counts are unknown."""
        rates = self.price()
        if rates is None or input_tokens is None or output_tokens is None:
            return None
        read, written = read or 0, written or 0
        uncached = max(input_tokens - read - written, 0)
        total = (
            uncached * rates["input"]
            + written * rates["cache_write"]
            + read * rates["cache_read"]
            + output_tokens * rates["output"]
        )
        return round(total / 1_000_000, 10)


def config_path(explicit: str | None) -> Path | None:
    """The models file to read: the flag, the variable, or the default if it exists."""
    if explicit:
        return Path(explicit)
    if os.environ.get(ENV):
        return Path(os.environ[ENV])
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    default = Path(base) / "epistemic" / "models.toml"
    return default if default.is_file() else None


def load_config(path: Path | None) -> dict[str, dict[str, Any]]:
    """The `[models."NAME"]` tables of a models file, checked key by key."""
    if path is None:
        return {}
    try:
        data = loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ModelConfigError(f"models file {path} does not exist") from None
    except (OSError, UnicodeDecodeError) as error:
        raise ModelConfigError(f"models file {path} cannot be read: {error}") from None
    except TomlError as error:
        raise ModelConfigError(f"models file {path} is not valid TOML: {error}") from None
    unknown = sorted(set(data) - {"models"})
    if unknown:
        raise ModelConfigError(f"{path}: unknown top-level key(s) {unknown}; expected [models]")
    models = data.get("models", {})
    if not isinstance(models, dict):
        raise ModelConfigError(f'{path}: `models` must be a table of [models."NAME"] tables')
    return {name: _checked(path, name, entry) for name, entry in models.items()}


def _checked(path: Path, name: str, entry: Any) -> dict[str, Any]:
    where = f'{path}: [models."{name}"]'
    if not isinstance(entry, dict):
        raise ModelConfigError(f"{where} must be a table")
    unknown = sorted(set(entry) - set(KEYS))
    if unknown:
        raise ModelConfigError(f"{where}: unknown key(s) {unknown}; known: {', '.join(KEYS)}")
    for key, value in entry.items():
        problem = _problem(key, value)
        if problem:
            raise ModelConfigError(f"{where}.{key} {problem} (got {value!r})")
    return dict(entry)


def _problem(key: str, value: Any) -> str | None:
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if key in PRICE_KEYS:
        return None if number and value >= 0 else "must be a number >= 0 (dollars per MTok)"
    if key in ("context_window", "max_output"):
        ok = isinstance(value, int) and not isinstance(value, bool) and value > 0
        return None if ok else "must be a positive integer (tokens)"
    if key == "max_tokens_param":
        return None if value in MAX_TOKENS_PARAMS else f"must be one of {MAX_TOKENS_PARAMS}"
    return None if isinstance(value, bool) else "must be true or false"


def lookup(provider: str, model: str, config: dict[str, dict[str, Any]]) -> ModelInfo:
    """The merged entry for PROVIDER:MODEL. Dated snapshots (`-20250929`) match their model."""
    names = [model]
    base = _SNAPSHOT.sub("", model)
    if base != model:
        names.append(base)
    names += [ALIASES[name] for name in list(names) if name in ALIASES]
    fields: dict[str, Any] = {}
    entry, sources = None, []
    for name in names:
        if name in BUILTIN:
            fields.update(zip(ROW_KEYS, BUILTIN[name], strict=True))
            entry, sources = name, ["built-in"]
            break
    for key in [*(f"{provider}:{name}" for name in names), *names]:
        if key in config:
            fields.update(config[key])
            entry = entry or key
            sources.append("config")
            break
    fields = {k: v for k, v in fields.items() if v is not None}
    if "max_output" not in fields:
        fields["max_output"] = DEFAULT_MAX_OUTPUT
    return ModelInfo(model, entry, source="+".join(sources) or "unknown", **_floats(fields))


def _floats(fields: dict[str, Any]) -> dict[str, Any]:
    return {k: float(v) if k in PRICE_KEYS else v for k, v in fields.items()}


def table(config: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Every known entry, built-in and configured, for `epistemic models`."""
    rows: dict[str, dict[str, Any]] = {}
    for name, row in BUILTIN.items():
        rows[name] = {"model": name, **dict(zip(ROW_KEYS, row, strict=True)), "source": "built-in"}
    for name, entry in config.items():
        merged = rows.get(name, {"model": name, **dict.fromkeys(KEYS)})
        rows[name] = {**merged, **entry, "source": "config"}
    return list(rows.values())
