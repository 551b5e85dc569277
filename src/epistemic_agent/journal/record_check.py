"""The whole record checked at once: the journal's chain and head anchor (verify.py), every
evidence blob (evidence_check.py), the seals (seal.py), a head hash kept elsewhere
(`--expect-head`), and the damaged journal a salvaged one continues (salvage.py).

What each anchor defends against is in docs/security.md ("The record's anchors").
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

from ..core import JOURNAL_NAME, field, struct, workspace_of
from .approval_check import CALL_SEQ, Approvals, check_approvals
from .evidence_check import Listing, Ref, check_evidence, list_store, refs_of
from .log import GENESIS, decode
from .reading import read_numbered
from .seal import Against, SealFile, judge_seals, read_seals
from .verify import TAMPERED, Problem, Verification, verify_journal

if TYPE_CHECKING:
    from typing import Any

HEX64 = re.compile(r"[0-9a-f]{64}")
UNEXPECTED, SALVAGE = "head-unexpected", "salvage-mismatch"
#: Every problem id `verify` reports (`problems[].check`; lint's `integrity/ID` findings).
PROBLEMS = {
    "chain-broken": "a line was edited, inserted, deleted or reordered, or is not an entry",
    "journal-truncated": "the journal is shorter than its head anchor records",
    "anchor-mismatch": "the line the head anchor records changed after it was written",
    UNEXPECTED: "the head hash given with --expect-head is no line of the journal",
    "evidence-missing": "an evidence blob the journal references is not there",
    "evidence-altered": "an evidence blob is not what the record says (content, size, a link)",
    "evidence-extra": "a file in the evidence folder that no record references",
    "seal-invalid": "a seal that is not one, has no signature, or whose signature is bad",
    "seal-mismatch": "a seal of another session, or of a line that hashes otherwise now",
    "seal-untrusted": "a seal signed by a key the allowed-signers file does not allow",
    "seal-missing": "--allowed-signers (without --seal-optional), and no seal to check: the "
    "journal is unsealed (exit 4), which is not tampering",
    SALVAGE: "the damaged journal a salvaged one continues no longer verifies as recorded",
    "approval-mismatch": "a signed approval whose statement is not its record's (another "
    "session, call, decision, time or comment): copied, or edited",
    "approval-untrusted": "with --allowed-signers: a signed approval whose signature is not "
    "good, or not by the principal its record names",
    "record-linked": "the journal or its head anchor has another hard link: it can be written "
    "through another name",
}


@struct
class Options:
    """What the caller asks for beyond the record itself."""

    expect_head: str | None = None
    allowed: Path | None = None
    identity: str | None = None
    seal_optional: bool = False  # with `allowed`: a journal nobody sealed may pass

    @property
    def seal_required(self) -> bool:
        """Whether a journal without a seal fails: `--allowed-signers` asks for a signed head
        (the defence against a rewriter who deletes the seals), unless `--seal-optional`."""
        return self.allowed is not None and not self.seal_optional


@struct(frozen=False)
class _Walk:
    """Collects, while the chain is walked, what the other checks need; a line is parsed only
    when it is the header or holds an evidence ref (verify's throughput is the hash's)."""

    wanted: set[int]
    expect: str | None
    header: dict[str, Any] = field(default_factory=dict)
    refs: list[Ref] = field(default_factory=list)
    hashes: dict[int, str] = field(default_factory=dict)
    expected_at: int | None = None
    calls: int = 0
    outcomes: int = 0
    approvals: Approvals = field(default_factory=Approvals)

    def take(self, line: int, body: bytes, digest: str) -> None:
        if line == 1:
            record = decode(body)
            self.header = record if record and record.get("kind") == "session" else {}
        if b'"sha256"' in body:  # no string can hold it unescaped: only a ref or a policy
            record = decode(body)
            self.refs.extend(refs_of(record, line) if record is not None else ())
        if line in self.wanted:
            self.hashes[line] = digest
        if digest == self.expect and self.expected_at is None:
            self.expected_at = line
        if body.find(CALL, 73, 128) >= 0:
            self.calls += 1
            seq = CALL_SEQ.search(body, 73, 160)
            if seq is not None:
                self.approvals.calls[int(seq.group(1))] = digest
        self.outcomes += body.find(OUTCOME, 73, 128) >= 0
        if body.find(APPROVAL, 73, 128) >= 0 and b'"signed":true' in body:
            record = decode(body)
            if record is not None and record.get("signed") is True:
                self.approvals.signed.append((line, record))


CALL, OUTCOME, APPROVAL = b'"kind":"call"', b'"kind":"outcome"', b'"kind":"approval"'


def record_folder(journal: Path) -> Path | None:
    """The folder holding the journal's evidence and seals: the record folder it sits in (a
    workspace's `.epistemic/`, a session's folder, or a copy of one that holds evidence)."""
    folder = journal.parent
    if journal.name == JOURNAL_NAME and (
        workspace_of(folder) is not None or (folder / "evidence").is_dir()
    ):
        return folder
    return None


def check_record(
    journal: Path,
    anchor: Path | None = None,
    options: Options | None = None,
    *,
    record: Path | None = None,
    listing: Listing | None = None,
    evidence: bool = True,
) -> Verification:
    """Verify everything; the record folder is found beside the journal unless given. A
    `listing` made earlier (export takes one with its snapshot) replaces listing the folder."""
    options = options or Options()
    record = record or record_folder(journal)
    if evidence and listing is None and record is not None:
        listing = list_store(record / "evidence")  # before the journal: see evidence_check
    seals = read_seals(record / "seals") if record is not None else []
    wanted = {seal.statement.lines for seal in seals if seal.statement is not None}
    walk = _Walk(wanted, options.expect_head)
    result = verify_journal(journal, anchor, walk.take)
    _links(result, journal, anchor)
    if options.expect_head is not None:
        _expected(result, walk, options.expect_head)
    missing = _seals(result, walk, seals, options)
    _approvals(result, walk, options)
    if not evidence:
        pass
    elif listing is None:
        result.extra["evidence"] = {"checked": False}
        if walk.refs:
            result.notes.append("evidence not checked: no record folder beside the journal")
    else:
        _evidence(result, walk, listing, journal)
    if record is not None:
        _salvaged(result, walk.header, record)
    if missing is not None:  # last: whatever was found changed outranks it
        result.lack(missing)
    return result


def _links(result: Verification, journal: Path, anchor: Path | None) -> None:
    """A hard link to the journal or its anchor is a door to the record from elsewhere."""
    for path in (journal, anchor):
        if path is None:
            continue
        try:
            links = os.lstat(path).st_nlink
        except OSError:
            continue
        if links > 1:
            result.add(
                Problem(
                    "record-linked",
                    f"{path.name} has {links} hard links: it can be written through another "
                    "name (a session continuing it moves it to a file of its own)",
                )
            )


def _expected(result: Verification, walk: _Walk, head: str) -> None:
    """The head kept elsewhere must be the hash of a line of this journal that verifies. The
    64 zeros that line 1 names as its `prev` are no line's hash: expecting them covers
    nothing, and would pass any journal."""
    line = (
        walk.expected_at
        if walk.expected_at is not None and walk.expected_at <= result.good
        else None
    )
    result.extra["expected_head"] = {"head": head, "line": line}
    if line is None:
        result.add(
            Problem(
                UNEXPECTED,
                f"the expected head {head} is not the hash of any line that verifies: the "
                "journal was rewritten (or it is another journal)",
            )
        )
    elif line < result.lines:
        result.notes.append(
            f"the expected head is line {line}: lines 1-{line} are as they were then; the "
            f"{result.lines - line} later line(s) are not covered by it"
        )


def _seals(
    result: Verification, walk: _Walk, seals: list[SealFile], options: Options
) -> Problem | None:
    """Judge the seals; the required seal that is missing, if one is."""
    if not seals and options.allowed is None:
        return None
    session = walk.header.get("session")
    against = Against(
        session if isinstance(session, str) else None,
        walk.hashes,
        result.lines,
        result.good,
        options.allowed,
        options.identity,
        options.seal_required,
    )
    verdicts = judge_seals(seals, against)
    result.extra["seals"] = verdicts.seals
    result.notes.extend(verdicts.notes)
    for problem in verdicts.problems:
        result.add(problem)
    _coverage(result, verdicts.seals, trusted=options.allowed is not None)
    return verdicts.missing


def _coverage(result: Verification, seals: list[dict[str, Any]], trusted: bool) -> None:
    """How far the seals reach: lines after the last one a seal holds are covered by none
    (whoever could write the journal could have appended them)."""
    counted = ("good",) if trusted else ("good", "valid")
    through = max((s["lines"] for s in seals if s["signature"] in counted), default=0)
    result.extra["sealed_through"] = through
    if through >= result.lines:
        return
    kind = "a seal by an allowed key" if trusted else "a seal with a valid signature"
    covered = f"lines 1-{through} are covered by {kind}" if through else f"no line has {kind}"
    last = result.lines
    rest = f"line {last} is" if through + 1 == last else f"lines {through + 1}-{last} are"
    result.notes.append(
        f"{covered}; {rest} covered by no seal (whoever could write the journal could have "
        "written them): `epistemic seal` after the last call covers them"
    )


def _approvals(result: Verification, walk: _Walk, options: Options) -> None:
    session = walk.header.get("session")
    problems, notes = check_approvals(
        walk.approvals, session if isinstance(session, str) else None, options.allowed
    )
    result.notes.extend(notes)
    for problem in problems:
        result.add(problem)


def _evidence(result: Verification, walk: _Walk, listing: Listing, journal: Path) -> None:
    refs, in_flight = walk.refs, walk.calls - walk.outcomes
    if result.status == TAMPERED:  # refs beyond the break count too: every readable line
        records = read_numbered(journal)[0]
        refs = [ref for line, record in records for ref in refs_of(record, line)]
        kinds = [record.get("kind") for _, record in records]
        in_flight = kinds.count("call") - kinds.count("outcome")
    check = check_evidence(refs, listing, max(in_flight, 0))
    result.extra["evidence"] = check.to_json()
    result.notes.extend(check.notes)
    for problem in check.problems:
        result.add(problem)


def _salvaged(result: Verification, header: dict[str, Any], record: Path) -> None:
    """A journal started by `verify --salvage`: the damaged one's good prefix still holds."""
    source = header.get("salvaged_from")
    if not isinstance(source, dict):
        return
    name, lines, head = source.get("journal"), source.get("lines"), source.get("head")
    if not isinstance(name, str) or not isinstance(lines, int) or not isinstance(head, str):
        result.add(Problem(SALVAGE, "line 1's `salvaged_from` is malformed", 1))
        return
    parts = name.split("/")
    damaged = record.joinpath(*parts)
    if parts[0] != "damaged" or ".." in parts or not damaged.is_file():
        result.notes.append(f"this journal continues the damaged journal {name}, not found here")
        return
    hashes: dict[int, str] = {}
    verify_journal(damaged, None, lambda n, _, digest: hashes.update({n: digest}))
    if (hashes.get(lines) if lines else GENESIS) != head:
        result.add(
            Problem(
                SALVAGE,
                f"the damaged journal {name} no longer verifies up to line {lines} with head "
                f"{head}, as this journal's header recorded when it was salvaged",
                1,
            )
        )
        return
    result.notes.append(
        f"this journal continues the damaged journal {name}: its lines 1-{lines} still "
        f"verify (head {head})"
    )
