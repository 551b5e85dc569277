"""The agent: the loop (model, then gate, then run, until a stop), its model calls, the
compaction that keeps a long session in the context window, the prompt, resuming a session's
conversation, and what the front ends print (JSON events, the live view)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core import front_door

# -- the front door: what other packages may use of this one ---------------------------

if TYPE_CHECKING:
    from .compaction import Compactor as Compactor
    from .compaction import ContextTooSmall as ContextTooSmall
    from .events import JsonEvents as JsonEvents
    from .live.view import LiveEvents as LiveEvents
    from .loop import Agent as Agent
    from .loop import Stop as Stop
    from .loop import fixed_prompt_chars as fixed_prompt_chars
    from .modelcall import AgentConfig as AgentConfig
    from .prompt import system_prompt as system_prompt
    from .resume import rebuild as rebuild

#: public name -> "submodule:attribute", imported when first used
EXPORTS = {
    "Agent": "loop:Agent",
    "AgentConfig": "modelcall:AgentConfig",
    "Compactor": "compaction:Compactor",
    "ContextTooSmall": "compaction:ContextTooSmall",
    "JsonEvents": "events:JsonEvents",
    "LiveEvents": "live.view:LiveEvents",
    "Stop": "loop:Stop",
    "fixed_prompt_chars": "loop:fixed_prompt_chars",
    "rebuild": "resume:rebuild",
    "system_prompt": "prompt:system_prompt",
}
__all__ = [
    "Agent",
    "AgentConfig",
    "Compactor",
    "ContextTooSmall",
    "JsonEvents",
    "LiveEvents",
    "Stop",
    "fixed_prompt_chars",
    "rebuild",
    "system_prompt",
]

if not TYPE_CHECKING:  # type checkers read the imports above
    __getattr__ = front_door(__name__, EXPORTS)
