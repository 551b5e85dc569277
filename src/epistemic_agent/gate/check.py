"""The gate: a proposed call in, a verdict out. Pure: no I/O, never raises on hostile input."""

from __future__ import annotations

import posixpath
import re
from typing import TYPE_CHECKING

from ..core.layout import POLICY_NAME, is_guarded, is_protected
from ..core.structs import field, struct
from ..core.suggest import did_you_mean
from ..core.tools import TOOL_NAMES, TOOLS_BY_NAME
from ..core.vocabulary import ACT_NAMES, ACTS_BY_NAME, FILE_TOOL_ACTS, act_list_text, normalise_act

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from ..effects.classify import Effect

MIN_REASON = 20
_TMPDIR = re.compile(r"\$\{TMPDIR(?::-[^}]*)?\}|\$TMPDIR\b")

#: Stable rule ids and what each one guards. Scripts and reports rely on these ids.
RULES: dict[str, str] = {
    "unknown-tool": "the tool name is not one of the offered tools",
    "args-not-object": "the arguments are not a JSON object (or not valid JSON)",
    "unknown-argument": "an argument the tool does not take",
    "wrong-type": "an argument of the wrong JSON type",
    "missing-argument": "a required argument of a file tool is missing",
    "command-missing": "bash without a command, or with an empty one",
    "type-missing": "bash without a declared act type",
    "type-unknown": "an act type outside the vocabulary",
    "reason-missing": "no reason given",
    "reason-too-short": "a reason shorter than the minimum after trimming",
    "reason-restates-command": "a reason that only restates the command",
    "hypothesis-incomplete": "a test-hypothesis reason without both a belief and its refutation",
    "path-outside-workspace": "a file tool path that leaves the workspace",
    "path-protected": "a file tool path inside the record (.epistemic/ or RATIONALE.md)",
    "path-too-long": "a file tool path with a part over 255 bytes, or over 4,095 bytes in all",
    "self-approval": "a command that answers an approval request (`epistemic approve`/`deny`)",
    "line-range-invalid": "read_file with end_line before start_line",
    "edit-noop": "str_replace_edit whose old and new are identical, or old is empty",
    "file-missing": "str_replace_edit on a file that does not exist",
    "old-not-unique": "str_replace_edit whose old text does not occur exactly once",
    "text-unencodable": "a command, path or file text that cannot be encoded (NUL, lone surrogate)",
    "observation-writes": "a collect-info, verify or test-hypothesis whose command writes files",
    "revert-unrelated": "a revert touching paths no earlier change-state of the session touched",
    "cleanup-preexisting": "a cleanup deleting a path that existed before the session started",
    "call-id-missing": "a model's tool call without an id (it cannot be answered, so not run)",
}

_JSON_TYPES = {
    "string": (str,),
    "integer": (int,),
}
_JSON_NAMES = {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}

_FILLER = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "bash",
        "call",
        "cat",
        "check",
        "cmd",
        "command",
        "do",
        "does",
        "execute",
        "executing",
        "file",
        "files",
        "for",
        "from",
        "in",
        "into",
        "invoke",
        "is",
        "it",
        "its",
        "just",
        "let",
        "lets",
        "me",
        "my",
        "now",
        "of",
        "on",
        "open",
        "our",
        "please",
        "read",
        "run",
        "running",
        "runs",
        "see",
        "shell",
        "show",
        "the",
        "then",
        "this",
        "to",
        "us",
        "use",
        "using",
        "via",
        "view",
        "we",
        "will",
        "with",
        "would",
    ]
)
_BELIEF = re.compile(
    r"\b(believe[sd]?|belief|expect(s|ed|ing)?|suspect(s|ed)?|hypothes\w*|think|assum\w*|"
    r"predict\w*|presum\w*|guess|theory|should|likely|probably)\b"
)
_REFUTATION = re.compile(
    r"\b(refut\w*|disprov\w*|falsif\w*|contradict\w*|otherwise|unless|rule[sd]? out|"
    r"(is|be|am|was|were) wrong|if not|would (mean|show|prove|indicate)|instead)\b"
)
HYPOTHESIS_EXAMPLE = (
    "I believe parse_rows() drops the last row because of an off-by-one; if the count "
    "printed equals the number of lines in the file, that belief is refuted."
)


