"""`epistemic pending`, `approve` and `deny`: answer a session's approval requests from
another terminal (the file channel; see approval.py)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ..core import UsageError
from .options import session_choice, workspace_option

if TYPE_CHECKING:
    from ..approvals import Place

#: The exit status of `approve` and `deny` for each outcome (approvals/answer.py).
EXIT_ANSWER = {"accepted": 0, "closed": 1, "refused": 3, "absent": 4, "unheard": 5}
DEFAULT_WAIT = 10.0
MAX_WAIT = 86400


def define_pending(p: argparse.ArgumentParser) -> None:
    p.description = (
        "The approval requests open in a workspace, session by session (oldest "
        "first), each with the session it waits in."
    )
    workspace_option(p)
    _session_option(p, "list only this session's requests")
    p.add_argument("--json", action="store_true", help="print a JSON array")
    p.set_defaults(handler=_cmd_pending)


def define_approve(p: argparse.ArgumentParser) -> None:
    _define_answer(p, "approved")


def define_deny(p: argparse.ArgumentParser) -> None:
    _define_answer(p, "denied")


def _define_answer(p: argparse.ArgumentParser, verb: str) -> None:
    p.description = (
        f"Answer the open request for call SEQ: {verb}. The answer is signed "
        "with your SSH key (--key FILE, else the first key ssh-agent holds, else "
        "~/.ssh/id_ed25519; `ssh-keygen -Y sign`, namespace epistemic-approval), and the "
        "session checks it against the policy's allowed_signers before the call runs: "
        "the journal records the signer's identity from that file, the key, the signature "
        "and the comment. It then waits (--wait) for the session's verdict in the "
        "journal and prints it. Exit 0 when the session took the answer (the journal's "
        "approval record); 1 when the request was answered already, timed out or was "
        "withdrawn; 2 on a usage error, or when call SEQ waits in several sessions and "
        "--session does not say which; 3 when the answer does not count (the session "
        "refused it: unsigned where signatures are required, an unknown signer, a name "
        "that is not the key's; or it could not be signed); 4 when no request for call "
        "SEQ was opened, or the session that asked is gone; 5 when the session recorded "
        "no verdict within --wait seconds (it may still take the answer)."
    )
    p.add_argument("seq", type=int, metavar="SEQ", help="the call's number")
    workspace_option(p)
    _session_option(p, "the session whose call SEQ to answer (default: the one session "
                    "where a request for call SEQ waits)")  # fmt: skip
    p.add_argument(
        "--as",
        dest="name",
        metavar="NAME",
        help="who answers: must be a principal of your key in allowed_signers (unsigned: "
        "recorded as claimed)",
    )
    p.add_argument("--comment", default="", metavar="TEXT", help="why (the model sees it)")
    p.add_argument("--key", metavar="FILE", help="the SSH key to sign with")
    p.add_argument(
        "--unsigned",
        action="store_true",
        help="answer without a signature (counts only where the policy says "
        'signatures = "optional")',
    )
    p.add_argument(
        "--wait",
        type=float,
        default=DEFAULT_WAIT,
        metavar="S",
        help=f"seconds to wait for the session's verdict (default {DEFAULT_WAIT:g})",
    )
    p.set_defaults(handler=_cmd_answer, decision=verb)


def _session_option(parser: argparse.ArgumentParser, help: str) -> None:
    parser.add_argument("--session", metavar="ID", help=f"{help}: its id or a unique prefix")


def _places(args: argparse.Namespace) -> list[Place]:
    from ..approvals import places

    directory = Path(args.directory)
    if not directory.is_dir():
        raise UsageError(f"workspace {directory} is not a directory")
    chosen = session_choice(args)
    if chosen == "new":
        raise UsageError("--session new: a new session has nothing waiting; give an id")
    return places(directory, chosen)


def _cmd_pending(args: argparse.Namespace) -> int:
    from ..approvals import waiting
    from ..core import visible

    requests = waiting(_places(args))
    if args.json:
        print(json.dumps(requests, ensure_ascii=False, indent=1))
        return 0
    if not requests:
        print("no call is waiting for approval")
        return 0
    for item in requests:
        state = "" if item.get("waiting") else "  (the asking process is gone)"
        rule = visible(str(item.get("rule") or "default"))
        print(f"call {item['seq']}: {visible(str(item.get('act')))} · rule {rule}{state}")
        print(f"  session  {visible(str(item['session_id']))}")
        print(f"  reason   {visible(' '.join(str(item.get('reason', '')).split()))}")
        print(f"  command  {visible(str(item.get('command')))}")
        paths = item.get("paths") or []
        if paths:
            print(f"  writes   {visible(', '.join(map(str, paths)))}")
        asked = f"{item.get('requested')} ({item.get('message')})"
        print(f"  asked    {visible(asked)}")
        if item.get("signatures") == "required":
            print("  answer   signed: epistemic approve|deny SEQ [--session ID] [--key FILE]")
    return 0


def _cmd_answer(args: argparse.Namespace) -> int:
    from ..approvals import ABSENT, Given, folder_for, give, verdict

    if args.seq <= 0:
        raise UsageError("SEQ is a call number: 1 or more")
    if not 0 <= args.wait <= MAX_WAIT:
        raise UsageError(f"--wait {args.wait:g}: give 0 to {MAX_WAIT} seconds")
    found = _places(args)
    folder = folder_for(found, args.seq)
    if folder is None:
        single = len(found) == 1 and found[0].session
        where = f"session {found[0].session}" if single else "this workspace"
        print(
            f"epistemic: no request for call {args.seq} was ever opened in {where} "
            "(see `epistemic pending`)",
            file=sys.stderr,
        )
        return EXIT_ANSWER[ABSENT]
    given = give(folder, args.seq, args.decision, args.name, args.comment, args.key, args.unsigned)
    if isinstance(given, Given):
        if given.note is not None:
            print(f"epistemic: {given.note}", file=sys.stderr)
        outcome = verdict(given, args.wait)
    else:
        outcome = given
    status = EXIT_ANSWER[outcome.kind]
    print(outcome.message if status == 0 else f"epistemic: {outcome.message}",
          file=sys.stdout if status == 0 else sys.stderr)  # fmt: skip
    return status
