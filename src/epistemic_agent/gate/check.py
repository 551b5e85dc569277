"""The gate: a proposed call in, a verdict out. Pure: no I/O, never raises on hostile input.

The checks live by concern: the reason (reasons.py), what a command does (commands.py), a file
tool's path (paths.py); the verdicts and the configuration are re-exported here, where their
many callers import them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core import (
    ACT_NAMES,
    ACTS_BY_NAME,
    FILE_TOOL_ACTS,
    POLICY_NAME,
    TOOL_NAMES,
    TOOLS_BY_NAME,
    act_list_text,
    did_you_mean,
    normalise_act,
)
from .commands import answers_approval, check_effects
from .config import MIN_REASON, GateConfig
from .paths import resolve_path
from .reasons import check_reason
from .verdicts import RULES, Call, Rejected, Verdict

if TYPE_CHECKING:
    from typing import Any

__all__ = ["MIN_REASON", "RULES", "Call", "GateConfig", "Rejected", "Verdict", "check"]

_JSON_TYPES = {
    "string": (str,),
    "integer": (int,),
}
_JSON_NAMES = {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}


def check(tool: object, args: object, config: GateConfig) -> Verdict:
    """Validate one proposed call. Never raises; every refusal carries a rule id."""
    name = tool if isinstance(tool, str) else repr(tool)
    if not isinstance(tool, str) or tool not in TOOLS_BY_NAME:
        return Rejected(
            "unknown-tool",
            f"unknown tool {_show(tool)}; the tools are {', '.join(TOOL_NAMES)}.",
            name,
            given=args,
        )
    if not isinstance(args, dict):
        return Rejected(
            "args-not-object",
            f"the arguments of {tool} must be a JSON object, got {_json_name(args)}.",
            tool,
            given=args,
        )
    shape = _check_shape(tool, args)
    if shape is not None:
        return shape
    if tool == "bash":
        return _check_bash(args, config)
    return _check_file_tool(tool, args, config)


def _check_shape(tool: str, args: dict[Any, Any]) -> Rejected | None:
    spec = TOOLS_BY_NAME[tool]
    extra = sorted(str(key) for key in args if key not in spec.properties)
    if extra:
        return Rejected(
            "unknown-argument",
            f"{tool} does not take {', '.join(map(repr, extra))}; its arguments are "
            f"{', '.join(spec.properties)}.",
            tool,
            given=args,
        )
    for key, value in args.items():
        wanted = spec.properties[key]["type"]
        if value is None:
            continue  # treated as missing by the rules below
        if not isinstance(value, _JSON_TYPES[wanted]) or isinstance(value, bool):
            article = "an" if wanted[0] in "aeiou" else "a"
            return Rejected(
                "wrong-type",
                f"`{key}` must be {article} {wanted}, got {_json_name(value)}.",
                tool,
                given=args,
            )
        problem = _unusable_text(key, value)
        if problem:
            return Rejected("text-unencodable", f"`{key}` {problem}.", tool, given=args)
    return None


def _unusable_text(key: str, value: object) -> str | None:
    """Text the shell or the file system cannot take: lone surrogates; NUL in commands/paths."""
    if not isinstance(value, str) or key in ("reason", "type"):
        return None
    if "\x00" in value and key in ("command", "path"):
        return "contains a NUL character, which no command line or path can hold"
    try:
        value.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return "contains a lone surrogate, which is not valid Unicode text"
    return None


def _check_bash(args: dict[str, Any], config: GateConfig) -> Verdict:
    command = args.get("command")
    raw_type = args.get("type")
    act = normalise_act(raw_type) if isinstance(raw_type, str) else None
    shown_act = act if act in ACTS_BY_NAME else None
    if command is None or not command.strip():
        what = "missing" if command is None else "empty"
        return Rejected(
            "command-missing",
            f"`command` is {what}. Give the shell command to run.",
            "bash",
            shown_act,
            args,
        )
    if act is None or not act:
        return Rejected(
            "type-missing",
            "`type` is mandatory. Re-issue the call with one of:\n" + act_list_text(),
            "bash",
            None,
            args,
        )
    if act not in ACTS_BY_NAME:
        return Rejected(
            "type-unknown",
            f"`type` must be one of {', '.join(ACT_NAMES)}; got {raw_type!r}."
            + did_you_mean(raw_type, ACT_NAMES),
            "bash",
            None,
            args,
        )
    problem = check_reason(args.get("reason"), command, act, config)
    if problem is None and answers_approval(command):
        problem = (
            "self-approval",
            (
                "an agent may not answer approval requests: `epistemic approve` and `deny` are "
                "for the humans the policy names. Wait for their decision."
            ),
        )
    if problem is None:
        problem = check_effects(command, act, config)
    if problem is not None:
        return Rejected(problem[0], problem[1], "bash", act, args)
    normalised = {"command": command, "type": act, "reason": args["reason"].strip()}
    return Call("bash", act, normalised["reason"], normalised, command=command)


def _check_file_tool(tool: str, args: dict[str, Any], config: GateConfig) -> Verdict:
    act = FILE_TOOL_ACTS[tool]
    spec = TOOLS_BY_NAME[tool]
    missing = [key for key in spec.required if key != "reason" and args.get(key) is None]
    if missing:
        return Rejected(
            "missing-argument",
            f"{tool} needs {', '.join(map(repr, missing))}; it takes {', '.join(spec.properties)}.",
            tool,
            act,
            args,
        )
    path = resolve_path(config.workspace, args["path"])
    if isinstance(path, Rejected):
        return Rejected(path.rule, path.message, tool, act, args)
    if tool != "read_file" and path == POLICY_NAME:
        message = (
            f"{POLICY_NAME} is the policy this session obeys: a human changes it, not the agent."
        )
        return Rejected("path-protected", message, tool, act, args)
    problem = check_reason(args.get("reason"), f"{tool} {args['path']}", act, config)
    if problem is not None:
        return Rejected(problem[0], problem[1], tool, act, args)
    extra = _check_file_specifics(tool, args)
    if extra is not None:
        return Rejected(extra[0], extra[1], tool, act, args)
    normalised = {key: value for key, value in args.items() if value is not None}
    normalised["path"] = path
    normalised["reason"] = args["reason"].strip()
    return Call(tool, act, normalised["reason"], normalised, path=path)


def _check_file_specifics(tool: str, args: dict[str, Any]) -> tuple[str, str] | None:
    if tool == "read_file":
        start, end = args.get("start_line"), args.get("end_line")
        if (start is not None and start < 1) or (end is not None and end < 1):
            return "line-range-invalid", "line numbers start at 1."
        if start is not None and end is not None and end < start:
            return "line-range-invalid", f"end_line {end} is before start_line {start}."
    if tool == "str_replace_edit":
        if args["old"] == "":
            return "edit-noop", "`old` is empty; give the exact text to replace."
        if args["old"] == args["new"]:
            return "edit-noop", "`old` and `new` are identical; this edit changes nothing."
    return None


def _json_name(value: object) -> str:
    for kind, name in _JSON_NAMES.items():
        if isinstance(value, kind):
            return name
    return "number" if isinstance(value, int | float) else type(value).__name__


def _show(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