@struct
class Call:
    """An accepted call, normalised: ready for the executor."""

    tool: str
    act: str
    reason: str
    args: dict[str, Any]
    command: str | None = None
    path: str | None = None

    @property
    def mutating(self) -> bool:
        return ACTS_BY_NAME[self.act].mutating

    def describe(self) -> str:
        """The command, or a one-line description of a file-tool call."""
        if self.command is not None:
            return self.command
        if self.tool == "read_file" and "start_line" in self.args:
            end = self.args.get("end_line", "end")
            return f"read_file {self.path} (lines {self.args['start_line']}-{end})"
        if self.tool == "write_file":
            size = len(str(self.args["content"]).encode("utf-8", "surrogatepass"))
            return f"write_file {self.path} ({size} bytes)"
        return f"{self.tool} {self.path}"


@struct
class Rejected:
    """A call the gate refused: a stable rule id and a message that says how to fix it."""

    rule: str
    message: str
    tool: str
    act: str | None = None
    given: Any = field(default=None, compare=False)

    @property
    def text(self) -> str:
        return f"REJECTED {self.rule}: {self.message}"


Verdict = Call | Rejected


@struct
class GateConfig:
    """What the gate needs to know: the workspace root (absolute) and the reason minimum."""

    workspace: str
    min_reason: int = MIN_REASON
    temp: str = "/tmp"  # the system temp directory: observations may write scratch files there
    classify: Callable[[str], Effect] | None = None  # default: effects.classify


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
    problem = _check_reason(args.get("reason"), command, act, config)
    if problem is None and _answers_approval(command):
        problem = (
            "self-approval",
            (
                "an agent may not answer approval requests: `epistemic approve` and `deny` are "
                "for the humans the policy names. Wait for their decision."
            ),
        )
    if problem is None:
        problem = _check_effects(command, act, config)
    if problem is not None:
        return Rejected(problem[0], problem[1], "bash", act, args)
    normalised = {"command": command, "type": act, "reason": args["reason"].strip()}
    return Call("bash", act, normalised["reason"], normalised, command=command)


_LAUNCHERS = frozenset(
    [
        "sudo",
        "doas",
        "env",
        "nice",
        "nohup",
        "setsid",
        "time",
        "command",
        "exec",
        "stdbuf",
        "timeout",
        "python",
        "python3",
        "-m",
    ]
)
_APPROVERS = frozenset(["epistemic", "epistemic_agent", "epistemic_agent.cli"])


def _answers_approval(command: str) -> bool:
    """Whether a simple command in `command` runs `epistemic approve` or `deny`."""
    if "approve" not in command and "deny" not in command:
        return False
    import re

    for segment in re.split(r"[;&|\n()`{}]|\$\(", command):
        words = [word.strip("'\"") for word in segment.split()]
        index = 0
        while index < len(words) and (
            words[index].rsplit("/", 1)[-1] in _LAUNCHERS
            or "=" in words[index]
            or words[index][:1] == "-"
            or words[index].replace(".", "").isdigit()
        ):
            index += 1
        runs_epistemic = index < len(words) and words[index].rsplit("/", 1)[-1] in _APPROVERS
        if runs_epistemic and {"approve", "deny"} & set(words[index + 1 :]):
            return True
    return False


def _check_reason(
    reason: str | None, restated: str, act: str, config: GateConfig
) -> tuple[str, str] | None:
    if reason is None or not reason.strip():
        return "reason-missing", (
            "`reason` is mandatory: say why this act, now, in a sentence. "
            "Explain the intent, not the syntax."
        )
    trimmed = reason.strip()
    if len(trimmed) < config.min_reason:
        return "reason-too-short", (
            f"`reason` is too terse ({len(trimmed)} chars, need >= {config.min_reason}). "
            "Explain the intent, not the syntax."
        )
    if restates(trimmed, restated):
        return "reason-restates-command", (
            "`reason` only restates the command. Say what you want to learn or achieve "
            "and why it matters now."
        )
    if act == "test-hypothesis":
        lowered = trimmed.lower()
        missing = [
            part
            for part, pattern in (
                ("the belief under test", _BELIEF),
                ("what would refute it", _REFUTATION),
            )
            if not pattern.search(lowered)
        ]
        if missing:
            return "hypothesis-incomplete", (
                "test-hypothesis requires the `reason` to state the belief under test and "
                f"what would refute it; missing: {' and '.join(missing)}. "
                f"For example: {HYPOTHESIS_EXAMPLE!r}"
            )
    return None


