"""`epistemic policy check` and `epistemic policy explain`: is a policy file sound, and what would
it decide about a call. Exit 0 when it is (explain: whatever the decision); 1 when the policy has
faults (one `file:line: problem` per line on stderr); 2 when there is no policy to read."""

from __future__ import annotations

import argparse
import json
import posixpath
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ..core import UsageError
from .options import command_option, command_text, command_words, workspace_option

if TYPE_CHECKING:
    from typing import Any

    from ..policy import Policy

EXIT_FAULTS = 1
EXIT_NO_POLICY = 2


_WORKSPACE_HELP = "the workspace whose epistemic.toml is read (default: the current directory)"


def define_policy(group: argparse.ArgumentParser) -> None:
    group.description = "Policies decide, for each call, allow, deny or ask (see docs/policy.md)."
    inner = group.add_subparsers(dest="policy_command", required=True, metavar="SUBCOMMAND")
    p = inner.add_parser(
        "check",
        help="parse and type-check a policy and run its examples",
        description="Check a policy file (default: epistemic.toml in the workspace): TOML, every "
        "rule, CEL syntax and types, and the rules' examples. Prints each rule and `ok` (exit 0); "
        "else one `file:line: problem` per line on stderr (exit 1); exit 2 when there is no file.",
    )
    p.add_argument("file", nargs="?", metavar="FILE", help="the policy file")
    workspace_option(
        p, "the workspace whose epistemic.toml is read (default: the current directory)"
    )
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(handler=_cmd_check)
    p = inner.add_parser(
        "explain",
        help="which rule a call would hit, and its decision",
        description="Build the facts of one call as a session would (the command is classified "
        "statically) and print the rule it hits, its decision and message, or `default: "
        "DECISION`. For a file tool (--tool write_file...) the words are the path.",
    )
    source = p.add_mutually_exclusive_group()
    source.add_argument("--policy", metavar="FILE", help="the policy file")
    source.add_argument(
        "--preset", metavar="NAME", help="approve-mutating, approve-none, read-only"
    )
    workspace_option(
        p, "the workspace whose epistemic.toml is read (default: the current directory)"
    )
    p.add_argument("--type", dest="act", metavar="T", help="the act type (file tools: implied)")
    p.add_argument("--reason", default="", metavar="R", help="the call's reason")
    p.add_argument("--tool", default="bash", metavar="NAME", help="the tool (default: bash)")
    p.add_argument("--seq", type=int, default=1, metavar="N", help="the call's number (default 1)")
    p.add_argument(
        "--count",
        action="append",
        default=[],
        metavar="ACT=N",
        help="calls of an act so far (repeatable)",
    )
    p.add_argument("--reverts", type=int, default=0, metavar="N", help="reverts so far")
    p.add_argument("--rejections", type=int, default=0, metavar="N", help="rejections so far")
    p.add_argument(
        "--json", action="store_true", help='print {"rule","decision","message","facts"}'
    )
    command_option(p)
    p.set_defaults(handler=_cmd_explain)
    p = inner.add_parser(
        "trust",
        help="put a policy in force that an act could have written, after you read it",
        description="A session refuses a policy file, or a file it names (allowed_signers, a "
        "supervisor's verdict script), that a call of the workspace's record wrote or was "
        "running when it changed. After reading it, put it in force: the policy is checked "
        "(as `policy check` does), then its bytes and those of every file it names are "
        "recorded in the trust store ($XDG_STATE_HOME/epistemic/trusted, which no act can "
        "write). A file changed since is checked again. Exit 0; 1 when the policy has faults; "
        "2 when there is no policy or the trust store cannot be written.",
    )
    p.add_argument("file", nargs="?", metavar="FILE", help="the policy file")
    workspace_option(p, _WORKSPACE_HELP)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(handler=_cmd_trust)


def _policy_path(file: str | None, directory: str) -> Path | None:
    from ..core import POLICY_NAME
    from ..policy import find_policy

    if file is not None:
        path = Path(file)
        if path.is_symlink() or (path.exists() and not path.is_dir()):
            return path  # reading it says what it is, if not a policy
        problem = "is a directory" if path.is_dir() else "does not exist"
        print(f"epistemic: policy file {file} {problem}", file=sys.stderr)
        return None
    found = find_policy(Path(directory))
    if found is None:
        where = Path(directory) / POLICY_NAME
        print(
            f"epistemic: no policy: {where} does not exist (give a FILE, or -C DIR)",
            file=sys.stderr,
        )
    return found


def _load(path: Path, as_json: bool) -> Policy | None:
    from ..policy import PolicyError, load_policy

    try:
        return load_policy(path)
    except PolicyError as error:
        if as_json:
            print(json.dumps({"ok": False, "source": str(path), "errors": error.errors}))
        for line in error.errors:
            print(line, file=sys.stderr)
        return None


