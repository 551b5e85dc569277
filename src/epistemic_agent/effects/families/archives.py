"""Archives and compressors: tar, zip, unzip, gzip and friends."""

from __future__ import annotations

import re

from ..core import Cmd, Word, handles, lit, words
from ..options import Grammar, grammar, options

_TAR_VALUE = "fCbTXgNKLVHIF"
_TAR = grammar(
    "tar gtar bsdtar",
    "AcdrtuxGiklmMOoPpsSUvWwBhzjJZaf:C:b:T:X:g:N:K:L:V:H:I:F:",
    """file: directory: files-from: exclude-from: exclude: listed-incremental: newer:
    newer-mtime: after-date: starting-file: tape-length: label: format:
    use-compress-program: info-script: new-volume-script: rsh-command: to-command:
    checkpoint:: checkpoint-action: index-file: volno-file: owner: group: mode: mtime:
    transform: xform: strip-components: blocking-factor: record-size: quoting-style:
    quote-chars: no-quote-chars: backup:: suffix: occurrence:: sparse-version: pax-option:
    hole-detection: exclude-tag: exclude-tag-under: exclude-tag-all: exclude-ignore:
    exclude-ignore-recursive: level: warning: totals:: create append update catenate
    concatenate delete extract get list diff compare to-stdout absolute-names remove-files
    force-local""",
    risky="-c --create -r --append -u --update -A --catenate --delete -x --extract --get "
    "-I --use-compress-program -F --info-script --to-command --checkpoint-action "
    "--index-file -g --listed-incremental",
    note="the old form `tar czf A` is `tar -c -z -f A`. -c/-r/-u/-A/--delete write the -f "
    "archive; -x extracts into -C DIR or . (anywhere with -P); -g, --index-file and "
    "--volno-file are written; -I, -F, --to-command, --rsh-command and "
    "--checkpoint-action=exec run commands; an archive named HOST:FILE is reached over rsh",
)
_TAR_RUNS = words(
    "-I --use-compress-program -F --info-script --new-volume-script --to-command --rsh-command"
)
_REMOTE = re.compile(r"[^/]+:")


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
    o = options(c, _TAR, _tar_args(c.args))
    archive = o.last("-f", "--file")
    if o.has(*_TAR_RUNS) or any(
        "exec" in (w.value or "=exec") for w in o.get("--checkpoint-action")
    ):
        c.unknown("runs a command it is given: effect unknown")
    remote = archive is not None and _REMOTE.match(archive.value or "")
    if remote and not o.sure("--force-local"):
        c.unknown("reaches a remote archive over rsh: effect unknown")
    c.write(o.get("-g", "--listed-incremental", "--index-file", "--volno-file"))
    if o.has("-c", "--create", "-r", "--append", "-u", "--update", "-A", "--catenate"):
        c.write([archive] if archive and archive.value != "-" else [])
        if o.has("--remove-files"):
            c.delete(o.pos)
    elif o.has("--delete"):
        c.write([archive] if archive else [])
    elif o.has("-x", "--extract", "--get"):
        if o.has("-P", "--absolute-names"):
            c.write([Word("(the absolute paths in the archive)", None)], "extracts")
        if not o.sure("-O", "--to-stdout"):
            c.write([o.last("-C", "--directory") or lit(".")], "extracts files into")
    elif not o.has("-t", "--list", "-d", "--diff", "--compare", "--help", "--version"):
        c.unknown("has no recognised operation: effect unknown")


_UNZIP = grammar(
    "unzip",
    "d:P:x:ZlvtzpcfuonjCLVXaAbBKMqsUWT^2D",
    note="extracts into -d DIR (or .) unless -l, -v, -t, -z, -Z, -p or -c; with -: paths may "
    "leave it",
    abbrev=False,
)


@handles("unzip")
def _unzip(c: Cmd) -> None:
    o = options(c, _UNZIP)
    if not o.sure("-l", "-t", "-v", "-z", "-Z", "-p", "-c") and o.pos:
        c.write([o.last("-d") or lit(".")], "extracts files into")
        if o.has("-:"):
            c.write([Word("(paths in the archive that leave it)", None)], "extracts")


#: zip's multi-letter options, and the options that take a value
_ZIP_LONG = {"-sf", "-su", "-sb", "-sc", "-sd", "-so", "-sv", "-la", "-li", "-FF", "-FS", "-MM"}
_ZIP_VALUE = {"-b", "-n", "-t", "-tt", "-O", "-lf", "-TT", "-P", "-Z", "-s", "-sp", "-ds", "-UN"}
_ZIP_VALUE |= {"--out", "--logfile-path", "--unzip-command", "--temp-path", "--suffixes"}
_ZIP_VALUE |= {"--password", "--compression-method", "--split-size", "--after-date"}
_ZIP_VALUE |= {"--before-date"}
grammar(
    "zip",
    note="its own parser: the first operand is the archive, written unless -sf/--show-files; "
    "-O/--out FILE and -lf/--logfile-path FILE are written; -m/--move deletes the other "
    "operands; -TT/--unzip-command runs a command; "
    + " ".join(sorted(_ZIP_VALUE))
    + " take a value",
)


