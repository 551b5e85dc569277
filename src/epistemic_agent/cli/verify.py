"""`epistemic verify` (a journal with its evidence and seals, or an audit bundle) and
`epistemic seal`: the record proving itself (docs/security.md, docs/journal-format.md)."""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ..core import UsageError, visible
from .choice import reading
from .options import session_choice, session_option

if TYPE_CHECKING:
    from ..journal import Options, Verification

HEX64 = re.compile(r"[0-9a-f]{64}")
SHOWN = 50  # problems printed in text (--json lists them all)


def define_verify(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Check the hash chain, the head anchor, every evidence blob the journal "
        "references (and that the evidence folder holds nothing else), the seals in the "
        "session's seals/ folder and the signed approvals (of a workspace of several "
        "sessions: the newest, said on stderr, or the one --session names). Exit 0 when "
        "intact, 1 when tampered, 3 when the last line is torn (a crash mid-write), 4 when "
        "--allowed-signers asks for a seal and there is none (unsealed: nothing was found "
        "changed, but no signature vouches for the head), 2 when there is no journal or an "
        "option is malformed."
    )
    p.add_argument("dir", nargs="?", default=".", metavar="DIR|JOURNAL|BUNDLE.zip")
    session_option(p)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument(
        "--expect-head",
        metavar="HASH",
        help="a head hash kept elsewhere (a CI log, a change request): it must be the hash of "
        "a line of the journal that verifies, else the journal was rewritten",
    )
    p.add_argument(
        "--allowed-signers",
        metavar="FILE",
        help="an ssh-keygen allowed_signers file: a seal signed by a key it allows (namespace "
        "epistemic) must vouch for the journal, and every signed approval must be by the "
        "principal its record names",
    )
    p.add_argument("--identity", metavar="ID", help="with --allowed-signers: the signer to expect")
    p.add_argument(
        "--seal-optional",
        action="store_true",
        help="with --allowed-signers: a journal nobody sealed passes (its approvals and any "
        "seals found are still checked; a note says no seal vouches for it)",
    )
    p.add_argument(
        "--salvage",
        action="store_true",
        help="when the journal is damaged: move it, its evidence and seals to "
        ".epistemic/damaged/TIME/ with a note, and start a new journal after its last good line",
    )
    p.set_defaults(handler=_cmd_verify)


