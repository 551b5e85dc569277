"""The session header (line 1 of every journal), the confinement object it carries (also the
body of a `confinement` record), and the other records about the session as a whole: a policy
or confinement that changed, a policy found but not put in force, a record relinked."""

from __future__ import annotations

from .types import (
    INTEGER,
    NUMBER,
    OBJECT,
    STRING,
    STRINGS,
    Field,
    Kind,
    choices,
    nullable,
    opt,
    req,
)
from .values import Mechanism, Mode, Namespaces, Signals

T = req("t", STRING, "when it was recorded")

CONFINEMENT: tuple[Field, ...] = (
    req(
        "mechanism",
        STRING,
        "`landlock+namespaces`, `bwrap`, `landlock` or `none` (see [security.md](security.md))",
        choices(Mechanism),
    ),
    req(
        "landlock_abi",
        nullable(INTEGER),
        "the kernel's Landlock ABI version, null without Landlock",
    ),
    req(
        "namespaces",
        nullable(STRING),
        "`root` (the session holds CAP_SYS_ADMIN) or `user` (it entered a user namespace of "
        "its own); null without",
        choices(Namespaces),
    ),
    req(
        "signals",
        STRING,
        "what keeps acts from signalling anything outside their own process tree: "
        "`landlock-scope`, `pid-namespace` or `none`",
        choices(Signals),
    ),
    req(
        "held",
        STRINGS,
        "the guarantees that hold, by id (`epistemic doctor` lists them with their meaning)",
    ),
    req("not_held", OBJECT, "each guarantee that does not hold, with why"),
    req(
        "scratch",
        STRING,
        "the session's scratch folder, `$TMPDIR` for its commands: the only place observation "
        "acts may write",
    ),
    req(
        "grants",
        OBJECT,
        "per mutating act, the folders outside the workspace it may write (`[sandbox] "
        "writable`; setup acts get the package caches by default)",
    ),
    req(
        "missing_grants",
        OBJECT,
        "grants that were asked for but do not exist, or (with `readable`) lie outside the "
        "allow-list, and so are not granted",
    ),
    req(
        "hidden",
        STRINGS,
        "files and folders no act can see into: the record folder, any the caller adds (a "
        "benchmark's hidden task files), and the operator's keys and credentials that exist "
        "(`[sandbox] hidden`; by default `~/.ssh`, `~/.gnupg`, the SSH agent's socket, cloud "
        "credentials)",
    ),
    opt(
        "not_hidden",
        OBJECT,
        "entries of `[sandbox] hidden` left visible, each with why (one that holds the "
        "workspace or the scratch folder would blind every act); absent from journals written "
        "before it existed",
    ),
    opt(
        "decoys",
        OBJECT,
        "folder → decoy: folders every act sees the decoy folder's tree in place of, read-only "
        "(`epistemic run --decoy`, as `epistemic bench` shows its task folders); added later, "
        "so absent from older headers",
    ),
    req(
        "readable",
        nullable(STRINGS),
        "the allow-list of what acts may read, list and run besides the workspace, the scratch "
        "folder and their grants (`epistemic run --readable`; a symlink is followed by its "
        "target); null when there is none and acts read whatever the OS user can. Added "
        "later: absent from older headers, which means null (migration "
        "`confinement-readable-absent`)",
    ),
    req(
        "protected",
        STRINGS,
        "files and folders acts may read but never change, wherever they lie: the report (and "
        "its spares, in headers older versions wrote), the policy in force, the "
        "allowed_signers files it names, the supervisor's verdict script, and an agent "
        "client's settings in the workspace (`.claude/`, `.codex/`, `.mcp.json`...) that "
        "existed when the session started",
    ),
)

POLICY_MEANING = (
    "the policy in force: `source` (the file's path, or `preset:NAME`), `sha256` (of the "
    "file's bytes, or of the preset's name) and, when it names allowed_signers files, "
    "`signers` (each file's path and the SHA-256 of the copy the session took when it "
    "opened); see [policy.md](policy.md). The session keeps a private copy of the policy "
    "file, `policies/<sha256>` in its folder, and of each allowed_signers file, "
    "`signers/<sha256>`. Absent in journals written before policies were applied"
)

