"""File utilities: the programs whose operands are the files they create, change or delete."""

from __future__ import annotations

import posixpath
import re

from ..core import Cmd, Word, dyn, handles, lit, norm
from ..options import grammar, options

_WRITE_ALL = {
    # program: (its grammar, the verb of its reason)
    "touch": (
        grammar(
            "touch",
            "acd:fhmr:t:",
            "time: no-create date: reference: no-dereference",
            note="every operand is written; the value of -r/--reference is only read",
            complete=True,
        ),
        "touches",
    ),
    "mkdir": (
        grammar("mkdir", "pm:vZ", "context:: mode: parents verbose", complete=True),
        "creates",
    ),
    "tee": (
        grammar("tee", "aip", "append ignore-interrupts output-error::", complete=True),
        "writes",
    ),
    "truncate": (
        grammar("truncate", "cor:s:", "no-create io-blocks reference: size:", complete=True),
        "truncates",
    ),
    "mkfifo": (grammar("mkfifo", "m:Z", "mode: context::", complete=True), "creates"),
    "sponge": (grammar("sponge", "a", complete=True, abbrev=False), "writes"),
}


@handles(*_WRITE_ALL)
def _write_all(c: Cmd) -> None:
    g, verb = _WRITE_ALL[c.name]
    c.write(options(c, g).pos, verb)


_RM = {
    "rm": grammar(
        "rm",
        "dfirvIR",
        "force interactive:: one-file-system no-preserve-root preserve-root:: recursive dir "
        "verbose",
        note="every operand is deleted",
        complete=True,
    ),
    "rmdir": grammar("rmdir", "pv", "ignore-fail-on-non-empty parents verbose", complete=True),
    "unlink": grammar("unlink", complete=True),
}


@handles(*_RM)
def _rm(c: Cmd) -> None:
    c.delete(options(c, _RM[c.name]).pos)


_SHRED = grammar(
    "shred",
    "fn:s:uvxz",
    "exact force iterations: size: random-source: remove:: verbose zero",
    note="every operand is overwritten; -u/--remove deletes it too",
    complete=True,
)


@handles("shred")
def _shred(c: Cmd) -> None:
    o = options(c, _SHRED)
    c.write(o.pos, "overwrites")
    if o.has("-u", "--remove"):
        c.delete(o.pos)


_OWNER = "changes dereference no-dereference preserve-root no-preserve-root quiet silent "
_OWNER += "recursive reference: verbose"
_CHMOD = {
    "chmod": grammar(
        "chmod",
        "Rcfv",
        "changes no-preserve-root preserve-root quiet silent recursive reference: verbose",
        note="a mode may look like an option (-w, -rwx, -x,o+r): it is the first operand; "
        "the other operands are changed (all of them with --reference)",
        complete=True,
    ),
    "chown": grammar("chown", "HLPRcfhv", _OWNER + " from:", complete=True),
    "chgrp": grammar("chgrp", "HLPRcfhv", _OWNER, complete=True),
}
_DASH_MODE = re.compile(r"-[rwxXstugoa0-7,+=]+")


@handles(*_CHMOD)
def _chmod(c: Cmd) -> None:
    args: list[Word] = []
    modes: list[Word] = []  # `chmod -w f`: getopt hands chmod its mode as an option
    for k, word in enumerate(c.args):
        if word.value == "--":
            args.extend(c.args[k:])
            break
        mode = c.name == "chmod" and _DASH_MODE.fullmatch(word.value or "")
        (modes if mode else args).append(word)
    o = options(c, _CHMOD[c.name], args)
    pos = o.pos
    verb = "changes the permissions of" if c.name == "chmod" else "changes the owner of"
    if o.has("--reference") or modes:
        c.write(pos, verb)
    elif pos and pos[0].split:  # `chmod $ARGS`: which word is the mode?
        c.write([dyn(w) for w in pos], verb)
    else:
        c.write(pos[1:], verb)


_BACKUP = "backup:: suffix: target-directory: no-target-directory verbose debug "
_COPY = {
    "cp": grammar(
        "cp",
        "abdfHilLnprst:uvxPRS:TZ",
        _BACKUP + "archive attributes-only copy-contents dereference force interactive link "
        "no-clobber no-dereference no-preserve: one-file-system parents path preserve:: "
        "recursive reflink:: remove-destination sparse: strip-trailing-slashes symbolic-link "
        "update:: keep-directory-symlink context::",
        note="the last operand (or the value of -t) is written; mv also deletes the sources",
        complete=True,
    ),
    "mv": grammar(
        "mv",
        "bfint:uvS:TZ",
        _BACKUP + "context exchange force interactive no-clobber no-copy "
        "strip-trailing-slashes update::",
        complete=True,
    ),
    "ln": grammar(
        "ln",
        "bdfinrst:vFLPS:T",
        _BACKUP + "directory force no-dereference interactive logical physical relative symbolic",
        complete=True,
    ),
    "install": grammar(
        "install",
        "bcCdDg:m:o:psS:t:TvZ",
        _BACKUP + "compare directory group: mode: owner: preserve-timestamps preserve-context "
        "strip strip-program: context::",
        note="-d/--directory: every operand is created",
        complete=True,
    ),
    "link": grammar("link", complete=True),
}


