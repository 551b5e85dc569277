"""`epistemic classify` and `epistemic doctor`: what the gate thinks of a command, and what this
machine can enforce."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

from ..core import UsageError
from .options import command_option, command_text, command_words, workspace_option

if TYPE_CHECKING:
    from typing import Any


def define_classify(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Classify a shell command from its parse (tree-sitter-bash): read-only, "
        "mutating (with the paths it writes or deletes) or unknown, and why. With --batch, read "
        "JSON Lines from stdin (each a JSON string holding one command) and write one JSON "
        "object per line. Exit 0; 2 on bad input."
    )
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--batch", action="store_true", help="JSON Lines in, JSON Lines out")
    command_option(p)
    p.set_defaults(handler=_cmd_classify)


def define_doctor(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Try each confinement guarantee on this machine as an attacker would: "
        "confined acts in a throwaway workspace (under the system's temp dir, removed after) "
        "try to write, move aside and rebuild the record and the tool's installation, read "
        "hidden files, write outside what their act allows, signal this process. A guarantee "
        "is held only when every trial of it failed. Then list what of the tool as installed "
        "now, and of the workspace's policy, this machine cannot keep out of the agents' "
        "reach, with what to do instead. Exit 0; 2 on bad input."
    )
    p.add_argument("--json", action="store_true", help="print one JSON object")
    workspace_option(p, "the workspace to check observation for (default: .)")
    p.set_defaults(handler=_cmd_doctor)


def _cmd_classify(args: argparse.Namespace) -> int:
    from ..effects import classify_command as classify

    if args.batch:
        return _classify_batch(classify)
    words = command_words(args.words)
    if not words:
        raise UsageError("give a command after --, or use --batch")
    command = command_text(words)
    effect = classify(command)
    if args.json:
        print(json.dumps({"command": command, **effect.to_json()}, ensure_ascii=False))
        return 0
    print(effect.cls)
    for path in effect.to_json()["paths"]:
        print(f"path: {path}")
    if effect.dynamic:
        print("path: (some paths are only known at run time)")
    for reason in effect.reasons:
        print(f"reason: {reason}")
    return 0


def _classify_batch(classify: Any) -> int:
    bad = 0
    for number, line in enumerate(sys.stdin, start=1):
        if not line.strip():
            continue
        try:
            command = json.loads(line)
        except ValueError as error:
            command = error
        if not isinstance(command, str):
            bad += 1
            print(
                f"epistemic: line {number} is not a JSON string holding a command", file=sys.stderr
            )
            print(json.dumps({"line": number, "error": "not a JSON string"}), flush=True)
            continue
        result = {"command": command, **classify(command).to_json()}
        print(json.dumps(result, ensure_ascii=False), flush=True)
    return 2 if bad else 0


def _cmd_doctor(args: argparse.Namespace) -> int:
    import time
    from pathlib import Path

    from ..execute import best_observer, detect, layouts, probe, prove, verdicts
    from ..policy import PolicyError
    from ..session import workspace_policy

    workspace = Path(args.directory).resolve()
    if not workspace.is_dir():
        raise UsageError(f"workspace {workspace} is not a directory")
    started = time.monotonic()
    platform = detect(probe_bwrap=True)
    try:
        policy = workspace_policy(workspace)
        writable, files = policy.writable, _record_files(policy)
    except PolicyError as error:
        print(f"epistemic: the workspace's policy does not load: {error}", file=sys.stderr)
        writable, files = None, ()
    confinement = probe(platform, workspace, writable)
    exposed = layouts(confinement, files)
    try:
        trials = prove(platform)
    except OSError as error:  # no temp dir to try in: nothing is proved
        raise UsageError(f"cannot lay out the trials under the temp dir: {error}") from None
    not_held = _not_held(verdicts(trials), exposed)
    seconds = round(time.monotonic() - started, 2)
    observer = best_observer(workspace)
    if args.json:
        print(json.dumps(_doctor_json(platform, trials, not_held, exposed, seconds, observer,
                                      workspace)))  # fmt: skip
        return 0
    for line in _confinement_lines(confinement, not_held):
        print(line)
    count = sum(len(done) for done in trials.values())
    print(f"  tried here: {count} confined acts tried to break them, in {seconds:.2f} s "
          "(--json lists each trial)")  # fmt: skip
    print(_layout_lines(exposed))
    note = (
        "fanotify: precise, cheap"
        if observer.method == "fanotify"
        else ("a stat snapshot of the workspace before and after each call (slower on big trees)")
    )
    print(f"observation of what each call changed: {observer.method} ({note})")
    return 0


def _record_files(policy: Any) -> tuple[str, ...]:
    """The policy file and the allowed_signers files it names, as the policy names them."""
    files = [] if policy.source.startswith("preset:") else [policy.source]
    return (*files, *policy.signer_files())


def _not_held(broken: dict[str, str], exposed: list[Any]) -> dict[str, str]:
    """What a trial broke here, and what the workspace's layout leaves exposed (the tool, the
    policy): the first found of each guarantee."""
    found = dict(broken)
    for exposure in exposed:
        found.setdefault(exposure.guarantee, exposure.line())
    return found


def _doctor_json(
    platform: Any,
    trials: dict[str, list[Any]],
    not_held: dict[str, str],
    exposed: list[Any],
    seconds: float,
    observer: Any,
    workspace: Any,
) -> dict[str, Any]:
    from ..core import GUARANTEES

    guarantees = {
        key: {
            "held": key not in not_held,
            "why": not_held.get(key),
            "trials": [trial.to_json() for trial in trials.get(key, [])],
        }
        for key in GUARANTEES
    }
    confinement = {
        **platform.to_json(),
        "guarantees": guarantees,
        "unprotectable": [exposure.to_json() for exposure in exposed],
        "seconds": seconds,
    }
    return {
        "confinement": confinement,
        "enforcement": _enforcement_json(platform),
        "observation": {"method": observer.method, "workspace": str(workspace)},
    }


def _layout_lines(exposed: list[Any]) -> str:
    if not exposed:
        return "layouts it cannot protect here (the tool as installed, the policy): none"
    lines = ["layouts it cannot protect here (the tool as installed, the policy):"]
    for exposure in exposed:
        lines.append(f"  {exposure.path}: {exposure.why}")
        lines.append(f"    instead: {exposure.instead}")
    return "\n".join(lines)


def _confinement_lines(confinement: Any, not_held: dict[str, str]) -> list[str]:
    from ..core import GUARANTEES

    platform = confinement.platform
    landlock = (
        f"ABI {platform.landlock_abi}"
        if platform.landlock_abi is not None
        else f"unavailable ({platform.landlock_error})"
    )
    namespaces = platform.namespaces or f"unavailable ({platform.namespaces_error})"
    bwrap = platform.bwrap or "-"
    if platform.bwrap_error:
        bwrap += f" ({platform.bwrap_error})"
    lines = [
        f"confinement of every act: {confinement.mechanism}",
        f"  landlock: {landlock}",
        f"  namespaces: {namespaces}",
        f"  bwrap: {bwrap}",
    ]
    for key, meaning in GUARANTEES.items():
        if key in not_held:
            lines.append(f"  NOT HELD  {key}: {not_held[key]}")
        else:
            lines.append(f"  held      {key}: {meaning}")
    return lines


def _enforcement_json(platform: Any) -> dict[str, Any]:
    """The read-only workspace of observation acts, as `doctor --json` always reported it."""
    mechanism = platform.mechanism()
    best = "none" if mechanism == "none" else ("bwrap" if mechanism == "bwrap" else "landlock")
    return {
        "best": best,
        "landlock_abi": platform.landlock_abi,
        "landlock_error": platform.landlock_error,
        "bwrap": platform.bwrap,
        "bwrap_error": platform.bwrap_error,
    }
