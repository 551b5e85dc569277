"""What the gate answers: an accepted `Call`, or a `Rejected` naming one of the stable `RULES`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core import ACTS_BY_NAME, field, struct

if TYPE_CHECKING:
    from typing import Any

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
