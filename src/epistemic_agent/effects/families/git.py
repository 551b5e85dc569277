"""git: its global options (-C, -c, --git-dir...), then a subcommand judged by its own grammar.

Read-only subcommands stay read-only unless an option writes (`--output` of the diff family)
or runs a command; configuration given with -c is vouched for only for keys that cannot run
anything (color.*, user.*...).

A subcommand with options of its own is registered with `sub` in SUBS, its grammar following
parse-options (bundled short options, attached values, unique prefixes of long options,
--no-OPTION): first those that take paths, then those that change refs, configuration or
remotes, or that only read unless an option says otherwise (dry runs, listing modes)."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable

from ..core import VERSION_ARGS, Cmd, Word, handles, lit, norm, static, words
from ..options import Grammar, Opts, grammar, options

_GIT = grammar(
    "git",
    "C:c:pPhv",
    """exec-path:: html-path man-path info-path paginate no-pager no-replace-objects
    no-lazy-fetch no-optional-locks no-advice bare git-dir: work-tree: namespace: super-prefix:
    config-env: literal-pathspecs glob-pathspecs noglob-pathspecs icase-pathspecs list-cmds:
    attr-source:""",
    risky="-c --config-env --exec-path",
    note="global options end at the subcommand; -C DIR moves the cwd; -c KEY=VALUE and "
    "--config-env are vouched for only for keys that cannot run a command; --exec-path=DIR "
    "picks the programs git runs",
    complete=True,
    abbrev=False,
    stop=True,
)
_SAFE_CONFIG = re.compile(
    r"(color|advice|user|log|column|i18n|status|pretty|blame|init|safe|versionsort)\..*"
    r"|core\.(quotepath|abbrev)|diff\.(noprefix|mnemonicprefix|renames|algorithm|context)"
    r"|(tag|branch)\.sort",
    re.I,
)
_DIFF_NAMES: tuple[str, ...] = ("log", "show", "diff", "whatchanged", "diff-tree", "diff-index")
_DIFF_NAMES += ("diff-files", "range-diff", "shortlog", "rev-list", "blame", "annotate")
_DIFF_FAMILY = frozenset(_DIFF_NAMES)
_LOG = grammar(
    (*(f"git {name}" for name in _DIFF_NAMES), "git stash show", "git reflog show"),
    "n:L:G:S:O:I:U::M::C::B::l::X::",
    """output: format: pretty:: author: committer: grep: since: until: after: before:
    max-count: skip: date: decorate:: decorate-refs: decorate-refs-exclude: relative:: stat::
    dirstat:: color:: color-words:: word-diff:: word-diff-regex: anchored: diff-filter:
    src-prefix: dst-prefix: line-prefix: abbrev:: encoding: notes:: find-object:
    inter-hunk-context: ignore-matching-lines: exclude: glob: branches:: tags:: remotes::
    min-parents: max-parents: submodule:: ws-error-highlight: diff-algorithm: rotate-to:
    skip-to: color-moved:: color-moved-ws: output-indicator-new: output-indicator-old:
    output-indicator-context: unified: find-renames:: find-copies:: break-rewrites:: ext-diff""",
    risky="--output --ext-diff",
    note="--output FILE is written; --ext-diff runs the configured diff programs",
    negatable=True,
)
_PLAIN = grammar(("git status",), "u::", "untracked-files:: output:", negatable=True)
_READ = _DIFF_FAMILY | words(
    """status log diff show blame annotate rev-parse rev-list ls-files ls-tree describe shortlog
    cat-file show-ref for-each-ref merge-base name-rev cherry whatchanged count-objects
    verify-commit verify-tag verify-pack check-ignore check-attr check-mailmap
    check-ref-format var help version range-diff show-branch diff-tree diff-index diff-files
    get-tar-commit-id show-index"""
)
_CHANGE: dict[str, str] = {
    "pull": "merges remote changes into the work tree",
    "switch": "switches branches, rewriting the work tree",
    "reset": "moves HEAD and resets the index (and with --hard the work tree)",
}
for _name in words("merge rebase cherry-pick revert am"):
    _CHANGE[_name] = "rewrites history and the work tree"
for _name in words(
    """gc repack pack-refs maintenance update-index update-ref write-tree commit-tree read-tree
    mktag mktree replace filter-branch fast-import rerere lfs"""
):
    _CHANGE[_name] = "changes the repository"
#: Subcommands whose first word picks a read-only or a changing action.
_NESTED: dict[str, frozenset[str]] = {
    "stash": words("list show"),
    "remote": words("show get-url"),
    "notes": words("list show get-ref"),
    "bisect": words("log visualize view terms"),
    "reflog": words("show exists"),
    "sparse-checkout": words("list"),
    "bundle": words("verify list-heads"),
}
_NESTED_GRAMMAR = grammar(
    tuple(f"git {name}" for name in _NESTED),
    long="ref: verbose",
    note="the first operand picks the action; stash show/list and reflog show take the diff "
    "family's options (--output)",
)


@handles("git")
def _git(c: Cmd) -> None:
    o = options(c, _GIT)
    if o.has(*VERSION_ARGS, "-v", "--html-path", "--man-path", "--info-path", "--list-cmds"):
        return
    cwd = c.cwd
    for name, value in o.flags:
        if name == "-C" and value is not None:
            cwd = norm(value, cwd)
        elif name == "--work-tree":
            cwd = None  # paths are taken in another tree
        elif name in ("-c", "--config-env"):
            _config_option(c, value)
        elif name == "--exec-path" and value is None:
            return  # prints the path
        elif name == "--exec-path":
            c.unknown("runs git programs from the directory it is given: effect unknown")
    if not o.pos:
        return
    sub, g = o.pos[0].value, c.but(o.pos[1:], cwd)
    if sub is None:
        c.unknown("runs a git subcommand that is not known statically: effect unknown")
    elif sub in SUBS:
        grammar_, handler, dry = SUBS[sub]
        so = options(g, grammar_)
        if not (dry and so.sure(*dry)):
            handler(g, so)
    elif sub in _NESTED:
        _nested(g, sub)
    elif sub in _READ:
        _read(g, sub)
    elif sub in _CHANGE:
        g.change(_CHANGE[sub])
    else:
        c.unknown(f"has an unknown git subcommand ({sub}; an alias?): effect unknown")


def _config_option(c: Cmd, value: Word | None) -> None:
    key = value.value.partition("=")[0] if value is not None and value.value else None
    if key is None or not _SAFE_CONFIG.fullmatch(key):
        shown = key if key is not None else "(not known statically)"
        c.unknown(f"sets git configuration ({shown}) that may run a command: effect unknown")


def _read(g: Cmd, sub: str = "log") -> None:
    o = options(g, _LOG if sub in _DIFF_FAMILY else _PLAIN)
    g.write(o.get("--output"))
    if o.has("--ext-diff"):
        g.unknown("runs the configured external diff programs: effect unknown")


def _nested(g: Cmd, sub: str) -> None:
    o = options(g, _NESTED_GRAMMAR)
    action = o.pos[0].value if o.pos else None
    if o.pos and action is None:
        g.unknown("uses a git action that is not known statically: effect unknown")
    elif action in ("show", "list") and sub in ("stash", "reflog"):
        _read(g.but(g.args[g.args.index(o.pos[0]) + 1 :], g.cwd))
    elif action in _NESTED[sub] or (action is None and sub not in ("stash", "bisect")):
        if action is None and sub == "reflog":
            _read(g)
    elif (sub, action) == ("bundle", "create"):
        g.write(o.pos[1:2])
    else:
        what = "changes the stash and the work tree" if sub == "stash" else "changes the repository"
        g.change(what)


# -- subcommands with a grammar of their own, registered in SUBS ----------------------------------


GitHandler = Callable[[Cmd, Opts], None]
#: subcommand: (its grammar, its handler, the options that make it a dry run)
SUBS: dict[str, tuple[Grammar, GitHandler, frozenset[str]]] = {}


def sub(
    name: str, short: str = "", long: str = "", risky: str = "", dry: str = "", note: str = ""
) -> Callable[[GitHandler], GitHandler]:
    def register(handler: GitHandler) -> GitHandler:
        g = grammar(("git " + name,), short, long, risky, note=note, negatable=True)
        SUBS[name] = (g, handler, words(dry))
        return handler

    return register


# -- subcommands that take paths ------------------------------------------------------------------


@sub("rm", long="pathspec-from-file: dry-run cached", dry="-n --dry-run")
def _rm(g: Cmd, o: Opts) -> None:
    if o.has("--cached"):
        g.change("removes paths from the index")
    elif o.pos:
        g.delete(o.pos)
    else:
        g.change("deletes the paths it is given (--pathspec-from-file)")


@sub("mv", long="dry-run", dry="-n --dry-run")
def _mv(g: Cmd, o: Opts) -> None:
    g.delete(o.pos[:-1], "moves away")
    g.write(o.pos[-1:])


@sub("clean", "e:", "exclude: dry-run", dry="-n --dry-run", note="-e takes a pattern: -e -n")
def _clean(g: Cmd, o: Opts) -> None:
    g.delete(o.pos or [lit(".")], "deletes untracked files under")


@sub("checkout", "b:B:t::", "orphan: conflict: pathspec-from-file: track::")
def _checkout(g: Cmd, o: Opts) -> None:
    paths = o.pos[o.dashdash :] if o.dashdash is not None else []
    if o.has("-b", "-B", "--orphan") or (not paths and [w.value for w in o.pos] != ["."]):
        g.change("switches branches, rewriting the work tree")
    else:
        g.write(paths or o.pos, "restores")


@sub("restore", "s:", "source: pathspec-from-file: staged worktree conflict:")
def _restore(g: Cmd, o: Opts) -> None:
    if o.has("-S", "--staged") and not o.has("-W", "--worktree"):
        g.change("restores paths in the index")
    elif o.pos:
        g.write(o.pos, "restores")
    else:
        g.change("restores files in the work tree")


@sub(
    "init", "b:", "template: separate-git-dir: initial-branch: object-format: ref-format: shared::"
)
def _init(g: Cmd, o: Opts) -> None:
    where = o.pos[:1] or [lit(".")]
    if not o.has("--bare"):
        where = [
            Word(w.raw, posixpath.join(w.value, ".git"), w.tilde) if w.value else w for w in where
        ]
    g.write(where, "creates a repository in")
    g.write(o.get("--separate-git-dir"), "creates a repository in")


@sub(
    "clone",
    "b:o:c:j:u:",
    """branch: origin: depth: config: reference: reference-if-able: separate-git-dir: template:
    filter: upload-pack: jobs: shallow-since: shallow-exclude: server-option: bundle-uri:
    ref-format:""",
    risky="-u --upload-pack",
)
def _clone(g: Cmd, o: Opts) -> None:
    if len(o.pos) < 2:
        url = (o.pos[0].value or "").rstrip("/") if o.pos else ""
        name = posixpath.basename(url.rpartition(":")[2]).removesuffix(".git")
        where = [lit(name)] if name else [Word(url or "clone", None)]
    else:
        where = o.pos[1:2]
    g.write(where, "clones into")
    if o.has("-u", "--upload-pack"):
        g.unknown("runs the upload-pack command it is given: effect unknown")


@sub(
    "apply",
    "p:C:",
    """directory: exclude: include: whitespace: build-fake-ancestor: check stat numstat summary
    apply cached index""",
    risky="--build-fake-ancestor",
)
def _apply(g: Cmd, o: Opts) -> None:
    g.write(o.get("--build-fake-ancestor"))
    if o.sure("--check", "--stat", "--numstat", "--summary") and not o.has("--apply"):
        return
    g.change("applies a patch to the index" if o.has("--cached") else "applies a patch")


@sub(
    "archive",
    "o:",
    "output: format: prefix: remote: exec: add-file: add-virtual-file:",
    risky="-o --output --exec",
)
def _archive(g: Cmd, o: Opts) -> None:
    g.write(o.get("-o", "--output"))
    if o.has("--exec"):
        g.unknown("runs the upload-archive command it is given: effect unknown")


@sub(
    "format-patch",
    "o:v:",
    """output-directory: output: reroll-count: subject-prefix: in-reply-to: to: cc: from::
    base: signature: signature-file: suffix: start-number: interdiff: range-diff:
    creation-factor: add-header: thread:: stdout""",
    risky="-o --output-directory --output",
)
def _format_patch(g: Cmd, o: Opts) -> None:
    if o.has("-o", "--output-directory"):
        g.write(o.get("-o", "--output-directory"))
    elif o.has("--output"):
        g.write(o.get("--output"))
    elif not o.sure("--stdout"):
        g.change("writes patch files under generated names")


@sub("hash-object", "wt:", "path: stdin stdin-paths literally no-filters", risky="-w")
def _hash_object(g: Cmd, o: Opts) -> None:
    if o.has("-w"):
        g.change("writes objects to the repository")


@sub("worktree", "b:B:", "reason: orphan detach checkout lock force track guess-remote")
def _worktree(g: Cmd, o: Opts) -> None:
    action = o.pos[0].value if o.pos else None
    rest = o.pos[1:]
    if o.pos and action is None:
        g.unknown("uses a git action that is not known statically: effect unknown")
    elif action in (None, "list"):
        return
    elif action == "add":
        g.write(rest[:1], "adds a worktree at")
    elif action == "remove":
        g.delete(rest[:1], "removes the worktree")
    elif action == "move":
        g.delete(rest[:1], "moves away")
        g.write(rest[1:2])
    else:
        g.change("changes the repository")


@sub("submodule", long="quiet cached recursive")
def _submodule(g: Cmd, o: Opts) -> None:
    action = o.pos[0].value if o.pos else None
    if o.pos and action is None:
        g.unknown("uses a git action that is not known statically: effect unknown")
    elif action in (None, "status", "summary"):
        return
    elif action == "foreach":
        g.script(static([w for w in o.pos[1:] if w.value != "--recursive"]))
    else:
        g.change("changes submodules")


# -- subcommands that change refs, configuration or remotes ---------------------------------------


_BRANCH_CHANGE = words(
    """-d -D --delete -m -M --move -c -C --copy -u --set-upstream-to --unset-upstream
    --edit-description -f --force"""
)
_BRANCH_LIST = words(
    """-l --list -a --all -r --remotes --contains --no-contains --merged --no-merged --points-at
    -v --verbose --show-current"""
)


@sub(
    "branch",
    "dDmMcCfralvqu:t::",
    """set-upstream-to: format: sort: contains: no-contains: merged: no-merged: points-at:
    column:: color:: abbrev:: track:: delete move copy force list all remotes unset-upstream
    edit-description show-current create-reflog verbose""",
    risky=" ".join(sorted(_BRANCH_CHANGE)),
    note="-d/-D/-m/-M/-c/-C/-u/-f and their long forms change branches; an operand without "
    "a listing option creates one",
)
def _branch(g: Cmd, o: Opts) -> None:
    if o.has(*_BRANCH_CHANGE):
        g.change("changes branches")
    elif o.pos and not o.sure(*_BRANCH_LIST):
        g.change("creates a branch")


_TAG_CREATE = words("-a --annotate -s --sign -m --message -F --file -f --force")
_TAG_LIST = words("-l --list -v --verify --contains --no-contains --points-at --merged --no-merged")


@sub(
    "tag",
    "dafslveim:F:u:n::",
    """message: file: local-user: contains: no-contains: points-at: merged: no-merged: sort:
    format: cleanup: column:: color:: trailer: delete list verify annotate sign force edit
    create-reflog""",
    risky="-d --delete " + " ".join(sorted(_TAG_CREATE)),
)
def _tag(g: Cmd, o: Opts) -> None:
    if o.has("-d", "--delete"):
        g.change("deletes a tag")
    elif o.sure(*_TAG_LIST):
        return
    elif o.pos or o.has(*_TAG_CREATE):
        g.change("creates a tag")


_CONFIG_WRITE = words(
    "--add --unset --unset-all --replace-all --rename-section --remove-section --edit -e"
)
_CONFIG_READ = words(
    "--get --get-all --get-regexp --get-urlmatch --list -l --get-color --get-colorbool"
)


@sub(
    "config",
    "f:t:elz",
    """file: blob: type: default: comment: add unset unset-all replace-all rename-section
    remove-section edit get get-all get-regexp get-urlmatch list get-color get-colorbool global
    system local worktree null name-only includes show-origin show-scope fixed-value""",
    risky=" ".join(sorted(_CONFIG_WRITE)),
)
def _config(g: Cmd, o: Opts) -> None:
    first = o.pos[0].value if o.pos else None
    if o.has(*_CONFIG_WRITE) or first in (
        "set",
        "unset",
        "rename-section",
        "remove-section",
        "edit",
    ):
        g.change("changes git configuration")
    elif o.sure(*_CONFIG_READ) or first in ("get", "list") or len(o.pos) <= 1:
        return
    else:
        g.change("changes git configuration")


@sub("symbolic-ref", "dqm:", "delete short quiet no-recurse", risky="-d --delete")
def _symbolic_ref(g: Cmd, o: Opts) -> None:
    if o.has("-d", "--delete") or len(o.pos) > 1:
        g.change("changes a symbolic ref")


@sub(
    "commit",
    "m:F:c:C:t:u::S::",
    """message: file: reuse-message: reedit-message: fixup: squash: author: date: cleanup:
    template: untracked-files:: gpg-sign:: trailer: pathspec-from-file: dry-run short
    porcelain long""",
    dry="--dry-run --short --porcelain --long",
    note="-m/-F/-c/-C/--fixup... take a value (`-m --dry-run` commits); --short, --porcelain "
    "and --long imply --dry-run",
)
def _commit(g: Cmd, o: Opts) -> None:
    g.change("records a commit")


@sub(
    "push",
    "o:",
    """push-option: repo: receive-pack: exec: force-with-lease:: recurse-submodules: signed::
    dry-run""",
    dry="-n --dry-run",
)
def _push(g: Cmd, o: Opts) -> None:
    g.change("updates a remote repository")


@sub(
    "fetch",
    "o:j:",
    """server-option: depth: deepen: shallow-since: shallow-exclude: refmap: jobs: upload-pack:
    negotiation-tip: filter: recurse-submodules:: submodule-prefix: dry-run""",
    risky="--upload-pack",
    dry="--dry-run",
)
def _fetch(g: Cmd, o: Opts) -> None:
    g.change("updates refs from a remote")
    if o.has("--upload-pack"):
        g.unknown("runs the upload-pack command it is given: effect unknown")


@sub("add", long="chmod: pathspec-from-file: dry-run", dry="-n --dry-run")
def _add(g: Cmd, o: Opts) -> None:
    g.change("stages changes in the index")


@sub("prune", long="expire: dry-run", dry="-n --dry-run")
def _prune(g: Cmd, o: Opts) -> None:
    g.change("changes the repository")


@sub(
    "grep",
    "e:f:m:A:B:C:O::",
    """open-files-in-pager:: max-count: after-context: before-context: context: threads:
    max-depth: color::""",
    risky="-O --open-files-in-pager",
    note="-O/--open-files-in-pager runs a pager command on the matching files",
)
def _grep(g: Cmd, o: Opts) -> None:
    if o.has("-O", "--open-files-in-pager"):
        g.unknown("runs the pager it is given: effect unknown")


@sub("ls-remote", "o:", "upload-pack: exec: sort: server-option:", risky="--upload-pack --exec")
def _ls_remote(g: Cmd, o: Opts) -> None:
    if o.has("--upload-pack", "--exec"):
        g.unknown("runs the upload-pack command it is given: effect unknown")


@sub("fsck", long="lost-found", risky="--lost-found")
def _fsck(g: Cmd, o: Opts) -> None:
    if o.has("--lost-found"):
        g.change("writes .git/lost-found")
