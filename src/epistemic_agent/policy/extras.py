"""The parts of a policy file besides its rules: `[approval]`, `[secrets]`, `[sandbox]` and
`[[hook]]`."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

from ..core import GUARANTEES, check_patterns, read_regular
from .alerts import EVENTS, MAX_TIMEOUT, Hook
from .rules import short_repr
from .spec import read_table
from .supervisor import read_supervisor

if TYPE_CHECKING:
    from typing import Any

    from .spec import Errors, RuleSpec, Spots

CHANNELS = ("auto", "terminal", "file")
APPROVAL_KEYS = ("timeout", "channel", "allowed_signers", "signatures")
SIGNATURES = ("required", "optional")
SECRETS_KEYS = ("patterns", "env")
SANDBOX_KEYS = ("writable", "hidden", "require_confinement")
GRANTABLE = ("setup", "change-state", "revert", "cleanup")
HOOK_KEYS = ("id", "on", "command", "stderr", "timeout")
SIGNERS_MAX_BYTES = 1 << 20  # an allowed_signers file: about ten thousand keys
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def read_extras(document: dict[str, Any], spots: Spots, errors: Errors) -> dict[str, Any]:
    """Policy keyword arguments for the approval settings, secret patterns and hooks."""
    extras: dict[str, Any] = {}
    extras.update(_read_approval(document.get("approval"), spots, errors))
    extras.update(_read_secrets(document.get("secrets"), spots, errors))
    extras.update(_read_sandbox(document.get("sandbox"), spots, errors))
    extras["hooks"] = _read_hooks(document.get("hook", []), spots, errors)
    supervisor = read_supervisor(document.get("supervisor"), spots, errors)
    if supervisor is not None:
        extras["supervisor"] = supervisor
    return extras


def _read_approval(value: object, spots: Spots, errors: Errors) -> dict[str, Any]:
    table = read_table("approval", value, APPROVAL_KEYS, spots, errors)
    extras: dict[str, Any] = {}
    if "timeout" in table:
        timeout = table["timeout"]
        if _positive_number(timeout):
            extras["approval_timeout"] = float(timeout)
        else:
            errors.append(
                (
                    spots.table("approval", "timeout"),
                    f"[approval]: `timeout` must be a positive number of seconds, got "
                    f"{short_repr(timeout)}",
                )
            )
    extras["signatures"] = "required"  # a policy file requires them unless it says otherwise
    if "signatures" in table:
        if table["signatures"] in SIGNATURES:
            extras["signatures"] = table["signatures"]
        else:
            errors.append(
                (
                    spots.table("approval", "signatures"),
                    "[approval]: `signatures` must be required or optional, got "
                    f"{short_repr(table['signatures'])}",
                )
            )
    if "allowed_signers" in table:
        signers = table["allowed_signers"]
        if isinstance(signers, str) and signers.strip():
            extras["allowed_signers"] = signers
        else:
            errors.append(
                (
                    spots.table("approval", "allowed_signers"),
                    "[approval]: `allowed_signers` is a path",
                )
            )
    if "channel" in table:
        channel = table["channel"]
        if channel in CHANNELS:
            extras["approval_channel"] = channel
        else:
            errors.append(
                (
                    spots.table("approval", "channel"),
                    f"[approval]: `channel` must be one of {', '.join(CHANNELS)}, got "
                    f"{short_repr(channel)}",
                )
            )
    return extras


def _read_secrets(value: object, spots: Spots, errors: Errors) -> dict[str, Any]:
    table = read_table("secrets", value, SECRETS_KEYS, spots, errors)
    extras: dict[str, Any] = {}
    if "patterns" in table:
        problems = check_patterns(table["patterns"])
        where = spots.table("secrets", "patterns")
        errors.extend((where, f"[secrets]: {problem}") for problem in problems)
        if not problems:
            extras["secret_patterns"] = tuple(table["patterns"])
    if "env" in table:
        names = table["env"]
        if isinstance(names, list) and all(
            isinstance(n, str) and _ENV_NAME.fullmatch(n) for n in names
        ):
            extras["secret_names"] = tuple(names)
        else:
            errors.append(
                (
                    spots.table("secrets", "env"),
                    "[secrets]: `env` must be a list of environment variable names",
                )
            )
    return extras


def resolve_signers(
    path: Path, specs: list[RuleSpec], extras: dict[str, Any], spots: Spots, errors: Errors
) -> dict[str, str]:
    """Make every allowed_signers path absolute (relative ones are beside the policy file)
    and check each file. The rule ids that have signers of their own, mapped to their file."""
    base = path.resolve().parent
    where = spots.table("approval", "allowed_signers")
    if "allowed_signers" in extras:
        extras["allowed_signers"] = _signers_file(base, extras["allowed_signers"], where, errors)
    own: dict[str, str] = {}
    for index, spec in enumerate(specs):
        if spec.allowed_signers is not None:
            where = spots.rule(index, "allowed_signers")
            own[spec.id] = _signers_file(base, spec.allowed_signers, where, errors)
    return own


def _signers_file(base: Path, given: str, line: int, errors: Errors) -> str:
    """An allowed_signers file, absolute; a fault when it is missing or holds no signer."""
    resolved = Path(os.path.realpath(base / os.path.expanduser(given)))  # a loop: ELOOP below
    try:
        lines = read_regular(resolved, SIGNERS_MAX_BYTES).decode("utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as error:
        reason = getattr(error, "strerror", None) or str(error)
        errors.append((line, f"allowed_signers {given!r} cannot be read ({reason})"))
        return str(resolved)
    entries = [x for x in lines if x.strip() and not x.lstrip().startswith("#")]
    if not entries or any(len(x.split()) < 3 for x in entries):
        errors.append(
            (line, f"allowed_signers {given!r} holds no signer lines (PRINCIPALS KEYTYPE KEY)")
        )
    return str(resolved)


def _read_sandbox(value: object, spots: Spots, errors: Errors) -> dict[str, Any]:
    table = read_table("sandbox", value, SANDBOX_KEYS, spots, errors)
    extras: dict[str, Any] = {}
    if "writable" in table:
        grants = _read_grants(table["writable"])
        if grants is None:
            errors.append(
                (
                    spots.table("sandbox", "writable"),
                    "[sandbox]: `writable` must be a list of paths (for setup acts) or a table "
                    f"of lists by mutating act ({', '.join(GRANTABLE)})",
                )
            )
        else:
            extras["writable"] = grants
    if "hidden" in table:
        hidden = table["hidden"]
        if not isinstance(hidden, list) or not all(_a_path(item) for item in hidden):
            errors.append(
                (
                    spots.table("sandbox", "hidden"),
                    "[sandbox]: `hidden` must be a list of paths (~ and $VARIABLE expand); "
                    "it replaces the default list, and [] hides nothing",
                )
            )
        else:
            extras["hidden"] = tuple(hidden)
    if "require_confinement" in table:
        required = _read_required(table["require_confinement"])
        if required is None:
            errors.append(
                (
                    spots.table("sandbox", "require_confinement"),
                    "[sandbox]: `require_confinement` must be true, false or a list of "
                    f"guarantees ({', '.join(GUARANTEES)})",
                )
            )
        else:
            extras["require_confinement"] = required
    return extras


def _a_path(value: object) -> bool:
    return isinstance(value, str) and bool(value.strip()) and "\0" not in value


def _read_grants(value: object) -> dict[str, tuple[str, ...]] | None:
    if isinstance(value, list):
        value = {"setup": value}
    if not isinstance(value, dict) or any(act not in GRANTABLE for act in value):
        return None
    grants: dict[str, tuple[str, ...]] = {}
    for act, paths in value.items():
        if not isinstance(paths, list) or not all(_a_path(path) for path in paths):
            return None
        grants[act] = tuple(paths)
    return grants


def _read_required(value: object) -> tuple[str, ...] | None:
    if value is True:
        return tuple(GUARANTEES)
    if value is False:
        return ()
    if isinstance(value, list) and all(item in GUARANTEES for item in value):
        return tuple(str(item) for item in value)
    return None


def _read_hooks(value: object, spots: Spots, errors: Errors) -> tuple[Hook, ...]:
    if not isinstance(value, list) or not all(isinstance(item, dict) for item in value):
        errors.append((spots.top.get("hook", 1), "`hook` must be an array of tables: [[hook]]"))
        return ()
    hooks = []
    for index, raw in enumerate(value):
        hook = _read_hook(index, raw, spots, errors)
        if hook is not None:
            hooks.append(hook)
    return tuple(hooks)


def _read_hook(index: int, raw: dict[str, Any], spots: Spots, errors: Errors) -> Hook | None:
    before = len(errors)
    hook_id = raw.get("id", f"hook-{index + 1}")
    name = f"hook {hook_id!r}" if isinstance(hook_id, str) else f"hook #{index + 1}"
    for key in raw:
        if key not in HOOK_KEYS:
            errors.append(
                (
                    spots.hook(index, key),
                    f"{name}: unknown key {key!r} (a hook has {', '.join(HOOK_KEYS)})",
                )
            )
    if not isinstance(hook_id, str) or not hook_id:
        errors.append((spots.hook(index, "id"), f"{name}: `id` must be a string"))
    on = raw.get("on")
    events = [on] if isinstance(on, str) else on
    if not isinstance(events, list) or not events:
        errors.append((spots.hook(index, "on"), f"{name}: `on` names events: {', '.join(EVENTS)}"))
        events = []
    for event in events:
        if event not in EVENTS:
            errors.append(
                (
                    spots.hook(index, "on"),
                    f"{name}: unknown event {short_repr(event)} (the events are "
                    f"{', '.join(EVENTS)})",
                )
            )
    command, stderr = raw.get("command"), raw.get("stderr", False)
    if command is not None and (not isinstance(command, str) or not command.strip()):
        errors.append((spots.hook(index, "command"), f"{name}: `command` must be a shell command"))
    if not isinstance(stderr, bool):
        errors.append((spots.hook(index, "stderr"), f"{name}: `stderr` must be true or false"))
    elif command is None and not stderr:
        errors.append((spots.hook(index), f"{name}: give a `command`, or `stderr = true`, or both"))
    timeout = raw.get("timeout", 10.0)
    if not _positive_number(timeout) or timeout > MAX_TIMEOUT:
        errors.append(
            (
                spots.hook(index, "timeout"),
                f"{name}: `timeout` must be a number of seconds in (0, {MAX_TIMEOUT:g}]",
            )
        )
    if len(errors) > before:
        return None
    return Hook(str(hook_id), tuple(map(str, events)), command, bool(stderr), float(timeout))


def _positive_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and value > 0
