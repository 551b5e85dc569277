"""The records of one call: its declaration (`call`) or refusal (`rejected`) and what it came
to (`outcome`, with its `versions` entries). A human's decision on it is in approvals.py."""

from __future__ import annotations

from .types import (
    ANY,
    ARRAY,
    BOOLEAN,
    INTEGER,
    NUMBER,
    OBJECT,
    REF,
    SIDE,
    STRING,
    Field,
    Kind,
    choices,
    nullable,
    opt,
    req,
)
from .values import Act, Enforcement, Tool

REDACTED = opt(
    "redacted",
    INTEGER,
    'how many secrets were replaced in this record (see "Secrets" below); absent when none',
)


PID = req(
    "pid",
    INTEGER,
    "the process that made the call (recovery checks it is gone before it closes the call)",
)

CALL = Kind(
    "call",
    "the write-ahead declaration of an accepted call",
    (
        req("seq", INTEGER, "the call's number in the session, from 1; shared with `rejected`"),
        req("t", STRING, "when it was declared"),
        req(
            "tool", STRING, "`bash`, `read_file`, `write_file` or `str_replace_edit`", choices(Tool)
        ),
        req(
            "act",
            STRING,
            "the act type (see `epistemic types`); fixed by the tool for file tools",
            choices(Act),
        ),
        req("mutating", BOOLEAN, "whether the act mutates the world, from the vocabulary"),
        req("reason", STRING, "the declared intent, trimmed"),
        req(
            "command",
            STRING,
            "the shell command, or a one-line description of a file-tool call (`write_file "
            "notes.md (120 bytes)`)",
        ),
        opt("path", STRING, "file tools: the workspace-relative path"),
        opt("lines", OBJECT, "read_file: `start_line` and/or `end_line` when given"),
        opt(
            "inputs",
            REF,
            "write_file / str_replace_edit: a blob with the new `content`, or `old` and `new`, "
            "as JSON",
        ),
        opt(
            "effect",
            OBJECT,
            "bash: the static classification of the command, as `epistemic classify --json` "
            "prints it (`class`, `paths`, `writes`, `deletes`, `dynamic`, `reasons`); see "
            "[declared-vs-done.md](declared-vs-done.md)",
        ),
        opt(
            "policy",
            OBJECT,
            "what the policy decided: `decision` (`allow` or `ask`), `rule` (the rule's id, null "
            "for the default) and `message`. Absent when no policy is in force (no rules, "
            "default allow), unless a supervisor's failed review left the call to a human "
            "(`rule` `supervisor` when no rule asked)",
        ),
        REDACTED,
        PID,
        opt(
            "belief",
            OBJECT,
            "the agent's verdict on the belief it tested just before: the reason opened with "
            "`Held`/`Confirmed`, `Did not hold`/`Refuted` or `Unsettled` (see "
            "[supervisor.md](supervisor.md#the-ledger-of-beliefs)). Fields `seq` (the "
            "test-hypothesis call), `verdict` (`confirmed`, `refuted` or `unsettled`), `by` "
            "(`agent`). Absent otherwise; added later",
        ),
        opt(
            "ticket",
            STRING,
            "the `--ticket ID` of the process that made the call (absent when none was given); "
            "it is also the policy fact `ticket`",
        ),
    ),
)

#: An entry of an outcome's `versions`: one file the call changed, in path order.
VERSION_ENTRY: tuple[Field, ...] = (
    req("path", STRING, "workspace-relative, POSIX"),
    opt(
        "before",
        SIDE,
        "the file's content before the call: a blob (redacted), null when it did not exist, "
        '`"empty"` when it existed with no bytes',
    ),
    opt("after", SIDE, "the same, after the call (null: the call deleted it)"),
    opt(
        "skipped",
        STRING,
        "instead of `before` and `after`: why the content was not kept, e.g. `it is binary`, "
        "`it is larger than 1048576 bytes`, `it is a symbolic link, or lies behind one`, `it "
        "is not a regular file`, `no copy from before: it is binary`, `no copy from before: "
        "the baseline's budget of 536870912 bytes was spent`",
    ),
)

