"""git's subcommands that take paths: each with its own option grammar (parse-options: bundled
short options, attached values, unique prefixes of long options, --no-OPTION). The registry
of subcommands (`sub`, SUBS) lives here; effects_git_refs adds the ref-changing ones."""

from __future__ import annotations

import posixpath
from collections.abc import Callable

from ..core import Cmd, Word, lit, static, words
from ..options import Grammar, Opts, grammar

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
