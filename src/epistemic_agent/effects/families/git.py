"""git: its global options (-C, -c, --git-dir...), then a subcommand judged by its own grammar.

Read-only subcommands stay read-only unless an option writes (`--output` of the diff family)
or runs a command; configuration given with -c is vouched for only for keys that cannot run
anything (color.*, user.*...)."""

from __future__ import annotations

import re

from ..core import VERSION_ARGS, Cmd, Word, handles, norm, words
from ..options import grammar, options
from . import git_refs as effects_git_refs  # noqa: F401 (registers its subcommands)
from .git_subs import SUBS

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
            _config(c, value)
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


def _config(c: Cmd, value: Word | None) -> None:
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