@handles(*_COPY)
def _copy(c: Cmd) -> None:
    o = options(c, _COPY[c.name])
    if c.name == "install" and o.has("-d", "--directory"):
        c.write(o.pos, "creates")
        return
    target = o.last("-t", "--target-directory")
    dest: Word | None
    if target is None and len(o.pos) == 1 and o.pos[0].split:
        sources, dest = o.pos, o.pos[0]  # `cp $ARGS`: the last of its words
    elif target is None:
        sources, dest = o.pos[:-1], (o.pos[-1] if len(o.pos) > 1 else None)
    else:
        sources, dest = o.pos, target
    if dest is None and c.name == "ln" and len(o.pos) == 1:
        only = o.pos[0]
        dest = Word(only.raw, posixpath.basename(only.value) if only.value else None)
    if c.name == "mv":
        c.delete(sources, "moves away")
    c.write([dest] if dest else [], "creates" if c.name in ("ln", "link") else "writes")


@handles("dd")
def _dd(c: Cmd) -> None:
    """dd takes operands, not options: `of=FILE` is written; an operand that is not known
    statically may be one."""
    for word in c.args:
        if word.value is not None and word.value.startswith("of="):
            c.write([lit(word.value[3:])])
        elif word.value is None and not word.procsub:
            lead = word.lead  # of=$OUT, "$OPERAND", o$X
            if lead.startswith("of=") or "of=".startswith(lead):
                c.write([dyn(word)])


@handles("split", "csplit")
def _split(c: Cmd) -> None:
    c.change("writes pieces under generated names")


_MKTEMP = grammar("mktemp", "dp:qtu", "directory dry-run quiet suffix: tmpdir::", complete=True)


@handles("mktemp")
def _mktemp(c: Cmd) -> None:
    o = options(c, _MKTEMP)
    if not o.sure("-u", "--dry-run"):
        kind = "directory" if o.has("-d", "--directory") else "file"
        c.change(f"creates a temporary {kind} under a generated name")


_PATCH = grammar(
    "patch",
    "bB:cd:D:eEfF:g:i:lnNo:p:r:RstTuvV:x:Y:z:Z",
    """backup prefix: binary context directory: ifdef: ed remove-empty-files force fuzz: get:
    input: ignore-whitespace normal forward output: strip: reject-file: reverse silent quiet
    batch set-time unified verbose version-control: debug: basename-prefix: suffix: set-utc
    dry-run posix merge:: reject-format: read-only: no-backup-if-mismatch backup-if-mismatch
    follow-symlinks quoting-style:""",
    note="the first operand (or the files the patch names) is patched; -o/--output and "
    "-r/--reject-file are written; --dry-run writes nothing",
    complete=True,
)


@handles("patch")
def _patch(c: Cmd) -> None:
    o = options(c, _PATCH)
    if o.sure("--dry-run"):
        return
    directory = o.last("-d", "--directory")
    sub = c.but(c.args, norm(directory, c.cwd)) if directory else c
    c.write([w for w in o.get("-r", "--reject-file") if w.value != "-"])
    if o.has("-o", "--output"):
        c.write([w for w in o.get("-o", "--output") if w.value != "-"])
    elif o.pos:
        sub.write(o.pos[:1], "patches")
    else:
        c.change("patches the files named in the patch")


_FILE = grammar(
    "file",
    "bcCde:Ef:F:hiklLm:nNpP:rsSvzZ0",
    """apple brief checking-printout compile exclude: exclude-quiet: extension files-from:
    separator: mime mime-type mime-encoding keep-going list dereference no-dereference
    magic-file: no-buffer no-pad preserve-date parameter: raw special-files no-sandbox
    uncompress uncompress-noreport print0 debug""",
    risky="-C --compile -p --preserve-date",
    note="-C/--compile writes magic.mgc; -p/--preserve-date sets the times of the operands",
    complete=True,
)


@handles("file")
def _file(c: Cmd) -> None:
    o = options(c, _FILE)
    if o.has("-C", "--compile"):
        magic = o.last("-m", "--magic-file")
        if magic is None or magic.value is not None:
            name = posixpath.basename(magic.value) if magic and magic.value else "magic"
            c.write([lit(name + ".mgc")])
        else:
            c.write([dyn(magic)])
    if o.has("-p", "--preserve-date"):
        c.write(o.pos, "sets the access time of")