SESSION = Kind(
    "session",
    "the header (always line 1)",
    (
        req("session", STRING, "random 128-bit id, hex"),
        req("started", STRING, "when the session started"),
        req(
            "started_epoch",
            NUMBER,
            "the same instant in seconds since the epoch (used to tell which paths existed "
            "before the session). Added later: derived from `started` in older headers "
            "(migration `header-started-epoch`)",
        ),
        req("tool_version", STRING, "the epistemic-agent version that wrote it"),
        req("workspace", STRING, "absolute path of the workspace"),
        req(
            "git_head",
            nullable(STRING),
            "`git rev-parse HEAD` in the workspace at the start, if it is a git repository",
        ),
        opt(
            "git_head_unknown",
            STRING,
            "only when git did not answer in time (a FIFO in `.git`, say): `git rev-parse "
            "timed out after 5 s`; `git_head` is then null",
        ),
        req("user", STRING, "the OS user"),
        req("host", STRING, "the host name"),
        req("pid", INTEGER, "the process that started the session"),
        req("python", STRING, "Python version"),
        opt(
            "task",
            nullable(STRING),
            "the task given to `epistemic run` (absent for sessions started by `exec`/`tool`)",
        ),
        opt("model", STRING, "`PROVIDER:MODEL` for sessions started by `run`/`repl`/`demo`"),
        opt(
            "mode",
            STRING,
            "`repl` for interactive sessions, `mcp` for sessions started by `epistemic mcp`",
            choices(Mode),
        ),
        opt(
            "mcp_client",
            OBJECT,
            "`mcp` sessions: the client's `name` and `version`, from its initialisation "
            "handshake (each null when it gave none)",
        ),
        opt(
            "ticket",
            STRING,
            "the task or ticket given with `--ticket ID` to the `run`, `exec`, `repl` or `mcp` "
            "that started the session (absent when none was)",
        ),
        opt("policy", OBJECT, POLICY_MEANING),
        opt(
            "supervisor",
            OBJECT,
            "when a supervisor is set (see `review` below): `model`, `acts`, `budget`, "
            "`prompt` (`built-in` or `custom`), `on_error` and `role`",
        ),
        opt(
            "salvaged_from",
            OBJECT,
            "only in a journal started by `epistemic verify --salvage`: `journal` (the damaged "
            "journal, relative to `.epistemic/`: `damaged/TIME/journal.jsonl`), `session` (its "
            "session id, or null), `lines` and `head` (its good prefix: lines 1 to `lines` "
            "verify, the last hashing to `head`; 0 and 64 zeros when none does), `line` and "
            "`problem` (where and how it broke)",
        ),
        Field(
            "confinement",
            OBJECT,
            "how every act of the session is confined, and what that guarantees; the fields "
            "are below. Absent in journals written before acts were confined",
            inner=CONFINEMENT,
        ),
    ),
)

POLICY = Kind(
    "policy",
    "the policy in force changed",
    (
        T,
        req(
            "source",
            STRING,
            "as in the header: written when a later `exec`, `tool` or `run` continues the "
            "session under a different policy, one it names (`--policy`, `--approve`, "
            "`--read-only`), than the one last recorded",
        ),
        req(
            "sha256",
            STRING,
            "as in the header: written when a later `exec`, `tool` or `run` continues the "
            "session under a different policy, one it names (`--policy`, `--approve`, "
            "`--read-only`), than the one last recorded",
        ),
        opt("signers", OBJECT, "as in the header: the allowed_signers files the policy names"),
    ),
)

POLICY_IGNORED = Kind(
    "policy-ignored",
    "a policy found that is not in force",
    (
        T,
        req("source", STRING, "the policy found, as the header would name it"),
        req("sha256", STRING, "the policy found, as the header would name it"),
        opt("signers", OBJECT, "the policy found, as the header would name it"),
        req(
            "in_force",
            OBJECT,
            "the policy the session goes on under, as last recorded (`source`, `sha256`, "
            "`signers`)",
        ),
        req("message", STRING, "the same, for humans"),
    ),
)

CONFINEMENT_KIND = Kind("confinement", "the confinement changed", (T, *CONFINEMENT))

RELINKED = Kind(
    "relinked",
    "the record had another hard link",
    (
        T,
        req("files", STRINGS, "what was moved: `journal.jsonl`, `head.json`"),
        req("message", STRING, "the same, for humans"),
    ),
)

#: Used by tests and docs: every field of every kind here.
KINDS = (SESSION, POLICY, POLICY_IGNORED, CONFINEMENT_KIND, RELINKED)
