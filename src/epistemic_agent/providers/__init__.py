"""Model providers, named by one string `PROVIDER:MODEL`. SDKs are imported only when used."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core import front_door, load
from .base import ModelOptions, ModelSpecError, Provider, ProviderError
from .models import lookup
from .replay import ScriptError

#: Each provider by name and the import path of its class, as mini-swe-agent names its
#: environments: a provider's SDK is imported only when the provider is made.
PROVIDER_CLASSES: dict[str, str] = {
    "openai": "epistemic_agent.providers.openai_chat.OpenAIProvider",
    "openai-responses": "epistemic_agent.providers.openai_responses.OpenAIResponsesProvider",
    "anthropic": "epistemic_agent.providers.anthropic_messages.AnthropicProvider",
    "replay": "epistemic_agent.providers.replay.ReplayProvider",
}
PROVIDERS = tuple(PROVIDER_CLASSES)


def provider_class(kind: str) -> Any:
    """The class registered under `kind` (one of PROVIDERS); KeyError names the known ones."""
    return load(PROVIDER_CLASSES, kind, "provider")


def split_spec(spec: str) -> tuple[str, str]:
    """`openai:llama3.1:8b` -> ("openai", "llama3.1:8b"): only the first colon separates."""
    kind, sep, model = spec.partition(":")
    if not sep or not model:
        raise ModelSpecError(
            f"model {spec!r} must be PROVIDER:MODEL with PROVIDER one of "
            f"{', '.join(PROVIDERS)} (e.g. openai:gpt-5.1, replay:demo.json)"
        )
    if kind not in PROVIDERS:
        raise ModelSpecError(f"unknown provider {kind!r}; use one of {', '.join(PROVIDERS)}")
    return kind, model


def make_provider(
    spec: str,
    *,
    base_url: str | None = None,
    api_key_env: str | None = None,
    timeout: float = 600.0,
    options: ModelOptions | None = None,
    summary: str | None = "auto",
) -> Provider:
    """`openai:gpt-5.1`, `openai-responses:gpt-5.1`, `anthropic:claude-sonnet-4-5`,
    `replay:session.json`. `options` default to the built-in table's entry for the model."""
    kind, model = split_spec(spec)
    if kind == "replay":
        try:
            made: Provider = provider_class(kind)(Path(model))
        except ScriptError as error:
            raise ModelSpecError(str(error)) from None
        return made
    if options is None:
        options = ModelOptions(lookup(kind, model, {}))
    default_env = "ANTHROPIC_API_KEY" if kind == "anthropic" else "OPENAI_API_KEY"
    settings: dict[str, Any] = {
        "base_url": base_url,
        "api_key_env": api_key_env or default_env,
        "timeout": timeout,
        "options": options,
    }
    if kind == "openai-responses":
        settings["summary"] = summary
    made = provider_class(kind)(model, **settings)
    return made


__all__ = [
    "PROVIDERS",
    "PROVIDER_CLASSES",
    "ModelOptions",
    "ModelSpecError",
    "Provider",
    "ProviderError",
    "make_provider",
    "provider_class",
    "split_spec",
]


# -- the front door: what other packages may use of this one ---------------------------

if TYPE_CHECKING:
    from .base import AssistantMessage as AssistantMessage
    from .base import Message as Message
    from .base import ModelOptions as ModelOptions
    from .base import Provider as Provider
    from .base import StreamSink as StreamSink
    from .base import ToolCall as ToolCall
    from .base import ToolResult as ToolResult
    from .base import ToolResults as ToolResults
    from .base import Turn as Turn
    from .base import Usage as Usage
    from .base import UserMessage as UserMessage
    from .base import arguments_text as arguments_text
    from .models import ModelConfigError as ModelConfigError
    from .models import ModelInfo as ModelInfo
    from .models import config_path as config_path
    from .models import load_config as load_config
    from .models import lookup as lookup
    from .models import table as table
    from .replay import ReplayProvider as ReplayProvider
    from .replay import ScriptError as ScriptError
    from .replay import load_script as load_script

#: public name -> "submodule:attribute", imported when first used
EXPORTS = {
    "AssistantMessage": "base:AssistantMessage",
    "Message": "base:Message",
    "ModelConfigError": "models:ModelConfigError",
    "ModelInfo": "models:ModelInfo",
    "ModelOptions": "base:ModelOptions",
    "Provider": "base:Provider",
    "ReplayProvider": "replay:ReplayProvider",
    "ScriptError": "replay:ScriptError",
    "StreamSink": "base:StreamSink",
    "ToolCall": "base:ToolCall",
    "ToolResult": "base:ToolResult",
    "ToolResults": "base:ToolResults",
    "Turn": "base:Turn",
    "Usage": "base:Usage",
    "UserMessage": "base:UserMessage",
    "arguments_text": "base:arguments_text",
    "config_path": "models:config_path",
    "load_config": "models:load_config",
    "load_script": "replay:load_script",
    "lookup": "models:lookup",
    "table": "models:table",
}
__all__ += [  # the names of the modules behind the door
    "AssistantMessage",
    "Message",
    "ModelConfigError",
    "ModelInfo",
    "ModelOptions",
    "Provider",
    "ReplayProvider",
    "ScriptError",
    "StreamSink",
    "ToolCall",
    "ToolResult",
    "ToolResults",
    "Turn",
    "Usage",
    "UserMessage",
    "arguments_text",
    "config_path",
    "load_config",
    "load_script",
    "lookup",
    "table",
]

if not TYPE_CHECKING:  # type checkers read the imports above
    __getattr__ = front_door(__name__, EXPORTS)
