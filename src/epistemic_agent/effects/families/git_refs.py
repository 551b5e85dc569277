"""git's subcommands that change refs, configuration or remotes, or that only read unless an
option says otherwise (dry runs, listing modes); each with its own grammar (effects_git_subs)."""

from __future__ import annotations

from ..core import Cmd, words
from ..options import Opts
from .git_subs import sub

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