def define_seal(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Verify the record, then sign a statement of its head (session, line "
        "count, head hash, time, key fingerprint) with `ssh-keygen -Y sign -n epistemic` into "
        ".epistemic/seals/. The key: --key, else the first key in ssh-agent, else "
        "~/.ssh/id_ed25519. Exit 0 when sealed, 1 when the record does not verify, 2 on bad "
        "input (no key, no ssh-keygen, a workspace of several sessions without --session)."
    )
    p.add_argument("dir", nargs="?", default=".", metavar="DIR")
    p.add_argument(
        "--session",
        metavar="ID",
        help="the session to seal (its id or a unique prefix): needed when the workspace has "
        "several (`epistemic sessions` lists them)",
    )
    p.add_argument(
        "--key",
        metavar="SSH_KEY",
        help="a private key file, or a public key whose private half ssh-agent holds",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(handler=_cmd_seal)


def options_of(args: argparse.Namespace) -> Options:
    """--expect-head, --allowed-signers and --identity, checked (UsageError when malformed)."""
    from ..journal import Options

    head = getattr(args, "expect_head", None)
    if head is not None:
        head = head.strip().lower()
        if not HEX64.fullmatch(head):
            raise UsageError(
                f"--expect-head {args.expect_head!r}: not a SHA-256 hash (64 hex digits)"
            )
    allowed = getattr(args, "allowed_signers", None)
    identity = getattr(args, "identity", None)
    optional = bool(getattr(args, "seal_optional", False))
    if identity is not None and allowed is None:
        raise UsageError("--identity needs --allowed-signers FILE")
    if optional and allowed is None:
        raise UsageError("--seal-optional goes with --allowed-signers FILE")
    if identity is not None and not identity.strip():
        raise UsageError("--identity is empty")
    if allowed is not None:
        from ..core import SealError
        from ..core import ssh_keygen as keygen

        if not Path(allowed).is_file():
            raise UsageError(f"--allowed-signers {allowed}: no such file")
        try:
            keygen()
        except SealError as error:
            raise UsageError(f"--allowed-signers needs ssh-keygen: {error}") from None
    return Options(head, Path(allowed) if allowed else None, identity, optional)


def _cmd_verify(args: argparse.Namespace) -> int:
    is_bundle = args.dir.endswith(".zip") and not Path(args.dir).is_dir()
    if is_bundle and args.session is not None:
        raise UsageError("--session picks a session of a workspace, not of a bundle")
    if args.salvage:
        if (
            is_bundle
            or args.expect_head
            or args.allowed_signers
            or args.identity
            or args.seal_optional
        ):
            raise UsageError("--salvage works on a workspace's journal alone, without options")
        return _cmd_salvage(args)
    options = options_of(args)
    if is_bundle:  # an audit bundle (export)
        from ..reports import verify_bundle

        return verify_bundle(Path(args.dir), args.json, options)
    from ..journal import check_record

    journal = journal_path(args.dir, reading(args.dir, session_choice(args)))
    anchor = journal.parent / "head.json" if journal.name == "journal.jsonl" else None
    result = check_record(journal, anchor, options)
    if args.json:
        print(json.dumps(result.to_json(), ensure_ascii=False))
        return result.exit_code
    lines = verdict_lines(result, args.dir, session_choice(args))
    print("\n".join(visible(line) for line in lines))
    return result.exit_code


def journal_path(target: str, session: str | None = None) -> Path:
    """The journal DIR names: a journal file itself, else the workspace's newest session's,
    or the one `session` names (an id or a unique prefix)."""
    from ..journal import find_layout

    if session == "new":
        raise UsageError("--session new: a new session has no record yet; give an id")
    path = Path(target)
    journal = path if path.is_file() and session is None else find_layout(path, session).journal
    if not journal.is_file():
        raise UsageError(f"no journal at {journal}")
    return journal


def verdict_lines(result: Verification, target: str, session: str | None = None) -> list[str]:
    """`intact: ...` or `TAMPERED: ...` and `also: ...`, what still verifies, the notes."""
    if result.status == "intact":
        lines = [f"intact: {result.lines} line(s), head {result.head}"]
    else:
        problems = result.problems
        lines = [f"{result.status.upper()}: {problems[0].message}"]
        lines += [f"also: {problem.message}" for problem in problems[1:SHOWN]]
        if len(problems) > SHOWN:
            lines.append(f"also: {len(problems) - SHOWN} more problem(s); --json lists them all")
    if result.damaged:
        good = f"lines 1-{result.good}" if result.good else "no line"
        lines.append(
            f"verified: {good} (head {result.good_head}); the journal breaks at line "
            f"{result.good + 1}"
        )
        if _a_workspace_journal(target):
            chosen = f" --session {session}" if session else ""
            lines.append(
                f"to continue after line {result.good}: epistemic verify --salvage {target}"
                f"{chosen} "
                "(keeps the damaged journal and its evidence under .epistemic/damaged/)"
            )
    return lines + [f"note: {note}" for note in result.notes]


def _a_workspace_journal(target: str) -> bool:
    """Whether `target` names a workspace's own journal (what --salvage works on), not a copy
    of a journal kept somewhere else."""
    from ..journal import find_layout

    path = Path(target)
    journal = path if path.is_file() else find_layout(path).journal
    return find_layout(journal).journal == journal.resolve() and journal.name == "journal.jsonl"


def _cmd_salvage(args: argparse.Namespace) -> int:
    from ..journal import find_layout
    from ..session import salvage_record as salvage

    journal = journal_path(args.dir, session_choice(args))
    layout = find_layout(journal)
    if layout.journal != journal.resolve():
        raise UsageError(f"{journal}: --salvage needs a workspace's .epistemic/journal.jsonl")
    if not layout.legacy:  # salvage.py moves the files of `.epistemic/` itself
        raise UsageError(
            f"{journal}: --salvage continues only a workspace's first session "
            "(.epistemic/journal.jsonl); a later session's folder can be verified and copied, "
            "and `--session new` starts a fresh one"
        )
    done = salvage(layout)
    found = done.verification
    moved = str(done.folder.relative_to(layout.workspace)) if done.folder else None
    if args.json:
        data = {
            "status": "salvaged" if moved else "nothing-to-salvage",
            "reason": done.reason or None,
            "moved_to": moved,
            "verified": {"lines": found.good, "head": found.good_head},
            "journal": str(layout.journal),
            "verification": found.to_json(),
        }
        print(json.dumps(data, ensure_ascii=False))
        return 0
    if moved is None:
        print(visible(f"{done.reason}"))
        return 0
    good = f"lines 1-{found.good}" if found.good else "no line"
    shown = [
        f"salvaged: {found.problem}",
        f"kept: the damaged journal, its head anchor, evidence, seals and report pages, as "
        f"they were, in {moved}/ (NOTE.md says what was found)",
        f"verified: {good} of it (head {found.good_head})",
        f"new journal: {layout.journal}: its header names {moved}/journal.jsonl and that line "
        "count and head; later commands append to it",
    ]
    print("\n".join(visible(line) for line in shown))
    return 0


def _cmd_seal(args: argparse.Namespace) -> int:
    from ..core import SealError
    from ..journal import NotSealed
    from ..journal import seal_record as seal

    journal = journal_path(args.dir, reading(args.dir, session_choice(args), strict=True))
    try:
        done = seal(journal.resolve(), args.key)
    except SealError as error:
        raise UsageError(str(error)) from None
    except NotSealed as refused:
        for line in verdict_lines(refused.verification, args.dir, session_choice(args)):
            print(visible(line), file=sys.stderr)
        print("epistemic: the record does not verify: nothing was sealed", file=sys.stderr)
        return 1
    signature = done.path.with_name(done.path.name + ".sig")
    statement = done.statement
    if args.json:
        data = {"statement": str(done.path), "signature": str(signature), "key": done.key}
        print(json.dumps({**data, **statement.to_json()}, ensure_ascii=False))
        return 0
    shown = [
        f"sealed: line {statement.lines}, head {statement.head}, signed by {statement.signer} "
        f"({done.key})",
        f"statement: {done.path}",
        f"signature: {signature}",
        "check it without epistemic: ssh-keygen -Y verify -f allowed_signers -I IDENTITY "
        f"-n epistemic -s {signature} < {done.path}",
    ]
    print("\n".join(visible(line) for line in shown))
    return 0
