"""What known programs do to the file system: the program tables behind `effects.classify`.

A handler receives a `Cmd` (program name, argument words, cwd) and reports what it finds:
`write`/`delete` (mutating, with paths), `change` (mutating, where is not statically known),
`unknown`. A handler that reports nothing has judged the command read-only. A program with
neither a handler nor a place in a table is unknown: read-only must be earned.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterable, Sequence

from .effects import MUTATING, READ_ONLY, UNKNOWN
from .structs import field, replace, struct

MAX_PART = 60


@struct
class Word:
    """One shell word: its source text and its literal value (None when not static)."""

    raw: str
    value: str | None
    tilde: bool = False  # an unquoted leading ~: home-relative, never joined to the cwd
    procsub: bool = False  # <(...) / >(...): a /dev/fd path, never a workspace file


def lit(text: str) -> Word:
    return Word(text, text)


_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
_HARMLESS = re.compile(r"/dev/(null|zero|full|stdin|stdout|stderr|tty|fd/\d+)|/proc/self/fd/\d+")
_BIN_DIRS = frozenset(
    {"/bin", "/usr/bin", "/usr/local/bin", "/sbin", "/usr/sbin", "/usr/local/sbin"}
)


def norm(word: Word, cwd: str | None) -> str | None:
    """The normalised path a word names, relative to the starting cwd; None if not static."""
    value = word.value
    if value is None or word.procsub:
        return None
    if word.tilde or value.startswith("/"):
        path = posixpath.normpath(value)
        return path if not word.tilde or path.startswith("~") else None
    if cwd is None:
        return None
    path = posixpath.normpath(posixpath.join(cwd, value))
    return None if cwd.startswith("~") and not path.startswith("~") else path


def program(name: str) -> str:
    """`/usr/bin/rm` is rm; `./rm` or `bin/rm` is a script."""
    head, _, tail = name.rpartition("/")
    return tail if head in _BIN_DIRS else name


def shorten(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= MAX_PART else flat[: MAX_PART - 3] + "..."


class Findings:
    """What a command does, accumulated over all its parts."""

    def __init__(self, script: Callable[[str, str | None, str], None]) -> None:
        self.writes: list[str] = []
        self.deletes: list[str] = []
        self.reasons: list[str] = []
        self.dynamic = False
        self.mutating = False
        self.unknown = False
        self.functions: set[str] = set()
        self.script = script  # classify a nested shell string: (text, cwd, part)

    def add(
        self,
        cls: str,
        reason: str,
        writes: Iterable[str] = (),
        deletes: Iterable[str] = (),
        dynamic: bool = False,
    ) -> None:
        self.mutating |= cls == MUTATING
        self.unknown |= cls == UNKNOWN
        self.dynamic |= dynamic
        self.writes.extend(writes)
        self.deletes.extend(deletes)
        self.reasons.append(reason)


@struct(frozen=False)
class Cmd:
    """One simple command as a handler sees it."""

    name: str
    args: list[Word]
    cwd: str | None
    part: str  # the text named in reasons
    out: Findings
    fed: bool = False  # xargs (fd -x...) appends arguments known only at run time

    def write(self, words: Iterable[Word], verb: str = "writes") -> None:
        self._files(words, verb, deleting=False)

    def delete(self, words: Iterable[Word], verb: str = "deletes") -> None:
        self._files(words, verb, deleting=True)

    def _files(self, words: Iterable[Word], verb: str, deleting: bool) -> None:
        known: list[str] = []
        shown: list[str] = []
        for word in words:
            if word.procsub or word.value == "":
                continue
            path = norm(word, self.cwd)
            if path is None:
                shown.append(f"{word.raw} (not known statically)")
            elif deleting or not _HARMLESS.fullmatch(path):
                known.append(path)
        if self.fed:
            shown.append("paths supplied at run time")
        if not known and not shown:
            return
        text = f"`{self.part}` {verb} {', '.join(known + shown)}"
        if deleting:
            self.out.add(MUTATING, text, deletes=known, dynamic=bool(shown))
        else:
            self.out.add(MUTATING, text, writes=known, dynamic=bool(shown))

    def change(self, what: str, dynamic: bool = True) -> None:
        """Mutating, but what changes is not a statically known path."""
        self.out.add(MUTATING, f"`{self.part}` {what}", dynamic=dynamic)

    def unknown(self, what: str) -> None:
        self.out.add(UNKNOWN, f"`{self.part}` {what}")

    def run(
        self,
        argv: Sequence[Word],
        chdir: Word | None = None,
        lose_cwd: bool = False,
        fed: bool | None = None,
    ) -> None:
        """Classify a command this one runs (wrappers, xargs, find -exec)."""
        argv = list(argv)
        while argv and _ASSIGNMENT.match(argv[0].raw):
            argv.pop(0)  # `time X=1 cmd`, `sudo X=1 cmd`
        if not argv:
            return
        name = argv[0].value
        if name is None:
            self.unknown(
                f"runs a command whose name is not known statically ({argv[0].raw}): effect unknown"
            )
            return
        cwd = None if lose_cwd else (norm(chdir, self.cwd) if chdir is not None else self.cwd)
        fed = self.fed if fed is None else fed
        dispatch(Cmd(program(name), list(argv[1:]), cwd, self.part, self.out, fed))

    def script(self, text: str | None, what: str = "runs a command string") -> None:
        if text is None:
            self.unknown(f"{what} that is not known statically: effect unknown")
        else:
            self.out.script(text, self.cwd, self.part)


@struct(frozen=False)
class Opts:
    flags: list[tuple[str, Word | None]] = field(default_factory=list)
    pos: list[Word] = field(default_factory=list)
    dashdash: int | None = None  # index in pos where `--` was

    def has(self, *names: str) -> bool:
        return any(name in names for name, _ in self.flags)

    def get(self, *names: str) -> list[Word]:
        return [value for name, value in self.flags if name in names and value is not None]

    def last(self, *names: str) -> Word | None:
        found = self.get(*names)
        return found[-1] if found else None


def opts(args: Sequence[Word], short: str = "", long: str = "", stop: bool = False) -> Opts:
    """Split words into options and positionals.

    `short`: letters whose option takes a value (attached or the next word); `long`: the
    space-separated --options that take the next word when not written `--opt=value`;
    `stop`: the first positional ends the options (wrappers: what follows is a command).
    """
    out, longs, i = Opts(), long.split(), 0
    while i < len(args):
        word, i = args[i], i + 1
        value = word.value
        if value == "--":
            out.dashdash = len(out.pos)
            out.pos.extend(args[i:])
            break
        if value is None or len(value) < 2 or value[0] != "-":
            out.pos.append(word)
            if stop:
                out.pos.extend(args[i:])
                break
        elif value.startswith("--"):
            name, eq, given = value.partition("=")
            if eq:
                out.flags.append((name, lit(given)))
            elif name in longs and i < len(args):
                out.flags.append((name, args[i]))
                i += 1
            else:
                out.flags.append((name, None))
        else:
            i = _cluster(value, args, i, short, out)
    return out


def _cluster(value: str, args: Sequence[Word], i: int, short: str, out: Opts) -> int:
    for k, letter in enumerate(value[1:], start=2):
        if letter in short:
            rest = value[k:]
            if rest:
                out.flags.append(("-" + letter, lit(rest)))
            elif i < len(args):
                out.flags.append(("-" + letter, args[i]))
                return i + 1
            else:
                out.flags.append(("-" + letter, None))
            return i
        out.flags.append(("-" + letter, None))
    return i


Handler = Callable[[Cmd], None]
HANDLERS: dict[str, Handler] = {}


def handles(*names: str) -> Callable[[Handler], Handler]:
    def register(func: Handler) -> Handler:
        for name in names:
            HANDLERS[name] = func
        return func

    return register


def words(text: str) -> frozenset[str]:
    return frozenset(text.split())


#: Programs that never change anything, whatever their arguments (their output may be
#: redirected: the walker judges redirections). Shell builtins that only touch shell state too.
READ_ONLY_PROGRAMS = words(
    """ls ll la dir vdir cat head tail grep egrep fgrep ag ack wc cut tr diff diff3 cmp comm file
    stat du df pwd echo printf true false test [ : which type whereis whatis apropos whoami id
    uname ps pgrep pidof pstree basename dirname realpath readlink nl od hexdump strings seq yes
    sleep cal ncal printenv locale tty nproc free uptime w who users groups getent getconf arch
    more most column expand unexpand fold fmt paste join rev tac base32 base64 md5sum sha1sum
    sha224sum sha256sum sha384sum sha512sum b2sum cksum sum numfmt factor expr bc jq look lsof
    lsblk lscpu lsmod lsusb lspci tput zcat zless zmore zgrep zegrep zfgrep zdiff bzcat bzgrep
    xzcat xzgrep zstdcat lz4cat pr tsort shellcheck yamllint tokei colordiff locate plocate exa
    eza lsd gron apt-cache dpkg-query nm objdump readelf size ping dig nslookup host ss netstat
    vmstat iostat top lsb_release cd pushd popd dirs read mapfile readarray export declare
    typeset local readonly unset set shopt alias unalias hash help ulimit umask wait jobs times
    shift getopts let return exit break continue caller compgen complete disown logout clear"""
)


VERSION_ARGS = frozenset({"--version", "-V", "--help", "-h", "-version", "-help", "-VV"})


def static(args: Sequence[Word]) -> str | None:
    """The words joined by spaces, if all are literal (eval, watch)."""
    values = [word.value for word in args]
    return None if None in values else " ".join(value for value in values if value is not None)


def dyn(word: Word) -> Word:
    return Word(word.raw, None)


# -- files --------------------------------------------------------------------------------

_WRITE_ALL: dict[str, tuple[str, str, str]] = {
    # program: (short options with a value, long options with a value, verb)
    "touch": ("drt", "--date --reference --time", "touches"),
    "mkdir": ("m", "--mode", "creates"),
    "tee": ("", "", "writes"),
    "truncate": ("sr", "--size --reference", "truncates"),
    "mkfifo": ("m", "--mode", "creates"),
    "sponge": ("", "", "writes"),
    "sudoedit": ("ugCh", "--user --group", "edits"),
}


@handles(*_WRITE_ALL)
def _write_all(c: Cmd) -> None:
    short, long, verb = _WRITE_ALL[c.name]
    c.write(opts(c.args, short, long).pos, verb)


@handles("rm", "rmdir", "unlink")
def _rm(c: Cmd) -> None:
    c.delete(opts(c.args).pos)


@handles("shred")
def _shred(c: Cmd) -> None:
    o = opts(c.args, "ns", "--iterations --size --random-source")
    c.write(o.pos, "overwrites")
    if o.has("-u", "--remove"):
        c.delete(o.pos)


_DASH_MODE = re.compile(r"-[rwxXst]+")


@handles("chmod", "chown", "chgrp")
def _chmod(c: Cmd) -> None:
    pos: list[Word] = []
    reference = after = False
    for word in c.args:
        value = word.value
        mode = c.name == "chmod" and value is not None and _DASH_MODE.fullmatch(value)
        if after or value is None or not value.startswith("-") or value == "-" or mode:
            pos.append(word)
        else:
            after = value == "--"
            reference |= value.startswith("--reference")
    verb = "changes the permissions of" if c.name == "chmod" else "changes the owner of"
    c.write(pos if reference else pos[1:], verb)


@handles("cp", "mv", "ln", "install", "link")
def _copy(c: Cmd) -> None:
    install = c.name == "install"
    o = opts(c.args, "tSmog" if install else "tS", "--target-directory --suffix --mode --owner")
    if install and o.has("-d", "--directory"):
        c.write(o.pos, "creates")
        return
    target = o.last("-t", "--target-directory")
    if target is None and c.fed:
        sources, dest = o.pos, None  # xargs appends the destination
    elif target is None:
        sources, dest = o.pos[:-1], (o.pos[-1] if len(o.pos) > 1 else None)
    else:
        sources, dest = o.pos, target
    if dest is None and c.name == "ln" and len(o.pos) == 1 and not c.fed:
        only = o.pos[0]
        dest = Word(only.raw, posixpath.basename(only.value) if only.value else None)
    if c.name == "mv":
        c.delete(sources, "moves away")
    c.write([dest] if dest else [], "creates" if c.name in ("ln", "link") else "writes")


_REMOTE = re.compile(r"[^/]*:")


@handles("rsync", "scp")
def _remote_copy(c: Cmd) -> None:
    spec = ("efTBM", "--rsh --filter --temp-dir --backup-dir --suffix --chmod --log-file")
    o = opts(c.args, *(spec if c.name == "rsync" else ("PiFcloSJ", "")))
    if o.has("-n", "--dry-run") or len(o.pos) < 2:
        return
    dest, sources = o.pos[-1], o.pos[:-1]
    if dest.value is not None and _REMOTE.match(dest.value):
        c.change("copies to a remote host", dynamic=False)
    else:
        c.write([dest])
    c.write(o.get("--log-file"))
    if o.has("--remove-source-files"):
        c.delete([word for word in sources if not _REMOTE.match(word.value or "")], "moves away")


@handles("dd")
def _dd(c: Cmd) -> None:
    for word in c.args:
        if word.value is not None and word.value.startswith("of="):
            c.write([lit(word.value[3:])])
        elif word.value is None and word.raw.startswith("of="):
            c.write([dyn(word)])


_OUTPUT_OPTIONS: dict[str, tuple[str, str, str, int | None]] = {
    # program: (short options with a value, long options with a value, the options that
    #           name a file it writes, the index of a positional it writes)
    "sort": (
        "kotTS",
        "--key --output --field-separator --temporary-directory",
        "-o --output",
        None,
    ),
    "shuf": ("noi", "--head-count --output --input-range --random-source", "-o --output", None),
    "iconv": ("oft", "--output --from-code --to-code", "-o --output", None),
    "uniq": ("fsw", "--skip-fields --skip-chars --check-chars", "", 1),
    "xxd": ("cglson", "", "", 1),
    "less": ("bhjkoOpPtTxyz#", "--log-file --LOG-FILE", "-o -O --log-file --LOG-FILE", None),
    "tree": ("LoPIHT", "--filelimit --charset", "-o", None),
    "info": ("odfn", "--output --directory --file --node", "-o --output", None),
    "sdiff": ("oIw", "--output --ignore-matching-lines --width", "-o --output", None),
    "cloc": ("", "", "--out --report-file", None),
}


@handles(*_OUTPUT_OPTIONS)
def _output_option(c: Cmd) -> None:
    """Read-only programs with an option (or a positional) naming a file they write."""
    short, long, writing, index = _OUTPUT_OPTIONS[c.name]
    o = opts(c.args, short, long)
    if o.has("--compress-program"):
        c.unknown("runs a compression program: effect unknown")
    written = o.pos[index : index + 1] if index is not None else o.get(*writing.split())
    c.write([w for w in written if w.value != "-"])


@handles("fd", "fdfind")
def _fd(c: Cmd) -> None:
    o = opts(c.args, "tedEcjSx", "--type --extension --max-depth --exclude --exec --exec-batch")
    for flag in ("-x", "--exec", "-X", "--exec-batch"):
        at = next((i for i, w in enumerate(c.args) if w.value == flag), None)
        if at is not None:
            inner = [w for w in c.args[at + 1 :] if w.value != ";"]
            marked = [dyn(w) if "{" in (w.value or "") else w for w in inner]
            c.run(marked, fed=marked == inner)  # without a {} placeholder fd appends the path
            return
    if o.has("-x", "-X"):  # attached: -xrm
        c.unknown("runs a command for each result: effect unknown")


_RUNS_OPTIONS = {"rg": ("--pre",), "man": ("-P", "--pager", "-H", "--html")}


@handles(*_RUNS_OPTIONS)
def _runs_option(c: Cmd) -> None:
    """Read-only programs with an option that runs a command (a preprocessor, a pager)."""
    if any((w.value or "").startswith(_RUNS_OPTIONS[c.name]) for w in c.args):
        c.unknown("runs a helper command it is given: effect unknown")


@handles("split", "csplit")
def _split(c: Cmd) -> None:
    c.change("writes pieces under generated names")


@handles("mktemp")
def _mktemp(c: Cmd) -> None:
    o = opts(c.args, "p", "--tmpdir --suffix")
    if not o.has("-u", "--dry-run"):
        kind = "directory" if o.has("-d", "--directory") else "file"
        c.change(f"creates a temporary {kind} under a generated name")


@handles("patch")
def _patch(c: Cmd) -> None:
    o = opts(c.args, "pidoDFrBVzYgx", "--strip --input --directory --output --reject-file")
    if o.has("--dry-run", "--check"):
        return
    directory = o.last("-d", "--directory")
    sub = replace(c, cwd=norm(directory, c.cwd)) if directory else c
    c.write([w for w in o.get("-r", "--reject-file") if w.value != "-"])
    if o.has("-o", "--output"):
        c.write([w for w in o.get("-o", "--output") if w.value != "-"])
    elif o.pos:
        sub.write(o.pos[:1], "patches")
    else:
        c.change("patches the files named in the patch")


# -- archives and downloads ---------------------------------------------------------------

_TAR_VALUE = "fCbTXgNKLVHI"


def _tar_args(args: list[Word]) -> list[Word]:
    """Old-style `tar czf a.tgz dir` as `tar -c -z -f a.tgz dir`."""
    first = args[0].value if args else None
    if not first or first.startswith("-"):
        return args
    out, rest = [], args[1:]
    for letter in first:
        out.append(lit("-" + letter))
        if letter in _TAR_VALUE and rest:
            out.append(rest.pop(0))
    return out + rest


@handles("tar", "bsdtar", "gtar")
def _tar(c: Cmd) -> None:
    long = "--file --directory --files-from --exclude-from --listed-incremental --format"
    o = opts(_tar_args(c.args), _TAR_VALUE, long + " --use-compress-program --label")
    archive = o.last("-f", "--file")
    if o.has("-c", "--create", "-r", "--append", "-u", "--update", "-A", "--catenate"):
        c.write([archive] if archive and archive.value != "-" else [])
        if o.has("--remove-files"):
            c.delete(o.pos)
    elif o.has("--delete"):
        c.write([archive] if archive else [])
    elif o.has("-x", "--extract", "--get"):
        if not o.has("-O", "--to-stdout"):
            c.write([o.last("-C", "--directory") or lit(".")], "extracts files into")
    elif not o.has("-t", "--list", "-d", "--diff", "--compare", "--help", "--version"):
        c.unknown("has no recognised operation: effect unknown")


@handles("unzip")
def _unzip(c: Cmd) -> None:
    o = opts(c.args, "dP")
    if not o.has("-l", "-t", "-v", "-z", "-Z", "-p", "-c") and o.pos:
        c.write([o.last("-d") or lit(".")], "extracts files into")


@handles("zip")
def _zip(c: Cmd) -> None:
    o = opts(c.args, "bntO")
    if o.pos and not o.has("-T", "-h", "-v"):
        c.write(o.pos[:1])
        if o.has("-m", "--move"):
            c.delete(o.pos[1:], "moves into the archive")


_COMPRESSORS: dict[str, tuple[str, bool]] = {
    # program: (suffix, decompresses)
    "gzip": (".gz", False),
    "gunzip": (".gz", True),
    "bzip2": (".bz2", False),
    "bunzip2": (".bz2", True),
    "xz": (".xz", False),
    "unxz": (".xz", True),
    "lzma": (".lzma", False),
    "unlzma": (".lzma", True),
    "zstd": (".zst", False),
    "unzstd": (".zst", True),
    "compress": (".Z", False),
    "uncompress": (".Z", True),
}


@handles(*_COMPRESSORS)
def _compress(c: Cmd) -> None:
    suffix, unpack = _COMPRESSORS[c.name]
    o = opts(c.args, "So", "--suffix --output")
    if o.has("-c", "--stdout", "--to-stdout", "-t", "--test", "-l", "--list"):
        return
    files = [word for word in o.pos if word.value != "-"]
    unpack = unpack or o.has("-d", "--decompress", "--uncompress")
    keep = o.has("-k", "--keep") or (c.name.endswith("zstd") and not o.has("--rm"))
    if o.has("-o", "--output"):
        c.write(o.get("-o", "--output"))
    elif o.has("-r", "--recursive"):
        c.write(files, "rewrites files under")
    else:
        c.write([_derived(word, suffix, unpack) for word in files])
    if not keep and not o.has("-r", "--recursive"):
        c.delete(files)


def _derived(word: Word, suffix: str, unpack: bool) -> Word:
    value = word.value
    if value is None:
        return word
    if not unpack:
        return Word(word.raw, value + suffix, word.tilde)
    for ending, becomes in ((suffix, ""), (".tgz", ".tar"), (".taz", ".tar")):
        if value.endswith(ending) and len(value) > len(ending):
            return Word(word.raw, value[: -len(ending)] + becomes, word.tilde)
    return dyn(word)


_CURL_LONG = """--output --output-dir --data --data-raw --data-binary --data-urlencode --data-ascii
    --form --form-string --header --request --user --user-agent --referer --cookie --cookie-jar
    --dump-header --upload-file --proxy --write-out --config --cert --max-time --range
    --connect-timeout --retry --trace --trace-ascii --stderr --libcurl --etag-save --json
    --hsts --alt-svc --quote --url --resolve --cacert --key --oauth2-bearer"""
_CURL_SENDS = words(
    """-d --data --data-raw --data-binary --data-urlencode --data-ascii -F --form
    --form-string -T --upload-file --json -Q --quote --mail-from --mail-rcpt"""
)
_CURL_FILES = "-o --output -D --dump-header -c --cookie-jar --trace --trace-ascii --stderr"
_CURL_FILES += " --libcurl --etag-save --hsts --alt-svc"


@handles("curl")
def _curl(c: Cmd) -> None:
    o = opts(c.args, "AbcCdDeEFHKmoPQrTuUwxXyYzt", _CURL_LONG)
    methods = {(w.value or "?").upper() for w in o.get("-X", "--request")}
    if o.has(*_CURL_SENDS) or methods - {"GET", "HEAD", "OPTIONS"}:
        c.unknown("sends data to a server: its remote effect is unknown")
    if o.has("-K", "--config"):
        c.unknown("reads options from a config file: effect unknown")
    c.write([w for w in o.get(*_CURL_FILES.split()) if w.value != "-"])
    if o.has("-O", "--remote-name", "--remote-name-all", "-J", "--remote-header-name"):
        c.change("saves the download under a name taken from the URL")


@handles("wget", "wget2")
def _wget(c: Cmd) -> None:
    long = """--output-document --output-file --append-output --directory-prefix --input-file
        --tries --timeout --user-agent --execute --wait --quota --level --accept --reject
        --domains --header --post-data --post-file --method --body-data --body-file --user
        --password"""
    o = opts(c.args, "OoaPitTUewQlARDIXB", long)
    if o.has("--post-data", "--post-file", "--method", "--body-data", "--body-file"):
        c.unknown("sends data to a server: its remote effect is unknown")
    c.write(o.get("-o", "--output-file", "-a", "--append-output"), "logs to")
    documents = o.get("-O", "--output-document")
    if documents:
        c.write([w for w in documents if w.value != "-"])
    elif not o.has("--spider"):
        c.change("saves the download under a name taken from the URL")


# -- commands that run other commands -----------------------------------------------------

_WRAPPERS: dict[str, tuple[str, str, int]] = {
    # program: (short options with a value, long options with a value, words before the command)
    "sudo": ("ugChpDrtTUR", "--user --group --host --prompt --chdir --role --type --chroot", 0),
    "doas": ("uC", "", 0),
    "nice": ("n", "--adjustment", 0),
    "nohup": ("", "", 0),
    "stdbuf": ("ioe", "--input --output --error", 0),
    "ionice": ("cnpPu", "--class --classdata --pid --pgid --uid", 0),
    "setsid": ("", "", 0),
    "timeout": ("sk", "--signal --kill-after", 1),
    "time": ("of", "--output --format", 0),
    "builtin": ("", "", 0),
    "exec": ("a", "", 0),
    "command": ("", "", 0),
    "chronic": ("", "", 0),
    "unbuffer": ("", "", 0),
}


@handles(*_WRAPPERS)
def _wrapper(c: Cmd) -> None:
    short, long, skip = _WRAPPERS[c.name]
    o = opts(c.args, short, long, stop=True)
    if c.name == "time":
        c.write(o.get("-o", "--output"))
    if c.name == "command" and o.has("-v", "-V"):
        return
    if c.name == "sudo" and o.has("-e", "--edit"):
        c.write(o.pos, "edits")
        return
    inner = o.pos[skip:]
    if inner:
        c.run(inner, chdir=o.last("-D", "--chdir") if c.name == "sudo" else None)
    elif c.name in ("sudo", "doas") and o.has("-s", "--shell", "-i", "--login"):
        c.unknown("opens a root shell: effect unknown")


@handles("env")
def _env(c: Cmd) -> None:
    o = opts(c.args, "uCS", "--unset --chdir --split-string", stop=True)
    inner = list(o.pos)
    split = o.last("-S", "--split-string")
    if split is not None:
        c.script(static([split, *inner]), "runs a command string")
    elif inner:
        c.run(inner, chdir=o.last("-C", "--chdir"))


@handles("xargs")
def _xargs(c: Cmd) -> None:
    long = "--arg-file --delimiter --max-args --max-procs --max-chars --process-slot-var"
    o = opts(c.args, "adEILnPs", long, stop=True)
    inner = o.pos or [lit("echo")]
    token = o.last("-I")
    if token is None and o.has("-i", "--replace"):
        token = o.last("-i", "--replace") or lit("{}")
    if token is not None and token.value:
        mark = token.value
        c.run([dyn(w) if mark in (w.value or "") else w for w in inner], fed=False)
    else:
        c.run(inner, fed=True)


@handles("watch")
def _watch(c: Cmd) -> None:
    o = opts(c.args, "nq", "--interval --equexit", stop=True)
    if o.has("-x", "--exec"):
        c.run(o.pos)
    elif o.pos:
        c.script(static(o.pos))


@handles("eval")
def _eval(c: Cmd) -> None:
    c.script(static(c.args), "evaluates a string")


@handles("trap")
def _trap(c: Cmd) -> None:
    o = opts(c.args)
    if len(o.pos) >= 2 and o.pos[0].value != "-" and not o.has("-l", "-p"):
        c.script(o.pos[0].value, "sets a trap")


@handles("source", ".")
def _source(c: Cmd) -> None:
    c.unknown("runs a shell script in this shell: effect unknown")


@handles("bash", "sh", "dash", "zsh", "ksh", "ash", "mksh", "fish")
def _shell(c: Cmd) -> None:
    args, i, command, noexec, stdin = c.args, 0, False, False, False
    while i < len(args):
        value = args[i].value
        if value is None or len(value) < 2 or value[0] not in "-+":
            break
        i += 1
        if value == "--":
            break
        if value in ("--rcfile", "--init-file"):
            i += 1
        elif not value.startswith("--"):
            command |= value[0] == "-" and "c" in value
            noexec |= value[0] == "-" and "n" in value
            stdin |= value[0] == "-" and "s" in value
            i += "o" in value[1:] or "O" in value[1:]
    rest = args[i:]
    if command:
        if rest:
            c.script(rest[0].value)
    elif noexec:
        return
    elif rest and not stdin:
        c.unknown(f"runs the script {rest[0].raw}: effect unknown")
    else:
        c.unknown("reads commands from stdin: effect unknown")


# -- interpreters -------------------------------------------------------------------------

PYTHON = re.compile(r"python[0-9.]*|pypy[0-9.]*|py")
_PY_PURE_CALLS = words(
    """print len str repr int float bool abs round min max sum sorted list tuple dict set
    frozenset range hex oct bin chr ord format divmod pow all any enumerate zip reversed"""
)
_PY_MODULES = frozenset({"sys", "platform", "math"})


def _python(c: Cmd) -> None:
    args, i = c.args, 0
    while i < len(args):
        value = args[i].value
        if value in VERSION_ARGS:
            return
        if value is None or value == "-" or not value.startswith("-"):
            break
        i += 1
        for k, letter in enumerate(value[1:], start=2):
            if letter not in "cmWX" or value.startswith("--"):
                continue
            given = value[k:] or (args[i].value if i < len(args) else None)
            i += not value[k:]
            if letter == "c":
                _python_code(c, given)
                return
            if letter == "m":
                _python_module(c, given, args[i:])
                return
            break
    if i < len(args):
        c.unknown(f"runs the script {args[i].raw}: effect unknown")
    else:
        c.unknown("starts an interpreter reading stdin: effect unknown")


def _python_code(c: Cmd, code: str | None) -> None:
    if code is None or not _python_pure(code):
        c.unknown("runs inline code: effect unknown")


def _python_pure(code: str) -> bool:
    """Only imports of sys/platform/math and expressions calling pure builtins (print)."""
    import ast

    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    imported: set[str] = set()
    for stmt in tree.body:
        if isinstance(stmt, ast.Import):
            if any(a.name not in _PY_MODULES or a.asname for a in stmt.names):
                return False
            imported.update(a.name for a in stmt.names)
        elif not isinstance(stmt, ast.Expr) or not _python_expr(stmt.value, imported):
            return False
    return True


def _python_expr(node: object, imported: set[str]) -> bool:
    import ast

    for sub in ast.walk(node):  # type: ignore[arg-type]
        if isinstance(sub, ast.Lambda | ast.NamedExpr | ast.Await | ast.Yield | ast.YieldFrom):
            return False
        if isinstance(sub, ast.Attribute) and sub.attr.startswith("_"):
            return False
        if isinstance(sub, ast.Name) and sub.id.startswith("__"):
            return False
        if isinstance(sub, ast.Call) and not _python_call(sub.func, imported):
            return False
    return True


def _python_call(func: object, imported: set[str]) -> bool:
    import ast

    if isinstance(func, ast.Name):
        return func.id in _PY_PURE_CALLS
    if isinstance(func, ast.Attribute):
        base = func.value
        if isinstance(base, ast.Name):
            return base.id in imported and base.id != "sys"
        return isinstance(base, ast.Constant | ast.JoinedStr)
    return False


def _python_module(c: Cmd, module: str | None, rest: Sequence[Word]) -> None:
    if module == "json.tool":
        c.write(opts(rest, "", "--indent").pos[1:2])
    elif module in ("venv", "virtualenv"):
        c.write(opts(rest, "", "--prompt").pos, "creates a virtual environment in")
    elif module in ("compileall", "py_compile"):
        c.change("writes bytecode files")
    elif module is not None and (module in HANDLERS or module in TABLES or module in BUILD_TOOLS):
        c.run([lit(module), *rest])
    else:
        c.unknown(f"runs the module {module or '(not known statically)'}: effect unknown")


@handles("perl", "ruby")
def _perl(c: Cmd) -> None:
    args, i, inline, in_place = c.args, 0, False, False
    while i < len(args):
        value = args[i].value
        if value in VERSION_ARGS or value == "-v":
            return
        if value is None or len(value) < 2 or value[0] != "-" or value.startswith("--"):
            i += value == "--"
            break
        i += 1
        for k, letter in enumerate(value[1:], start=2):
            if letter in "eE":
                inline, i = True, i + (k > len(value) - 1)
            in_place |= letter == "i"
            if letter in "eEiMmIlx0C":
                break  # the rest of the word is this option's value
    if in_place:
        c.write(args[i if inline else i + 1 :], "modifies in place")
    if inline:
        c.unknown("runs inline code: effect unknown")
    elif i < len(args):
        c.unknown(f"runs the script {args[i].raw}: effect unknown")
    else:
        c.unknown("starts an interpreter reading stdin: effect unknown")


@handles("node", "nodejs", "php")
def _node(c: Cmd) -> None:
    values = [w.value for w in c.args]
    if values and values[0] in VERSION_ARGS | {"-v", "-l"}:
        return  # version, help; php -l lints
    if any(v in ("-e", "--eval", "-p", "--print", "-r") for v in values):
        c.unknown("runs inline code: effect unknown")
    elif c.args:
        c.unknown(f"runs the script {c.args[0].raw}: effect unknown")
    else:
        c.unknown("starts an interpreter reading stdin: effect unknown")


# -- git ----------------------------------------------------------------------------------

_GIT_READ = words(
    """status log diff show blame annotate rev-parse rev-list ls-files ls-tree ls-remote grep
    describe shortlog cat-file show-ref for-each-ref merge-base name-rev cherry whatchanged
    count-objects fsck verify-commit verify-tag verify-pack check-ignore check-attr
    check-mailmap check-ref-format var help version range-diff show-branch diff-tree diff-index
    diff-files get-tar-commit-id show-index"""
)
_GIT_CHANGE: dict[str, str] = {
    "add": "stages changes in the index",
    "commit": "records a commit",
    "fetch": "updates refs from a remote",
    "push": "updates a remote repository",
    "pull": "merges remote changes into the work tree",
    "switch": "switches branches, rewriting the work tree",
    "reset": "moves HEAD and resets the index (and with --hard the work tree)",
    "stash": "changes the stash and the work tree",
    "apply": "applies a patch to the work tree",
    "init": "creates a repository",
}
for _name in words("merge rebase cherry-pick revert am"):
    _GIT_CHANGE[_name] = "rewrites history and the work tree"
for _name in words(
    """gc prune repack pack-refs maintenance update-index update-ref write-tree commit-tree
    read-tree mktag mktree replace filter-branch fast-import rerere lfs"""
):
    _GIT_CHANGE[_name] = "changes the repository"
_GIT_DRY = {
    "add": ("-n", "--dry-run"),
    "rm": ("-n", "--dry-run"),
    "mv": ("-n", "--dry-run"),
    "clean": ("-n", "--dry-run"),
    "commit": ("--dry-run",),
    "fetch": ("--dry-run",),
    "push": ("-n", "--dry-run"),
    "prune": ("-n", "--dry-run"),
}
#: Subcommands whose first word picks a read-only or a changing action.
_GIT_NESTED: dict[str, frozenset[str]] = {
    "stash": words("list show"),
    "remote": words("show get-url -v --verbose"),
    "worktree": words("list"),
    "notes": words("list show get-ref"),
    "submodule": words("status summary"),
    "bisect": words("log visualize view terms"),
    "reflog": words("show exists"),
    "sparse-checkout": words("list"),
    "bundle": words("verify list-heads"),
}
_GIT_GLOBAL_VALUE = words("-C -c --git-dir --work-tree --namespace --exec-path --config-env")


@handles("git")
def _git(c: Cmd) -> None:
    args, i, cwd = c.args, 0, c.cwd
    while i < len(args) and (args[i].value or "").startswith("-"):
        value = args[i].value or ""
        if value in VERSION_ARGS:
            return
        if value == "-C" and i + 1 < len(args):
            cwd = norm(args[i + 1], cwd)
        i += 2 if value in _GIT_GLOBAL_VALUE else 1
    if i >= len(args):
        return
    sub, g = args[i].value, replace(c, args=args[i + 1 :], cwd=cwd)
    if sub is None:
        c.unknown("runs a git subcommand that is not known statically: effect unknown")
    elif sub in _GIT_DRY and opts(g.args).has(*_GIT_DRY[sub]):
        return
    elif sub in _GIT_SUBS:
        _GIT_SUBS[sub](g)
    elif sub in _GIT_NESTED:
        _git_nested(g, sub)
    elif sub in _GIT_READ:
        g.write(opts(g.args, "", "--output").get("--output"))
    elif sub in _GIT_CHANGE:
        g.change(_GIT_CHANGE[sub])
    else:
        c.unknown(f"has an unknown git subcommand ({sub}; an alias?): effect unknown")


def _git_nested(g: Cmd, sub: str) -> None:
    first = opts(g.args).pos[:1]
    action = first[0].value if first else None
    if first and action is None:
        g.unknown("uses a git action that is not known statically: effect unknown")
    elif action in _GIT_NESTED[sub] or (action is None and sub not in ("stash", "bisect")):
        return
    elif (sub, action) == ("worktree", "add"):
        g.write(opts(g.args[1:], "bB", "--reason").pos[:1], "adds a worktree at")
    elif (sub, action) == ("bundle", "create"):
        g.write(opts(g.args[1:]).pos[:1])
    elif sub == "submodule" and action == "foreach":
        g.script(static(opts(g.args[1:]).pos))
    else:
        g.change(_GIT_CHANGE.get(sub, "changes the repository"))


def _git_rm(g: Cmd) -> None:
    o = opts(g.args, "", "--pathspec-from-file")
    if o.has("--cached"):
        g.change("removes paths from the index")
    else:
        g.delete(o.pos)


def _git_mv(g: Cmd) -> None:
    o = opts(g.args)
    g.delete(o.pos[:-1], "moves away")
    g.write(o.pos[-1:])


def _git_clean(g: Cmd) -> None:
    o = opts(g.args, "e", "--exclude")
    g.delete(o.pos or [lit(".")], "deletes untracked files under")


def _git_checkout(g: Cmd) -> None:
    o = opts(g.args, "bB", "--orphan --conflict")
    paths = o.pos[o.dashdash :] if o.dashdash is not None else []
    if o.has("-b", "-B", "--orphan") or (not paths and [w.value for w in o.pos] != ["."]):
        g.change("switches branches, rewriting the work tree")
    else:
        g.write(paths or o.pos, "restores")


def _git_restore(g: Cmd) -> None:
    o = opts(g.args, "s", "--source --pathspec-from-file")
    if o.has("-S", "--staged") and not o.has("-W", "--worktree"):
        g.change("restores paths in the index")
    else:
        g.write(o.pos, "restores")


def _git_init_clone(g: Cmd, clone: bool) -> None:
    long = "--branch --origin --depth --config --reference --separate-git-dir --template"
    o = opts(g.args, "bocju" if clone else "b", long + " --filter --initial-branch --upload-pack")
    if clone and len(o.pos) < 2:
        url = (o.pos[0].value or "").rstrip("/") if o.pos else ""
        name = posixpath.basename(url.rpartition(":")[2]).removesuffix(".git")
        where = [lit(name)] if name else [Word(url or "clone", None)]
    else:
        where = o.pos[1:2] if clone else o.pos[:1] or [lit(".")]
    if not clone and not o.has("--bare"):
        where = [
            Word(w.raw, posixpath.join(w.value, ".git"), w.tilde) if w.value else w for w in where
        ]
    g.write(where, "clones into" if clone else "creates a repository in")


def _git_branch(g: Cmd) -> None:
    o = opts(g.args, "u", "--set-upstream-to --format --sort --contains --merged --points-at")
    changing = "-d -D --delete -m -M --move -c -C --copy -u --set-upstream-to --unset-upstream"
    if o.has(*changing.split(), "--edit-description", "-f", "--force"):
        g.change("changes branches")
    elif o.pos and not o.has(
        "-l",
        "--list",
        "-a",
        "--all",
        "-r",
        "--remotes",
        "--contains",
        "--no-contains",
        "--merged",
        "--no-merged",
        "--points-at",
        "-v",
        "-vv",
    ):
        g.change("creates a branch")


def _git_tag(g: Cmd) -> None:
    o = opts(g.args, "mFu", "--message --file --contains --points-at --merged --sort --format")
    listing = "-l --list -v --verify --contains --no-contains --points-at --merged --no-merged"
    if o.has("-d", "--delete"):
        g.change("deletes a tag")
    elif o.has(*listing.split()):
        return
    elif o.pos or o.has("-a", "-s", "-m", "-F", "-f", "--annotate", "--sign", "--message"):
        g.change("creates a tag")


_GIT_CONFIG_WRITE = words(
    "--add --unset --unset-all --replace-all --rename-section --remove-section --edit -e"
)
_GIT_CONFIG_READ = words("--get --get-all --get-regexp --get-urlmatch --list -l --get-color")


def _git_config(g: Cmd) -> None:
    o = opts(g.args, "f", "--file --blob --type --default --comment")
    first = o.pos[0].value if o.pos else None
    if o.has(*_GIT_CONFIG_WRITE) or first in ("set", "unset", "rename-section", "remove-section"):
        g.change("changes git configuration")
    elif o.has(*_GIT_CONFIG_READ) or first in ("get", "list") or len(o.pos) <= 1:
        return
    else:
        g.change("changes git configuration")


def _git_apply(g: Cmd) -> None:
    o = opts(g.args, "pC", "--directory --exclude --include --whitespace")
    if o.has("--check", "--stat", "--numstat", "--summary") and not o.has("--apply"):
        return
    g.change("applies a patch to the index" if o.has("--cached") else _GIT_CHANGE["apply"])


def _git_symbolic_ref(g: Cmd) -> None:
    o = opts(g.args, "m")
    if o.has("-d", "--delete") or len(o.pos) > 1:
        g.change("changes a symbolic ref")


def _git_archive(g: Cmd) -> None:
    g.write(opts(g.args, "o", "--output --format --prefix --remote").get("-o", "--output"))


def _git_format_patch(g: Cmd) -> None:
    o = opts(g.args, "ov", "--output-directory --subject-prefix --output")
    if o.has("-o", "--output-directory"):
        g.write(o.get("-o", "--output-directory"))
    elif o.has("--output"):
        g.write(o.get("--output"))
    elif not o.has("--stdout"):
        g.change("writes patch files under generated names")


def _git_hash_object(g: Cmd) -> None:
    if opts(g.args, "t", "--path").has("-w"):
        g.change("writes objects to the repository")


_GIT_SUBS: dict[str, Handler] = {
    "rm": _git_rm,
    "mv": _git_mv,
    "clean": _git_clean,
    "checkout": _git_checkout,
    "restore": _git_restore,
    "init": lambda g: _git_init_clone(g, clone=False),
    "clone": lambda g: _git_init_clone(g, clone=True),
    "branch": _git_branch,
    "tag": _git_tag,
    "config": _git_config,
    "apply": _git_apply,
    "symbolic-ref": _git_symbolic_ref,
    "archive": _git_archive,
    "format-patch": _git_format_patch,
    "hash-object": _git_hash_object,
}


# -- find, sed, awk -----------------------------------------------------------------------

_FIND_VALUE = words(
    """-name -iname -path -ipath -wholename -iwholename -regex -iregex -type -xtype -user -group
    -uid -gid -perm -size -mtime -mmin -atime -amin -ctime -cmin -newer -anewer -cnewer -maxdepth
    -mindepth -links -inum -samefile -printf -fstype -context -lname -ilname -used -regextype
    -files0-from"""
)


@handles("find")
def _find(c: Cmd) -> None:
    args, i = c.args, 0
    while i < len(args) and args[i].value in ("-H", "-L", "-P"):
        i += 1
    roots: list[Word] = []
    while i < len(args) and not _find_expression(args[i]):
        roots.append(args[i])
        i += 1
    roots = roots or [lit(".")]
    while i < len(args):
        action, i = args[i].value or "", i + 1
        if action == "-delete":
            c.delete(roots, "deletes matching files under")
        elif action in ("-exec", "-execdir", "-ok", "-okdir"):
            end = i
            while end < len(args) and args[end].value not in (";", "+"):
                end += 1
            inner = [dyn(w) if "{}" in (w.value or "") else w for w in args[i:end]]
            c.run(inner, lose_cwd=action.endswith("dir"))
            i = end + 1
        elif action in ("-fprint", "-fprint0", "-fls", "-fprintf"):
            c.write(args[i : i + 1])
            i += 2 if action == "-fprintf" else 1
        elif action in _FIND_VALUE or action.startswith("-newer"):
            i += 1


def _find_expression(word: Word) -> bool:
    value = word.value
    return value is not None and (value.startswith("-") or value in ("(", ")", "!", ","))


@handles("sed", "gsed")
def _sed(c: Cmd) -> None:
    o = opts(c.args, "efl", "--expression --file --line-length")
    suffix = _sed_in_place(c.args)
    scripts = o.get("-e", "--expression")
    files = o.pos if scripts or o.has("-f", "--file") else o.pos[1:]
    scripts = scripts or ([] if o.has("-f", "--file") else o.pos[:1])
    if suffix is not None:
        c.write(files, "modifies in place")
        if suffix:
            c.write([Word(w.raw + suffix, w.value + suffix, w.tilde) for w in files if w.value])
    if o.has("--sandbox"):
        return
    if o.has("-f", "--file"):
        c.unknown("runs a sed script file: effect unknown")
    for script in scripts:
        found = _sed_scan(script.value) if script.value is not None else None
        if found is None:
            c.unknown("has a sed script that is not understood statically: effect unknown")
            continue
        c.write([lit(name) for name in found[0]])
        if found[1]:
            c.unknown("runs shell commands from its script (`e`): effect unknown")


def _sed_in_place(args: Sequence[Word]) -> str | None:
    """The backup suffix of -i/--in-place ('' for none), or None when not editing in place."""
    for word in args:
        value = word.value or ""
        if value == "--":
            return None
        if value.startswith("--in-place"):
            return value.partition("=")[2]
        if value.startswith("-") and not value.startswith("--"):
            for k, letter in enumerate(value[1:], start=2):
                if letter in "efl":
                    break
                if letter == "i":
                    return value[k:]
    return None


def _sed_scan(s: str) -> tuple[list[str], bool] | None:
    """Files a sed script writes (`w`, `W`, `s///w`) and whether it runs commands (`e`)."""
    written: list[str] = []
    runs, i, n = False, 0, len(s)
    while i < n:
        if s[i] in " \t\n;}":
            i += 1
            continue
        if s[i] == "#":
            i = _eol(s, i)
            continue
        i = _sed_addresses(s, i)
        if i < 0 or i >= n:
            return None
        command, i = s[i], i + 1
        if command in "aic":
            i = _eol(s, i, continued=True)
        elif command in ":btTv":
            i = _upto(s, i, ";\n")
        elif command in "rRwW":
            written += [s[i : _eol(s, i)].strip()] if command in "wW" else []
            i = _eol(s, i)
        elif command == "e":
            runs, i = True, _eol(s, i)
        elif command in "sy":
            i = _delimited(s, i, 2)
            if i < 0:
                return None
            if command == "s":
                i, flag_writes, flag_runs = _sed_flags(s, i)
                if i < 0:
                    return None
                written, runs = written + flag_writes, runs or flag_runs
        elif command in "qQlL":
            i = _skip(s, i, " \t0123456789")
        elif command not in "{pPdDnNgGhHxz=F":
            return None
    return written, runs


def _sed_flags(s: str, i: int) -> tuple[int, list[str], bool]:
    runs = False
    while i < len(s) and s[i] not in ";\n}":
        if s[i] == "w":
            end = _eol(s, i + 1)
            return end, [s[i + 1 : end].strip()], runs
        if s[i] not in "gpiImMe0123456789 \t":
            return -1, [], runs
        runs |= s[i] == "e"
        i += 1
    return i, [], runs


def _sed_addresses(s: str, i: int) -> int:
    i = _sed_address(s, _skip(s, i, " \t"))
    if 0 <= i < len(s) and s[i] == ",":
        i = _skip(s, i + 1, " \t")
        i = _skip(s, i + 1, "0123456789") if i < len(s) and s[i] in "+~" else _sed_address(s, i)
    if 0 <= i < len(s):
        i = _skip(s, i, " \t")
        if i < len(s) and s[i] == "!":
            i = _skip(s, i + 1, " \t")
    return i


def _sed_address(s: str, i: int) -> int:
    if i >= len(s):
        return i
    if s[i].isdigit():
        i = _skip(s, i, "0123456789")
        return _skip(s, i + 1, "0123456789") if i < len(s) and s[i] == "~" else i
    if s[i] == "$":
        return i + 1
    if s[i] == "/" or (s[i] == "\\" and i + 1 < len(s)):
        i = _delimited(s, i + (s[i] == "\\"), 1)
        return i if i < 0 else _skip(s, i, "IM")
    return i


def _delimited(s: str, i: int, parts: int) -> int:
    """The index after `parts` parts delimited by s[i] (s/a/b/ has 2), or -1."""
    if i >= len(s) or s[i] in "\n\\":
        return -1
    delimiter, i = s[i], i + 1
    for _ in range(parts):
        while i < len(s) and s[i] != delimiter:
            i += 2 if s[i] == "\\" else 1
        if i >= len(s):
            return -1
        i += 1
    return i


def _eol(s: str, i: int, continued: bool = False) -> int:
    while i < len(s) and s[i] != "\n":
        i += 2 if continued and s[i] == "\\" else 1
    return i


def _upto(s: str, i: int, stops: str) -> int:
    while i < len(s) and s[i] not in stops:
        i += 1
    return i


def _skip(s: str, i: int, chars: str) -> int:
    while i < len(s) and s[i] in chars:
        i += 1
    return i


@handles("awk", "gawk", "mawk", "nawk")
def _awk(c: Cmd) -> None:
    o = opts(c.args, "FvfeilE", "--field-separator --assign --file --source --include --load")
    includes = [w.value for w in o.get("-i", "--include")]
    programs = o.get("-e", "--source") or ([] if o.has("-f", "--file", "-E") else o.pos[:1])
    files = o.pos if o.get("-e", "--source") or o.has("-f", "--file", "-E") else o.pos[1:]
    if "inplace" in includes or "inplace.awk" in includes:
        c.write([w for w in files if not _ASSIGNMENT.match(w.raw)], "modifies in place")
    if o.has("-S", "--sandbox"):
        return
    if o.has("-f", "--file", "-E"):
        c.unknown("runs an awk program file: effect unknown")
    for program_word in programs:
        found = _awk_scan(program_word.value) if program_word.value is not None else None
        if found is None:
            c.unknown("has an awk program that is not understood statically: effect unknown")
            continue
        written, commands = found
        c.write(
            [lit(name) if name is not None else Word("(an expression)", None) for name in written]
        )
        for command in commands:
            c.script(command, "runs a command from its program")


_AWK_TWO = ("||", "&&", ">>", "|&", "==", "<=", ">=", "!=", "++", "--", "+=", "-=", "*=", "/=")
_AWK_REGEX_AFTER = words("print printf return in ~ !~")


def _awk_tokens(p: str) -> list[tuple[str, str]] | None:
    out: list[tuple[str, str]] = []
    i, n = 0, len(p)
    while i < n:
        ch = p[i]
        if ch in " \t\r" or (ch == "\\" and p[i + 1 : i + 2] == "\n"):
            i += 1 if ch != "\\" else 2
        elif ch == "#":
            i = _eol(p, i)
        elif ch == '"' or (ch == "/" and _awk_regex_allowed(out)):
            end = _delimited(p, i, 1)
            if end < 0:
                return None
            body = p[i + 1 : end - 1].replace('\\"', '"').replace("\\\\", "\\")
            out.append(("str" if ch == '"' else "re", body))
            i = end
        elif ch.isalnum() or ch == "_":
            end = i
            while end < n and (p[end].isalnum() or p[end] == "_"):
                end += 1
            out.append(("name", p[i:end]))
            i = end
        else:
            size = 2 if p[i : i + 2] in _AWK_TWO else 1
            out.append(("op", p[i : i + size]))
            i += size
    return out


def _awk_regex_allowed(out: list[tuple[str, str]]) -> bool:
    if not out:
        return True
    kind, text = out[-1]
    return (kind == "op" and text not in (")", "]", "$")) or text in _AWK_REGEX_AFTER


def _awk_scan(program_text: str) -> tuple[list[str | None], list[str | None]] | None:
    """Files written by print/printf redirections and commands run (system, pipes, getline)."""
    tokens = _awk_tokens(program_text)
    if tokens is None:
        return None
    written: list[str | None] = []
    commands: list[str | None] = []
    depth, print_depth = 0, -1
    tokens.append(("op", ";"))
    for k, (kind, text) in enumerate(tokens[:-1]):
        after = tokens[k + 1]
        target = after[1] if after[0] == "str" else None
        if kind == "name" and text in ("print", "printf"):
            print_depth = depth
        elif text in ("(", "["):
            depth += 1
        elif text in (")", "]"):
            depth -= 1
        elif text in (";", "\n", "{", "}"):
            print_depth = -1
        elif kind == "op" and text in (">", ">>") and depth == print_depth:
            written.append(target)
        elif kind == "op" and text in ("|", "|&") and depth == print_depth:
            commands.append(target)
        elif kind == "op" and text in ("|", "|&") and after == ("name", "getline"):
            before = tokens[k - 1] if k else ("op", "")
            commands.append(before[1] if before[0] == "str" else None)
        elif kind == "name" and text == "system":
            literal = tokens[k + 2 : k + 4]
            simple = len(literal) == 2 and literal[0][0] == "str" and literal[1][1] == ")"
            commands.append(literal[0][1] if simple else None)
    return written, commands


# -- subcommand tables: package managers, containers, services ----------------------------


@struct
class Table:
    """A program driven by subcommands; `a:b` names a two-word subcommand."""

    ro: frozenset[str]
    mut: frozenset[str]
    run: frozenset[str] = frozenset()
    what: str = "changes installed packages"
    run_what: str = "runs project scripts or code: effect unknown"
    bare: str = READ_ONLY  # the class of an invocation without any argument
    argopts: frozenset[str] = frozenset()  # options before the subcommand that take a value
    flagged: frozenset[str] = frozenset()  # `sub:flag`: this flag makes sub mutating


def _table_of(ro: str, mut: str, run: str = "", **kw: str) -> Table:
    sets = {key: words(kw.pop(key, "")) for key in ("argopts", "flagged")}
    return Table(words(ro + " help"), words(mut), words(run), **kw, **sets)  # type: ignore[arg-type]


_NPM_MUT = """install i in ins inst insta instal isnt isnta isntal isntall add ci install-clean ic
    uninstall remove rm r un unlink update up upgrade udpate link ln prune dedupe ddp init
    create publish unpublish deprecate pack rebuild rb audit:fix cache shrinkwrap star unstar
    login logout adduser owner dist-tag access team token pkg version config install-test it
    install-ci-test cit set-script"""
_NPM_RO = """ls list ll la view info show v outdated search s se find help-search config:get
    config:list config:ls get root prefix bin whoami explain why doctor audit fund ping query
    sbom pkg:get cache:ls cache:verify docs repo bugs home"""
_PIP = _table_of(
    "list show freeze check search debug inspect index hash cache:list cache:dir cache:info "
    "config:list config:get config:debug",
    "install uninstall download wheel cache config",
    argopts="--log --proxy --cache-dir --python",
)
_APT = _table_of(
    "list search show showsrc policy depends rdepends madison changelog moo check",
    """install reinstall remove purge autoremove autopurge update upgrade full-upgrade
    dist-upgrade build-dep source download clean autoclean satisfy edit-sources markauto
    unmarkauto hold unhold""",
    what="changes system packages",
    argopts="-o -c -t --target-release",
)
_DOCKER = _table_of(
    """ps images inspect logs version info history top stats events port diff search
    container:ls container:ps container:inspect container:logs image:ls image:inspect
    image:history network:ls network:inspect volume:ls volume:inspect system:df system:info
    compose:ps compose:logs compose:config compose:images compose:ls compose:top
    compose:version context:ls context:show buildx:ls""",
    """build pull push rm rmi stop start restart kill create tag commit cp pause unpause rename
    update load import save login logout network volume system image container compose buildx
    context builder""",
    "run exec attach compose:run compose:exec container:run container:exec",
    what="changes containers, images or volumes",
    run_what="runs a container: effect unknown",
    argopts="-H --host --context -c --config --log-level -l -f --file -p --project-name "
    "--env-file --profile",
)
TABLES: dict[str, Table] = {
    "pip": _PIP,
    "npm": _table_of(
        _NPM_RO,
        _NPM_MUT,
        "run run-script rum urn test tst t start stop restart exec x explore",
        argopts="--prefix -C -w --workspace",
    ),
    "pnpm": _table_of(
        "ls list ll view info outdated why audit root bin store:path licenses",
        """install i add remove rm uninstall un update up upgrade link ln unlink prune import
        rebuild rb fetch dedupe patch patch-commit publish pack init store env setup""",
        "run test t start exec dlx create",
        argopts="-C --dir --filter -F",
    ),
    "yarn": _table_of(
        "list info why versions outdated licenses owner:list tag:list config:get config:list "
        "bin dir audit",
        """add remove install upgrade up upgrade-interactive link unlink init import dedupe
        autoclean cache global set version publish pack policies config tag owner""",
        "run test start exec dlx node create workspace workspaces",
        bare=MUTATING,
        argopts="--cwd",
    ),
    "bun": _table_of(
        "pm:ls outdated",
        "install i add a remove rm update link unlink init create pm upgrade",
        "run test x exec build",
    ),
    "apt": _APT,
    "apt-get": _APT,
    "aptitude": _APT,
    "apt-mark": _table_of(
        "showauto showmanual showhold showinstall showremove showpurge",
        "auto manual hold unhold minimize-manual install remove purge",
        what="changes system package marks",
    ),
    "gem": _table_of(
        "list search info environment env contents which specification spec query dependency "
        "outdated owner",
        "install i uninstall update cleanup build push yank pristine sources fetch unpack",
        "exec open",
    ),
    "cargo": _table_of(
        "search locate-project verify-project pkgid version read-manifest report",
        """install uninstall add remove rm new init update fix fmt clean publish
        generate-lockfile vendor yank login logout owner package""",
        "build b check c test t run r bench doc d clippy rustc rustdoc miri",
        what="changes dependencies, installed tools or project files",
        run_what="builds (and may run) project code: effect unknown",
    ),
    "go": _table_of(
        "version doc list env mod:graph mod:verify mod:why",
        """install get fmt clean mod mod:tidy mod:download mod:init mod:edit mod:vendor work
        fix""",
        "build test run vet tool generate",
        what="changes modules, installed tools or project files",
        run_what="builds (and may run) project code: effect unknown",
        flagged="env:-w env:-u",
    ),
    "brew": _table_of(
        """list ls info search config doctor deps leaves outdated uses home desc --prefix
        --cellar --cache --repository cat formulae casks commands log options shellenv""",
        """install uninstall remove rm reinstall upgrade update tap untap link unlink cleanup
        pin unpin autoremove services bundle postinstall edit create migrate""",
    ),
    "conda": _table_of(
        "list info search env:list config compare doctor notices activate deactivate",
        "install remove uninstall update upgrade create clean init env rename",
        "run",
        flagged="config:--set config:--add config:--remove config:--append config:--prepend "
        "config:--remove-key",
    ),
    "poetry": _table_of(
        "show check about list search env:info env:list",
        "add remove install update lock init new build publish self sync env:remove env:use "
        "cache:clear",
        "run shell",
    ),
    "uv": _table_of(
        """pip:list pip:show pip:freeze pip:check pip:tree python:list python:find python:dir
        tool:list tool:dir cache:dir version""",
        """add remove sync lock init venv pip pip:install pip:uninstall pip:sync pip:compile
        tool tool:install tool:uninstall tool:upgrade python python:install python:uninstall
        python:pin build publish cache cache:clean cache:prune self""",
        "run tool:run",
    ),
    "pipx": _table_of(
        "list environment",
        "install uninstall upgrade upgrade-all uninstall-all reinstall reinstall-all inject "
        "uninject ensurepath pin unpin",
        "run",
    ),
    "dnf": _table_of(
        "list info search provides whatprovides repolist repoinfo check-update history deplist "
        "repoquery check",
        """install remove erase update upgrade downgrade reinstall autoremove clean makecache
        group groupinstall groupremove distro-sync swap mark""",
        what="changes system packages",
    ),
    "apk": _table_of(
        "info search list policy stats dot verify audit version",
        "add del update upgrade fix cache fetch",
        what="changes system packages",
    ),
    "docker": _DOCKER,
    "podman": _DOCKER,
    "kubectl": _table_of(
        """get describe logs explain version api-resources api-versions cluster-info top auth
        diff wait events config:view config:get-contexts config:current-context
        config:get-clusters""",
        """apply create delete edit patch replace scale rollout set label annotate expose
        autoscale cordon uncordon drain taint cp config certificate""",
        "exec port-forward proxy attach debug run",
        what="changes cluster resources",
        run_what="runs or attaches to workloads: effect unknown",
        argopts="-n --namespace --context --cluster --kubeconfig -s --server --user -l "
        "--selector -o --output -f --filename -c --container",
    ),
    "systemctl": _table_of(
        """status show list-units list-unit-files list-sockets list-timers list-dependencies
        list-jobs is-active is-enabled is-failed is-system-running cat get-default
        show-environment""",
        """start stop restart reload try-restart reload-or-restart enable disable reenable mask
        unmask daemon-reload daemon-reexec kill reset-failed set-default edit isolate link preset
        set-environment unset-environment import-environment poweroff reboot halt suspend
        hibernate""",
        what="changes system services",
    ),
}
for _alias, _same in (
    ("yum", "dnf"),
    ("microdnf", "dnf"),
    ("mamba", "conda"),
    ("micromamba", "conda"),
):
    TABLES[_alias] = TABLES[_same]
_PIP_NAME = re.compile(r"pip[0-9.]*")


def _table(c: Cmd, t: Table) -> None:
    subs: list[Word] = []
    skip = False
    for word in c.args:
        value = word.value
        if skip or (value is not None and value.startswith("-")):
            skip = not skip and value in t.argopts
            continue
        subs.append(word)
        if len(subs) == 2:
            break
    if not subs:
        if t.bare == MUTATING and not any(w.value in VERSION_ARGS for w in c.args):
            c.change(t.what)
        return
    first = subs[0].value
    if first is None:
        c.unknown("runs a subcommand that is not known statically: effect unknown")
        return
    second = subs[1].value if len(subs) > 1 else None
    if any(f"{first}:{w.value}" in t.flagged for w in c.args):
        c.change(t.what)
        return
    for key in (f"{first}:{second}", first):
        if key in t.ro:
            return
        if key in t.mut:
            c.change(t.what)
            return
        if key in t.run:
            c.unknown(t.run_what)
            return
    c.unknown(f"has an unknown {c.name} subcommand ({first}): effect unknown")


# -- formatters, linters, system tools ----------------------------------------------------

_FORMATTERS: dict[str, tuple[bool, str, str, str, str]] = {
    # program: (writes by default, flags that make it write, flags that make it only check,
    #           short options with a value, long options with a value)
    "black": (
        True,
        "",
        "--check --diff",
        "lt",
        "--line-length --target-version --config "
        "--include --exclude --extend-exclude --force-exclude --stdin-filename",
    ),
    "isort": (
        True,
        "",
        "--check-only --check -c --diff --stdout",
        "l",
        "--settings-path --line-length --profile",
    ),
    "autopep8": (False, "-i --in-place", "", "", "--max-line-length --select --ignore"),
    "yapf": (False, "-i --in-place", "", "", "--style"),
    "prettier": (False, "--write -w", "", "", "--config --plugin --parser --ignore-path"),
    "gofmt": (False, "-w", "", "r", ""),
    "rustfmt": (True, "", "--check", "", "--edition --config-path --config"),
    "clang-format": (False, "-i", "", "", ""),
    "shfmt": (False, "-w --write", "", "i", "--indent"),
}


@handles(*_FORMATTERS)
def _formatter(c: Cmd) -> None:
    by_default, write_flags, check_flags, short, long = _FORMATTERS[c.name]
    o = opts(c.args, short, long)
    if o.has(*VERSION_ARGS) or o.has(*check_flags.split()):
        return
    if by_default or o.has(*write_flags.split()):
        c.write([w for w in o.pos if w.value != "-"], "reformats")


@handles("ruff")
def _ruff(c: Cmd) -> None:
    o = opts(
        c.args,
        "o",
        "--config --select --ignore --line-length --target-version "
        "--exclude --output-file --output-format",
    )
    sub = o.pos[0].value if o.pos else None
    c.write(o.get("-o", "--output-file"))
    if o.has(*VERSION_ARGS) or sub in ("rule", "version", "help", "config", "linter"):
        return
    targets = o.pos[1:] if sub in ("check", "format") else o.pos
    if sub == "clean":
        c.change("deletes ruff caches")
    elif (sub == "format" and not o.has("--check", "--diff")) or o.has("--fix", "--unsafe-fixes"):
        c.write(targets or [lit(".")], "reformats or fixes files under")
    else:
        c.unknown("lints, writing .ruff_cache: effect unknown")


_DPKG_CHANGE = words(
    """-i --install -r --remove -P --purge --configure --unpack --set-selections
    --clear-selections --clear-avail --update-avail --merge-avail --add-architecture
    --remove-architecture --triggers-only -b --build -x --extract"""
)


@handles("dpkg")
def _dpkg(c: Cmd) -> None:
    if any(w.value in _DPKG_CHANGE or w.value is None for w in c.args):
        c.change("changes system packages")


_COMPILER_READ = VERSION_ARGS | {"-E", "-fsyntax-only", "-M", "-MM", "-v", "--print-search-dirs"}


@handles("gcc", "g++", "cc", "c++", "clang", "clang++")
def _compiler(c: Cmd) -> None:
    if not c.args or any(w.value in _COMPILER_READ for w in c.args):
        return
    outputs = [
        nxt if w.value == "-o" else lit(w.value[2:])
        for w, nxt in zip(c.args, [*c.args[1:], lit("")], strict=False)
        if w.value is not None and w.value.startswith("-o")
    ]
    if outputs:
        c.write(outputs)
    else:
        c.change("writes a.out or object files")


@handles("kill", "pkill", "killall", "skill")
def _kill(c: Cmd) -> None:
    o = opts(c.args, "snu", "--signal")
    if not o.has("-l", "-L", "--list", "--table", "-0"):
        c.change("signals processes", dynamic=False)


@handles("date")
def _date(c: Cmd) -> None:
    o = opts(c.args, "dfrs", "--date --file --reference --set")
    if o.has("-s", "--set") or any(not (w.value or "").startswith("+") for w in o.pos):
        c.change("sets the system clock", dynamic=False)


@handles("hostname", "crontab", "ulimit")
def _system_setting(c: Cmd) -> None:
    o = opts(c.args, "u" if c.name == "crontab" else "")
    if c.name == "crontab" and (o.has("-e", "-r") or (o.pos and not o.has("-l"))):
        c.change("changes the crontab", dynamic=False)
    elif c.name == "hostname" and (o.pos or o.has("-F", "--file")):
        c.change("sets the host name", dynamic=False)


@handles("yq")
def _yq(c: Cmd) -> None:
    o = opts(c.args, "I", "--indent --output-format --input-format")
    if o.has("-i", "--inplace"):
        c.write(o.pos[1:], "modifies in place")


@handles("uvx", "npx", "pnpx", "bunx")
def _package_runner(c: Cmd) -> None:
    values = [w.value for w in c.args]
    if not (values and values[0] in VERSION_ARGS):
        c.unknown("downloads and runs a package: effect unknown")


BUILD_TOOLS = words(
    """make gmake cmake ninja meson bazel bazelisk buck gradle gradlew mvn mvnw ant sbt scons
    tox nox pytest py.test jest vitest mocha karma ava tsc webpack vite rollup esbuild parcel
    turbo nx lerna rustc javac kotlinc scalac ghc dotnet swift
    swiftc zig ctest coverage mypy pyright pylint flake8 pyflakes eslint tslint stylelint
    rubocop golangci-lint pre-commit hatch pdm just invoke doit unittest doctest nosetests
    phpunit rspec rake bundle"""
)
_INTERPRETERS = words(
    "deno Rscript R lua luajit julia tclsh osascript pwsh powershell java groovy scala kotlin"
)
_REASONS = {
    "ssh": "runs commands on a remote host: effect unknown",
    "vim": "opens an editor: effect unknown",
    "vi": "opens an editor: effect unknown",
    "nvim": "opens an editor: effect unknown",
    "nano": "opens an editor: effect unknown",
    "emacs": "opens an editor: effect unknown",
    "code": "opens an editor: effect unknown",
    "ed": "runs a line editor: effect unknown",
}


def _fallback(c: Cmd) -> None:
    name = c.name
    known = name in BUILD_TOOLS or name in _INTERPRETERS
    if known and c.args and all(w.value in VERSION_ARGS for w in c.args):
        return
    if name in BUILD_TOOLS:
        c.unknown(
            "runs a build, test or lint tool: effect unknown (it may run project code "
            "and write outputs and caches)"
        )
    elif name in _INTERPRETERS:
        c.unknown("runs a program in an interpreter: effect unknown")
    elif name in _REASONS:
        c.unknown(_REASONS[name])
    elif "/" in name:
        c.unknown("runs a script or program by path: effect unknown")
    else:
        c.unknown(f"runs `{name}`, which is not a known program: effect unknown")


def dispatch(cmd: Cmd) -> None:
    """Judge one simple command by its program."""
    name = cmd.name
    if _PIP_NAME.fullmatch(name):
        name = cmd.name = "pip"
    handler = HANDLERS.get(name)
    if name in cmd.out.functions:
        return  # its body was classified where the function was defined
    if handler is not None:
        handler(cmd)
    elif name in READ_ONLY_PROGRAMS:
        return
    elif name in TABLES:
        _table(cmd, TABLES[name])
    elif PYTHON.fullmatch(name):
        _python(cmd)
    else:
        _fallback(cmd)