@handles("zip")
def _zip(c: Cmd) -> None:
    args, i, pos, flags, values = c.args, 0, [], set(), {}
    while i < len(args):
        word, i = args[i], i + 1
        value = word.value
        if value is None or len(value) < 2 or value[0] != "-" or value == "--":
            pos.append(word)
        elif value in _ZIP_VALUE:
            values[value] = args[i] if i < len(args) else None
            i += 1
        elif value.startswith("--") or value in _ZIP_LONG:
            flags.add(value.partition("=")[0])
        else:
            flags.update("-" + letter for letter in value[1:])
    if "-sf" in flags or "--show-files" in flags or "-h" in flags or not pos:
        return
    c.write([w for w in (values.get("-O"), values.get("--out")) if w] or pos[:1])
    c.write([w for w in (values.get("-lf"), values.get("--logfile-path")) if w])
    if "-TT" in values or "--unzip-command" in values:
        c.unknown("runs the test command it is given: effect unknown")
    if flags & {"-m", "--move"}:
        c.delete(pos[1:], "moves into the archive")


_GZIP = "ascii best fast decompress uncompress force keep list license no-name name quiet "
_GZIP += "recursive rsyncable suffix: stdout to-stdout test verbose synchronous"
_XZ = """compress decompress uncompress test list keep force single-stream no-sparse stdout
    to-stdout suffix: files:: files0:: format: check: ignore-check block-size: block-list:
    memlimit-compress: memlimit-decompress: memlimit-mt-decompress: memlimit: memory:
    no-adjust threads: flush-timeout: extreme fast best quiet verbose robot info-memory
    long-help lzma1:: lzma2:: x86:: arm:: armthumb:: arm64:: powerpc:: ia64:: sparc:: delta::"""
_ZSTD = """rm keep stdout decompress uncompress test list force quiet verbose output-dir-flat:
    output-dir-mirror: memory: long:: train patch-from: format: trace: ultra fast:: adapt::
    threads: no-progress progress sparse no-sparse exclude-compressed filelist: single-thread
    auto-threads: rsyncable stream-size: size-hint: target-compressed-block-size: no-dictID
    train-cover:: train-fastcover:: train-legacy:: maxdict: dictID: priority:"""
_NOTE = "each operand becomes OPERAND.SUFFIX (or loses it) and is deleted unless -k/--keep "
_NOTE += "(zstd keeps it unless --rm); -c/--stdout, -t and -l only read"
_COMPRESSORS: dict[str, tuple[str, bool, Grammar]] = {}
_BZIP2 = "stdout decompress compress force keep small quiet test verbose license fast best"
for _names, _short, _long, _abbrev, _suffixes in (
    ("gzip gunzip", "0123456789acdfhHklLnNqrS:tvV", _GZIP, True, ".gz"),
    ("bzip2 bunzip2", "cdzfkqstvLV123456789", _BZIP2, False, ".bz2"),
    ("xz unxz", "cdzkfFC:S:ehHlqtT:vV0123456789M:", _XZ, True, ".xz"),
    ("lzma unlzma", "cdzkfFC:S:ehHlqtT:vV0123456789M:", _XZ, True, ".lzma"),
    ("zstd unzstd", "o:D:T::b::e::i::B::M::cdtlfkqrvhHVS#0123456789", _ZSTD, False, ".zst"),
    ("compress uncompress", "b:cdfrvV", "", False, ".Z"),
):
    _g = grammar(_names, _short, _long, note=_NOTE, complete=True, abbrev=_abbrev)
    _pack, _unpack = _names.split()
    _COMPRESSORS[_pack] = (_suffixes, False, _g)
    _COMPRESSORS[_unpack] = (_suffixes, True, _g)


@handles(*_COMPRESSORS)
def _compress(c: Cmd) -> None:
    suffix, unpack, g = _COMPRESSORS[c.name]
    o = options(c, g)
    if o.sure("-c", "--stdout", "--to-stdout", "-t", "--test", "-l", "--list"):
        return
    files = [word for word in o.pos if word.value != "-"]
    unpack = unpack or o.has("-d", "--decompress", "--uncompress")
    keep = o.sure("-k", "--keep") or (c.name.endswith("zstd") and not o.has("--rm"))
    if o.has("-o", "--output-dir-flat", "--output-dir-mirror"):
        c.write(o.get("-o", "--output-dir-flat", "--output-dir-mirror"))
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
    return Word(word.raw, None)