def _cmd_check(args: argparse.Namespace) -> int:
    path = _policy_path(args.file, args.directory)
    if path is None:
        return EXIT_NO_POLICY
    policy = _load(path, args.json)
    if policy is None:
        return EXIT_FAULTS
    unsigned = _unsigned(policy)
    if args.json:
        rules = [
            {
                "id": r.id,
                "decision": r.decision,
                "message": r.message,
                "when": r.when,
                "line": r.line,
                "examples": r.examples,
            }
            for r in policy.rules
        ]
        report = {"ok": unsigned is None, "source": policy.source, "sha256": policy.sha256}
        if unsigned is not None:
            report["errors"] = [unsigned]
        print(json.dumps({**report, "default": policy.default, "rules": rules}, ensure_ascii=False))
        return 0 if unsigned is None else EXIT_FAULTS
    print(f"{policy.source}: {len(policy.rules)} rule(s), sha256 {policy.sha256}")
    width = max((len(rule.id) for rule in policy.rules), default=0)
    for rule in policy.rules:
        when = " ".join(rule.when.split())
        when = when if len(when) <= 70 else when[:67] + "..."
        checked = f"  [{rule.examples} example(s)]" if rule.examples else ""
        print(f"  {rule.id:<{width}}  {rule.decision:<5}  {when}{checked}")
    print(f"  default: {policy.default}")
    if unsigned is not None:
        print(f"epistemic: {unsigned}", file=sys.stderr)
        return EXIT_FAULTS
    print("ok")
    return 0


def _unsigned(policy: Any) -> str | None:
    """The fault of a policy that asks humans but names nobody who may approve."""
    from ..policy import PolicyError

    try:
        policy.check_signers()
    except PolicyError as error:
        return str(error)
    return None


def _cmd_explain(args: argparse.Namespace) -> int:
    from ..policy import PolicyError, complete_facts, preset

    if args.preset is not None:
        try:
            policy: Policy | None = preset(args.preset)
        except PolicyError as error:
            raise UsageError(str(error)) from None
    else:
        path = _policy_path(args.policy, args.directory)
        if path is None:
            return EXIT_NO_POLICY
        policy = _load(path, args.json)
    if policy is None:
        return EXIT_FAULTS
    facts = complete_facts(_call_facts(args))
    decision = policy.decide(facts)
    if args.json:
        result = {"rule": decision.rule, "decision": decision.decision, "message": decision.message}
        print(json.dumps({**result, "facts": facts}, ensure_ascii=False))
        return 0
    if decision.rule is None:
        print(f"default: {decision.decision}")
    else:
        line = next((r.line for r in policy.rules if r.id == decision.rule), 0)
        where = f" ({policy.source}:{line})" if line else f" ({policy.source})"
        print(f"rule {decision.rule}{where}: {decision.decision}")
    print(f"message: {decision.message}")
    return 0


def _call_facts(args: argparse.Namespace) -> dict[str, Any]:
    """The given facts of the call; complete_facts derives the rest as a session would."""
    from ..core import ACT_NAMES, FILE_TOOL_ACTS, TOOL_NAMES, normalise_act

    words = command_words(args.words)
    if args.tool not in TOOL_NAMES:
        raise UsageError(f"unknown tool {args.tool!r}; the tools are {', '.join(TOOL_NAMES)}")
    act = normalise_act(args.act) if args.act is not None else FILE_TOOL_ACTS.get(args.tool)
    if act is None:
        raise UsageError("--type is required for bash (see `epistemic types`)")
    if act not in ACT_NAMES:
        raise UsageError(f"--type must be one of {', '.join(ACT_NAMES)}; got {args.act!r}")
    if args.tool in FILE_TOOL_ACTS and act != FILE_TOOL_ACTS[args.tool]:
        raise UsageError(f"{args.tool} is always {FILE_TOOL_ACTS[args.tool]}")
    if not words:
        raise UsageError("give the command (or, for a file tool, the path) after --")
    facts: dict[str, Any] = {"tool": args.tool, "act": act, "reason": args.reason}
    facts.update(seq=args.seq, reverts=args.reverts, rejections=args.rejections)
    facts["counts"] = _counts(args.count, ACT_NAMES)
    if args.tool == "bash":
        facts["command"] = command_text(words)
        return facts
    if len(words) != 1:
        raise UsageError(f"{args.tool} takes one path")
    facts["command"] = f"{args.tool} {words[0]}"
    facts["paths"] = [posixpath.normpath(words[0])] if args.tool != "read_file" else []
    return facts


def _counts(given: list[str], acts: tuple[str, ...]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for item in given:
        act, _, number = item.partition("=")
        if act not in acts or not number.isdigit():
            raise UsageError(f"--count takes ACT=N with an act of {', '.join(acts)}; got {item!r}")
        counts[act] = int(number)
    return counts


def _cmd_trust(args: argparse.Namespace) -> int:
    from ..policy import TrustError, trust_folder
    from ..policy import trust_file as trust

    path = _policy_path(args.file, args.directory)
    if path is None:
        return EXIT_NO_POLICY
    policy = _load(path, args.json)
    if policy is None:
        return EXIT_FAULTS
    folder = trust_folder()
    if folder is None:
        raise UsageError("the trust store ($XDG_STATE_HOME/epistemic/trusted) cannot be made")
    files = [path, *(Path(named) for named in policy.signer_files())]
    model = policy.supervisor.model if policy.supervisor is not None else None
    if model is not None and model.startswith("replay:"):  # a verdict script
        files.append(Path(model.removeprefix("replay:")))
    try:
        entries = [trust(file, folder) for file in files]
    except TrustError as error:
        raise UsageError(f"cannot trust the policy: {error.strerror or error}") from None
    if args.json:
        print(json.dumps({"ok": True, "trusted": [entry.to_json() for entry in entries]}))
        return 0
    for entry in entries:
        print(f"trusted {entry.path} (sha256 {entry.sha256[:12]}), by {entry.by}")
    return 0
