"""The four tools: one JSON Schema each, exportable in OpenAI and Anthropic formats."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .structs import struct
from .vocabulary import ACT_NAMES, ACTS, FILE_TOOL_ACTS

if TYPE_CHECKING:
    from typing import Any

REASON_HELP = "Your intent: why this act, now. Not a restatement of the command."


@struct
class ToolSpec:
    """A tool as offered to a model: name, description and JSON Schema of its arguments."""

    name: str
    description: str
    parameters: dict[str, Any]

    @property
    def required(self) -> tuple[str, ...]:
        return tuple(self.parameters["required"])

    @property
    def properties(self) -> dict[str, Any]:
        props: dict[str, Any] = self.parameters["properties"]
        return props


def _schema(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }


def _type_description() -> str:
    lines = "; ".join(f"{act.name}: {act.meaning}" for act in ACTS)
    return f"{lines}."


def _string(description: str) -> dict[str, Any]:
    return {"type": "string", "description": description}


def _build_specs() -> tuple[ToolSpec, ...]:
    reason: dict[str, Any] = {"type": "string"}  # explained once: on bash, and in the prompt
    path = _string("Path relative to the workspace.")
    return (
        ToolSpec(
            "bash",
            "Run a shell command with bash in the workspace.",
            _schema(
                {
                    "command": _string("The shell command."),
                    "type": {
                        "type": "string",
                        "enum": list(ACT_NAMES),
                        "description": _type_description(),
                    },
                    "reason": _string(REASON_HELP),
                },
                ["command", "type", "reason"],
            ),
        ),
        ToolSpec(
            "read_file",
            f"Read a text file (act: {FILE_TOOL_ACTS['read_file']}). Lines are 1-based.",
            _schema(
                {
                    "path": path,
                    "reason": reason,
                    "start_line": {"type": "integer", "minimum": 1},
                    "end_line": {"type": "integer", "minimum": 1},
                },
                ["path", "reason"],
            ),
        ),
        ToolSpec(
            "write_file",
            f"Create or overwrite a file (act: {FILE_TOOL_ACTS['write_file']}).",
            _schema(
                {"path": path, "content": _string("The whole new content."), "reason": reason},
                ["path", "content", "reason"],
            ),
        ),
        ToolSpec(
            "str_replace_edit",
            f"Replace the one occurrence of `old` with `new` in a file "
            f"(act: {FILE_TOOL_ACTS['str_replace_edit']}).",
            _schema(
                {
                    "path": path,
                    "old": _string("Exact text to replace; must occur exactly once."),
                    "new": _string("Replacement text."),
                    "reason": reason,
                },
                ["path", "old", "new", "reason"],
            ),
        ),
    )


TOOL_SPECS: tuple[ToolSpec, ...] = _build_specs()
TOOLS_BY_NAME: dict[str, ToolSpec] = {spec.name: spec for spec in TOOL_SPECS}
TOOL_NAMES: tuple[str, ...] = tuple(TOOLS_BY_NAME)


def openai_tools() -> list[dict[str, Any]]:
    """The tools in the OpenAI Chat Completions `tools` format."""
    return [
        {
            "type": "function",
            "function": {
                "name": spec.name,
                "description": spec.description,
                "parameters": spec.parameters,
            },
        }
        for spec in TOOL_SPECS
    ]


def anthropic_tools() -> list[dict[str, Any]]:
    """The tools in the Anthropic Messages `tools` format."""
    return [
        {"name": spec.name, "description": spec.description, "input_schema": spec.parameters}
        for spec in TOOL_SPECS
    ]


def responses_tools() -> list[dict[str, Any]]:
    """The tools in the OpenAI Responses `tools` format (flat; `strict` off, since its
    default there is on and strict schemas may not have optional properties)."""
    return [
        {
            "type": "function",
            "name": spec.name,
            "description": spec.description,
            "parameters": spec.parameters,
            "strict": False,
        }
        for spec in TOOL_SPECS
    ]