OUTCOME = Kind(
    "outcome",
    "what an accepted call came to",
    (
        req("seq", INTEGER, "the call it belongs to"),
        req("t", STRING, "when it finished"),
        req(
            "ok",
            BOOLEAN,
            "bash: exit status 0 and no timeout; file tools: the operation succeeded",
        ),
        req(
            "outcome",
            STRING,
            "one line for humans: `rc=0 — first line of output`, `timed out after 120 s; …`, "
            "`edited app.py (+1 -1 lines)`",
        ),
        opt(
            "duration",
            NUMBER,
            "seconds (absent on an outcome the session wrote for a call interrupted outside its "
            "command, and on a recovered one)",
        ),
        opt("returncode", nullable(INTEGER), "bash only; null on timeout"),
        opt("timed_out", BOOLEAN, "bash only"),
        opt(
            "interrupted",
            BOOLEAN,
            "present and true when the call was interrupted (Ctrl-C, a signal) before it "
            "finished. A command stopped by a second Ctrl-C is recorded like one that "
            "finished: what it printed until then in `evidence`, the changes observed, "
            "`returncode` null; readers show the call as `aborted`",
        ),
        opt(
            "evidence",
            OBJECT,
            "named evidence refs: `stdout`, `stderr` (bash), `content` (read_file), `diff` "
            "(write_file, str_replace_edit, and bash when it changed a file whose versions were "
            "kept: one unified diff of every such file, `--- a/PATH` / `+++ b/PATH` per file, "
            "redacted like all evidence); empty outputs have no ref. On a recovered outcome, "
            "`evidence.stored_before_the_kill` (an array of evidence refs): blobs the killed "
            "session had stored for its calls before it could journal an outcome (a diff, "
            "versions), which no record named; kept here so that a crash never reads as an "
            "added blob. Which call each was for was not recorded",
        ),
        Field(
            "versions",
            ARRAY,
            'what each file the call changed held before and after (see "Versions" below); '
            "present on every outcome of a shell act that changed something and of a file "
            "tool's write, when the session had a baseline (it has one unless observation is "
            "off)",
        ),
        opt(
            "commits",
            ARRAY,
            "bash, in a workspace with the trailers hook installed, when a mutating act moved "
            'HEAD: each commit it made (at most 50), `{"commit": sha, "trailers": whether it '
            "carries this session's Epistemic-Session trailer}`; one without raises "
            "`commit-without-trailers`",
        ),
        opt(
            "commits_unread",
            STRING,
            "bash, in a workspace with the trailers hook installed, when the commits a mutating "
            "act made could not be listed: which file of `.git` the session would not read and "
            "why (`.git/packed-refs: not a regular file (a FIFO)`; `before the call, ...` when "
            "it was so before the act), or that git did not answer in time",
        ),
        opt(
            "versions_cut",
            INTEGER,
            "how many changed paths beyond the first 200 have no `versions` entry; absent when "
            "none",
        ),
        opt(
            "enforcement",
            STRING,
            "bash: how the workspace was kept read-only while the command ran: `landlock` "
            "(Landlock, with or without namespaces), `bwrap` or `none` (mutating acts always "
            "`none`: they may write it). It does not say whether the call was confined: "
            "`confinement` does",
            choices(Enforcement),
        ),
        opt(
            "confinement",
            STRING,
            "how the call was confined: the session's `mechanism` (see the header)",
        ),
        opt(
            "not_run",
            BOOLEAN,
            "present and true when the call could not be confined and so did not run; "
            "`outcome` says why",
        ),
        opt(
            "recovered",
            BOOLEAN,
            "present and true on an outcome a later process wrote for a call whose session was "
            "killed: `outcome` says so, `observed.method` is `recovered` (every entry whose "
            "ctime is at or after the declaration, listed as `modified`; deletions cannot be "
            "recovered, so `complete` is false), the flag is `session-killed`, and `evidence` "
            "holds the output the killed session had captured (what one read of its capture "
            "files found: when they grew during the read, `outcome` ends with how many bytes "
            "came after what is kept)",
        ),
        opt(
            "observed",
            OBJECT,
            "bash: workspace paths the call `created`, `modified` and `deleted` (each list cut "
            "at 200, with `created_total` etc. when longer), the `method` (`fanotify`, "
            "`snapshot`, or `recovered`) and `complete` (false when the kernel's event queue "
            "overflowed, or for a recovered call)",
        ),
        opt(
            "outside",
            OBJECT,
            "bash, mutating acts with grants: for each granted folder outside the workspace "
            "that the call changed, what it changed there (paths relative to the folder, as in "
            "`observed`; `method` is `fanotify`, or `ctime` where fanotify is not available: "
            "then created and modified entries are all listed as `modified` and deletions are "
            "not seen). Absent when nothing changed outside",
        ),
        opt(
            "tripwire",
            OBJECT,
            "bash, confined acts: what the tripwire saw the command try "
            "([security.md](security.md)): `attempts` (each `syscall`, `path`, and `target`: the "
            "protected item the path is, leads to or lies in; the first 100), `more` (how many "
            "beyond those), `unread` (watched calls whose path the session could not read), "
            "`unwatched` (why the call was not watched, or not wholly; null when it was). "
            "Absent when it saw nothing and the call was watched",
        ),
        opt(
            "flags",
            ARRAY,
            'mismatches between declaration and behaviour, each `{"flag": id, "message": '
            "text}`; absent when there are none",
        ),
        opt(
            "denied",
            BOOLEAN,
            "present and true when the call did not run because the human asked (or the "
            "approval timeout) denied it; `outcome` then reads `denied by NAME (CHANNEL): "
            "comment`",
        ),
        opt(
            "cancelled",
            BOOLEAN,
            "present and true when the caller gave up on the call before it ran; `outcome` "
            "says why, and that it did not run",
        ),
        opt("cancelled_by", nullable(STRING), "with `cancelled`: who cancelled it, when known"),
        opt(
            "act",
            STRING,
            "with `denied` or `cancelled`: the call's act (policy facts count only calls that ran)",
            choices(Act),
        ),
        opt(
            "redacted",
            INTEGER,
            "how many secrets were replaced in the output (and so in its evidence) and in this "
            "record; absent when none",
        ),
    ),
)

REJECTED = Kind(
    "rejected",
    "a call the gate refused (it never ran)",
    (
        req("seq", INTEGER, "the call's number"),
        req("t", STRING, "when"),
        req("tool", STRING, "the tool name as given (or its `repr` if it was not a string)"),
        req("act", nullable(STRING), "the act, when it was known and valid", choices(Act)),
        req("rule", STRING, "a stable rule id; `epistemic rules` lists them all"),
        req(
            "message",
            STRING,
            "the message returned to the caller, which says how to fix the call",
        ),
        req(
            "given",
            ANY,
            "the arguments exactly as sent (strings longer than 4,096 characters are cut; "
            "secrets replaced)",
        ),
        opt(
            "policy",
            OBJECT,
            'for `rule: "policy"` (a policy rule denied the call): `decision` (`deny`), `rule` '
            "(the policy rule's id, null for the default) and `message`",
        ),
        opt("redacted", INTEGER, "secrets replaced in this record; absent when none"),
        req("pid", INTEGER, "the process"),
    ),
)

KINDS = (CALL, OUTCOME, REJECTED)
