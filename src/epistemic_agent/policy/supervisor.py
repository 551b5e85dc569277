"""What a supervisor is configured to be: `[supervisor]` in epistemic.toml, or `--supervisor`.

Kept free of heavy imports: the policy reader builds one for every policy file it loads.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core import ACTS_BY_NAME, struct
from .spec import read_table

if TYPE_CHECKING:
    from typing import Any

    from .spec import Errors, Spots

#: What the journal says a supervisor is, in the session header and in each `review` record.
ROLE = "second-opinion"
#: The acts a supervisor reviews unless told otherwise: those that test or change something.
DEFAULT_ACTS = ("test-hypothesis", "change-state", "revert")
ON_ERROR = ("allow", "deny", "ask")
DEFAULT_BUDGET = 200_000  # tokens, input and output, per session
SUPERVISOR_KEYS = ("model", "acts", "budget", "prompt", "on_error", "base_url", "api_key_env")
MAX_PROMPT = 20_000


@struct
class SupervisorSpec:
    """Which model reviews which acts, within what budget, with what prompt, and what happens
    to a call when the review fails (`on_error`). `model` None: none is set here."""

    model: str | None = None
    acts: tuple[str, ...] = DEFAULT_ACTS
    budget: int = DEFAULT_BUDGET
    prompt: str | None = None  # None: the built-in prompt (docs/supervisor.md)
    on_error: str = "allow"
    base_url: str | None = None
    api_key_env: str | None = None

    def with_model(self, model: str | None) -> SupervisorSpec:
        """The same settings with another model (`--supervisor MODEL` over the file's)."""
        if model is None:
            return self
        return SupervisorSpec(
            model,
            self.acts,
            self.budget,
            self.prompt,
            self.on_error,
            self.base_url,
            self.api_key_env,
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "acts": list(self.acts),
            "budget": self.budget,
            "prompt": "custom" if self.prompt is not None else "built-in",
            "on_error": self.on_error,
        }


def read_supervisor(value: object, spots: Spots, errors: Errors) -> SupervisorSpec | None:
    """The `[supervisor]` table of a policy file; faults go to `errors` with their line."""
    table = read_table("supervisor", value, SUPERVISOR_KEYS, spots, errors)
    if not table:
        return None

    def fault(key: str, message: str) -> None:
        errors.append((spots.table("supervisor", key), f"[supervisor]: {message}"))

    fields: dict[str, Any] = {}
    for key in ("model", "base_url", "api_key_env", "prompt"):
        if key in table:
            if isinstance(table[key], str) and table[key].strip():
                fields[key] = table[key]
            else:
                fault(key, f"`{key}` must be a non-empty string")
    if len(fields.get("prompt", "")) > MAX_PROMPT:
        fault("prompt", f"`prompt` is longer than {MAX_PROMPT} characters")
    if "acts" in table:
        acts = table["acts"]
        if not isinstance(acts, list) or not acts or not all(a in ACTS_BY_NAME for a in acts):
            fault(
                "acts", f"`acts` must be a non-empty list of act types ({', '.join(ACTS_BY_NAME)})"
            )
        else:
            fields["acts"] = tuple(dict.fromkeys(acts))
    if "budget" in table:
        budget = table["budget"]
        if isinstance(budget, int) and not isinstance(budget, bool) and budget > 0:
            fields["budget"] = budget
        else:
            fault("budget", "`budget` must be a positive number of tokens")
    if "on_error" in table:
        if table["on_error"] in ON_ERROR:
            fields["on_error"] = table["on_error"]
        else:
            fault("on_error", f"`on_error` must be one of {', '.join(ON_ERROR)}")
    return SupervisorSpec(**fields)