def _check_effects(command: str, act: str, config: GateConfig) -> tuple[str, str] | None:
    """What the command says it does, against the record and against the declared act."""
    classify = config.classify
    if classify is None:
        from ..effects import (
            classify as effects,  # tree-sitter: loaded on the first shell call only
        )

        classify = effects.classify
    effect = classify(_TMPDIR.sub(config.temp, command))
    if effect.cls != "mutating":
        return None
    record = [p for p in effect.writes + effect.deletes if _touches_record(p, config)]
    if record:
        return "path-protected", (
            f"the command would change {record[0]!r}, which holds the session's record "
            f"(.epistemic/ and RATIONALE.md) or its policy ({POLICY_NAME}); no act may write or "
            "delete it. Leave it out of the command (for git clean, add -e .epistemic -e "
            "RATIONALE.md and name paths); a policy is changed by a human, not by the agent."
        )
    if ACTS_BY_NAME[act].mutating:
        return None
    return _check_observation(effect, act, config)


def _touches_record(path: str, config: GateConfig) -> bool:
    """A path that is, holds, or lies inside the record."""
    full = posixpath.normpath(posixpath.join(config.workspace, path))
    root = posixpath.normpath(config.workspace)
    if full == root and posixpath.normpath(path) != ".":
        return True  # the workspace itself, named from outside: `cd .. && rm -rf ws`
    if full != root and (root + "/").startswith(full.rstrip("/") + "/"):
        return True  # a folder holding the workspace: the record goes with it
    # "." (find . -delete, git clean) usually comes with filters; the session restores the
    # journal if a command removes it anyway, and flags that call.
    if not full.startswith(root.rstrip("/") + "/"):
        return False
    return is_guarded(full[len(root.rstrip("/")) + 1 :])


def _check_observation(effect: Effect, act: str, config: GateConfig) -> tuple[str, str] | None:
    """An observation whose command writes outside the temp directory is not an observation."""
    stray = [p for p in effect.writes + effect.deletes if not _under(p, config.temp)]
    if not stray and not effect.dynamic and (effect.writes or effect.deletes):
        return None  # scratch files under the temp directory
    culprit = next((r for r in effect.reasons if any(p in r for p in stray)), None)
    culprit = culprit or next(iter(effect.reasons), "the command changes state")
    return "observation-writes", (
        f"declared an observation ({act}), wrote an effect: {culprit}; if this output is the "
        "deliverable, use change-state; if it is a scratch file, write it under "
        f"{config.temp} ($TMPDIR)."
    )


def _under(path: str, folder: str) -> bool:
    full = posixpath.normpath(path)
    return full == folder or full.startswith(folder.rstrip("/") + "/")


def restates(reason: str, command: str) -> bool:
    """Whether a reason says nothing beyond the command's own words and filler."""
    command_words = set(_words(command))
    rest = [word for word in _words(reason) if word not in _FILLER]
    return all(word in command_words for word in rest)


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


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
    problem = _check_reason(args.get("reason"), f"{tool} {args['path']}", act, config)
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


def resolve_path(workspace: str, path: str) -> str | Rejected:
    """A workspace-relative, normalised path, or the rejection that refuses it (lexical only)."""
    if not path.strip() or "\x00" in path:
        return Rejected("missing-argument", "`path` is empty or malformed.", "")
    full = posixpath.normpath(posixpath.join(workspace, path))
    root = posixpath.normpath(workspace)
    if full != root and not full.startswith(root.rstrip("/") + "/"):
        return Rejected(
            "path-outside-workspace",
            f"{path!r} is outside the workspace; file tools only work inside it.",
            "",
        )
    rel = posixpath.relpath(full, root)
    if rel == ".":
        return Rejected("path-outside-workspace", f"{path!r} is the workspace itself.", "")
    too_long = _too_long(full)
    if too_long:
        return Rejected("path-too-long", too_long, "")
    if is_protected(rel):
        return Rejected(
            "path-protected",
            f"{rel!r} is part of the session's record (.epistemic/ and RATIONALE.md); "
            "it is not yours to read or edit through tools.",
            "",
        )
    return rel


NAME_MAX = 255  # bytes in one part of a path (Linux file systems); PATH_MAX counts the NUL
PATH_MAX = 4096


def _too_long(full: str) -> str | None:
    """Why the file system would refuse this path as too long (ENAMETOOLONG), if it would."""
    size = len(full.encode("utf-8", "surrogatepass"))
    if size >= PATH_MAX:
        return f"the path is {size} bytes long; a path may have at most {PATH_MAX - 1}."
    for part in full.split("/"):
        length = len(part.encode("utf-8", "surrogatepass"))
        if length > NAME_MAX:
            shown = part[:24] + "…"
            return (
                f"the path part {shown!r} is {length} bytes long; a file or folder name may "
                f"have at most {NAME_MAX}. Use a shorter name."
            )
    return None


def _json_name(value: object) -> str:
    for kind, name in _JSON_NAMES.items():
        if isinstance(value, kind):
            return name
    return "number" if isinstance(value, int | float) else type(value).__name__


def _show(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
