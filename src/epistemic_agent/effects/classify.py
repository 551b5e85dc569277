"""Static effect classification of shell commands: what a command would do, without running it.

`classify(command) -> Effect` parses the command once with tree-sitter-bash and judges every
part of it: lists, pipelines, subshells, `$(...)` and backticks, process substitutions, loops,
if/case, functions, `[[ ]]`, heredocs and herestrings, assignments, and the wrappers that run
another command (sudo, env, nice, timeout, time, xargs, command, exec, nohup, stdbuf, watch,
find -exec, `bash -c STRING`, eval, trap: literal strings are classified recursively).

Classes
    read-only   every part is known not to create, modify or delete anything. This must be
                earned: each program is on a curated allow-list (ls, cat, grep, git status...),
                or its handler has checked its arguments (`sed` without -i/w/e, `find`
                without -delete/-exec of a mutating command, `sort` without -o...).
    mutating    some part is known to write, create, modify (contents or metadata), move or
                delete files, change a repository, installed packages, services, the clock,
                or signal processes. Mutating wins over unknown: `make; rm x` is mutating.
    unknown     nothing is known to mutate, but some part cannot be vouched for: a program
                that is not in the tables, a script, inline interpreter code (`python -c`, with
                a tiny allow-list of pure `print(...)` programs), a build/test/lint tool (make,
                pytest, npm run, cargo build: they run project code and write caches), a
                dynamic command name, a request that sends data (`curl -d`), a parse error.

Paths: `writes` and `deletes` are normalised (`posixpath.normpath`) and relative to the
command's starting directory, following literal `cd DIR`, `pushd`/`popd` through `&&`, `;`
and `{ }` (cd in a subshell, pipeline or `$(...)` does not leak; after a cd inside `||`, if,
case or a loop the directory is no longer known). A directory stands for everything below it
(`rm -rf build`, `find . -delete` -> ".", `tar -x` -> the target dir, `git clean` -> "."). Absolute
paths stay absolute; `~/x` stays "~/x" (home is not the workspace; it is not `dynamic`).
`dynamic` is true when some written or deleted path is not statically known: `$VAR`, globs,
brace expansion, command substitution, `{}` of find/xargs, a directory unknown after `cd $X`,
and changes whose location is not named (`git commit` writes somewhere in .git, `npm install`
writes node_modules, `curl -O` names the file after the URL). Writing to /dev/null,
/dev/stdout, /dev/stderr, /dev/tty or /dev/fd/N is not a write; fd duplication (`2>&1`) is not.

Decisions where the issue was silent
    - empty or whitespace-only command: read-only (nothing runs; the gate rejects it anyway).
    - a parse error makes the whole command unknown; the parts that did parse are still
      walked, so their writes and deletes are reported (bash runs the lines before the error).
    - network reads are not workspace effects: `curl URL`, `wget -O- URL`, `git fetch` aside
      (fetch changes refs); requests that send data are unknown (remote effect).
    - test runners, linters and build tools are unknown, not read-only: they execute project
      code and write caches inside the workspace (.pytest_cache, __pycache__, .ruff_cache).
    - formatters in check mode (`black --check`, `gofmt -l`, `prettier --check`) are read-only.
    - `git status` is read-only although git may refresh .git/index; `git diff` ignores
      configured external diff drivers; `pip download` and friends are simply mutating.
    - function bodies are classified where they are defined; calling them then adds nothing.

Parsing and cost
    tree-sitter and the program tables are loaded on the first classify (importing this module
    only defines the API: start-up time). One Parser per process, behind a lock. Every
    non-ASCII byte is replaced by "x" before parsing (same offsets, same tokens; texts are
    read from the original bytes): tree-sitter-bash 0.25's scanner calls isalpha() on raw
    code points and segfaults the process on some non-ASCII input. tree-sitter-bash breaks
    `time { ...; }`, `time for ...` and `! { ...; }` apart; those keywords are blanked and the
    text re-parsed. `x=1 > f` gets an empty MISSING command name from tree-sitter: accepted.
    A typical command costs 30-150 us (see bench/bench_effects.py).

Known limits
    - aliases are not expanded (non-interactive bash does not either, unless the command says
      `shopt -s expand_aliases`): an alias's body is judged where it is defined; `hash -p` is
      unknown; `$PATH` lookups are not resolved, a program shadowed by a script of the same
      name is judged as the program.
    - cd is assumed to succeed; `cd x; rm y` reports x/y.
    - `cat <<EOF; rm x` (a heredoc operator followed by more commands on its line), `<>`
      redirections and `time time ...` do not parse in tree-sitter-bash 0.25: unknown.
    - sed and awk programs are scanned, not interpreted; an unrecognised sed command makes
      the result unknown. awk `>` counts as a redirection only inside print/printf.
    - each program's options are read by its grammar (effects_options, docs/classifier.md):
      values consumed as the program consumes them, every spelling of a writing option seen;
      doubt (an unlisted option, an ambiguous prefix, a word known only at run time that may
      be an option) errs toward writes. Commands fed by xargs or fd -x get a word appended
      that may be anything, options included.
    - an assignment to a variable that makes programs load code (LD_PRELOAD, BASH_ENV,
      GIT_EXTERNAL_DIFF...) makes the command unknown; PATH is not followed.
    - `python -c` is read-only only for imports of sys/platform/math and expressions calling
      pure builtins; everything else (and node -e, perl -e, ruby -e, php -r) is unknown.
    - nested strings (bash -c, eval, find -exec sh -c) are followed 8 levels deep at most;
      deeper, or pathologically nested syntax (hundreds of levels), is unknown.
    - a function's redirection (`f() { ...; } > log`) is counted where it is defined.
"""

from __future__ import annotations

import functools
import re
import threading
from typing import TYPE_CHECKING

from .model import MUTATING, READ_ONLY, UNKNOWN, Effect
from .programs import Cmd, Findings, Word, environment, norm, program, shorten
from .words import word as _word

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from tree_sitter import Node

__all__ = ["MUTATING", "READ_ONLY", "UNKNOWN", "Effect", "classify"]

MAX_NESTING = 8


class _Bash:
    """tree-sitter's bash grammar and the lock around its parser (a Parser is not meant to be
    shared between threads)."""

    def __init__(self) -> None:
        import tree_sitter
        import tree_sitter_bash

        self.parser = tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))
        self.lock = threading.Lock()


@functools.cache
def _bash() -> _Bash:
    """The one accessor of tree-sitter: it is imported on the first parse (start-up cost)."""
    return _Bash()


#: Every non-ASCII byte becomes "x" before parsing. tree-sitter-bash's scanner calls isalpha()
#: and friends on raw code points, which is undefined above 255 and segfaults the process on
#: some inputs. Non-ASCII characters are ordinary word characters to bash, so "x" keeps the
#: tokens (and the byte offsets) the same; texts are always read from the original bytes.
_ASCII_ONLY = bytes(range(128)) + b"x" * 128


def _parse(text: str) -> tuple[Node, bytes]:
    """The syntax tree of a script, and the bytes its node offsets index into."""
    bash = _bash()
    source = text.encode("utf-8", "surrogatepass")
    data = source.translate(_ASCII_ONLY)
    with bash.lock:
        root = bash.parser.parse(data).root_node
        for _ in range(4):  # `! ! { a; }` needs two rounds
            spans = _misparsed_keywords(root) if b"time" in data or b"!" in data else []
            if not spans:
                break
            blanked, ascii_blanked = bytearray(source), bytearray(data)
            for start, end in spans:
                blanked[start:end] = ascii_blanked[start:end] = b" " * (end - start)
            source, data = bytes(blanked), bytes(ascii_blanked)
            root = bash.parser.parse(data).root_node
    return root, source


_RESERVED = frozenset({b"{", b"for", b"while", b"until", b"if", b"case", b"select", b"[[", b"!"})


def _misparsed_keywords(root: Node) -> list[tuple[int, int]]:
    """`time { a; }`, `! if ...`: tree-sitter-bash takes the keyword `time` for a command, and
    after `time` or `!` breaks a compound command apart. Neither keyword changes what the
    command does to files: blank them and re-parse."""
    spans, stack = [], [root]
    while stack:
        node = stack.pop()
        children = node.named_children
        stack.extend(children)
        if node.type == "negated_command" and children and children[0].type == "command":
            name = children[0].named_children[0] if children[0].named_child_count else None
            if name is not None and _first_token(name.text) in _RESERVED:
                spans.append((node.start_byte, node.start_byte + 1))
        if node.type != "command" or len(children) < 2 or children[0].text != b"time":
            continue
        name, *args = children
        end = name.end_byte
        if args[0].text == b"-p" and len(args) > 1:
            end, args = args[0].end_byte, args[1:]
        if (
            args[0].type in ("subshell", "compound_statement")
            or _first_token(args[0].text) in _RESERVED
        ):
            spans.append((name.start_byte, end))
    return spans


def _first_token(text: bytes | None) -> bytes:
    """`{ [[` (tree-sitter glues a misparsed group into one word): its first token."""
    return (text or b"").split(maxsplit=1)[0] if (text or b"").strip() else b""


def classify(command: str) -> Effect:
    """Classify a shell command statically. Never raises."""
    if not command.strip():
        return Effect(READ_ONLY, reasons=("empty command: nothing runs",))
    try:
        _bash()
        return _Walker().top(command)
    except RecursionError:
        return Effect(UNKNOWN, reasons=("the command nests too deeply to analyse: effect unknown",))
    except Exception as exc:  # a classifier must never take the agent down
        reason = f"internal error while analysing ({type(exc).__name__}): effect unknown"
        return Effect(UNKNOWN, reasons=(reason,))


Loc = tuple[str | None, ...]  # the directory stack (pushd); the last entry is the cwd
_REDIRECTS = frozenset({"file_redirect", "heredoc_redirect", "herestring_redirect"})
_WRITE_OPS = frozenset({">", ">>", "&>", "&>>", ">|"})
_BRANCHES = frozenset({"elif_clause", "else_clause", "case_item"})
_LEAVES = frozenset({"word", "number", "raw_string", "ansi_c_string"})


class _Walker:
    def __init__(self) -> None:
        self.out = Findings(self.nested)
        self.depth = 0
        self.src = b""  # the bytes of the script being walked (texts come from here)

    def top(self, command: str) -> Effect:
        root, self.src = _parse(command)
        broken = root.has_error and _really_broken(root)
        if broken:
            self.out.add(UNKNOWN, "the command does not parse as shell: effect unknown")
        self.stmt(root, (".",))
        out = self.out
        cls = MUTATING if out.mutating else UNKNOWN if out.unknown else READ_ONLY
        return Effect(
            UNKNOWN if broken else cls,
            _unique(out.writes),
            _unique(out.deletes),
            out.dynamic,
            _unique(out.reasons),
        )

    def nested(self, text: str, cwd: str | None, part: str) -> None:
        """Classify a command string run by a part of the command (bash -c, eval, ...)."""
        if self.depth >= MAX_NESTING:
            self.out.add(UNKNOWN, f"`{part}` nests command strings too deeply: effect unknown")
            return
        root, src = _parse(text)
        if root.has_error and _really_broken(root):
            self.out.add(UNKNOWN, f"`{part}` runs a string that does not parse: effect unknown")
            return
        self.depth, outer, self.src = self.depth + 1, self.src, src
        try:
            self.stmt(root, (cwd,))
        finally:
            self.depth, self.src = self.depth - 1, outer

    # -- statements: each returns the directory stack after it ---------------------------

    def stmt(self, node: Node, loc: Loc, tail: Sequence[Node] = ()) -> Loc:
        kind = node.type
        if kind in ("list", "pipeline"):
            return self.chain(node, loc, tail)
        for redirect in tail:
            self.redirect(redirect, loc)
        method = _METHODS.get(kind)
        if method is not None:
            return method(self, node, loc)
        for child in node.named_children:
            loc = self.stmt(child, loc)
        return loc

    def chain(self, node: Node, loc: Loc, tail: Sequence[Node]) -> Loc:
        """`a && b`, `a || b` (the cwd flows on) or `a | b` (each part in its own subshell).

        Redirections that tree-sitter hangs on the whole chain belong to its last part.
        """
        parts = [child for child in node.named_children if child.type != "comment"]
        if node.type == "pipeline":
            for i, part in enumerate(parts):
                self.stmt(part, loc, tail if i == len(parts) - 1 else ())
            return loc
        if len(parts) != 2 or not any(child.type == "||" for child in node.children):
            for i, part in enumerate(parts):
                loc = self.stmt(part, loc, tail if i == len(parts) - 1 else ())
            return loc
        left = self.stmt(parts[0], loc)
        start = loc if left == loc else (None,)  # `cd x || b`: b runs only if the cd failed
        right = self.stmt(parts[1], start, tail)
        return left if right == start else (None,)

    def sequence(self, node: Node, loc: Loc) -> Loc:
        before = loc
        for child in node.children:
            if child.is_named:
                before, loc = loc, self.stmt(child, loc)
            elif child.type == "&":
                loc = before  # a background job runs in a subshell
        return loc

    def subshell(self, node: Node, loc: Loc) -> Loc:
        self.sequence(node, loc)
        return loc

    def substitution(self, node: Node, loc: Loc) -> Loc:
        text = _text(node, self.src)
        if text.startswith("`") and "\\" in text:  # nested escaped backticks: re-parse
            self.nested(re.sub(r"\\([\\`$])", r"\1", text[1:-1]), loc[-1], shorten(text))
        else:
            self.sequence(node, loc)
        return loc

    def branching(self, node: Node, loc: Loc) -> Loc:
        """if/case: branches start from the same place; a cd inside makes the cwd unknown."""
        current, changed = loc, False
        for child in node.named_children:
            if child.type in _BRANCHES:
                end = self.sequence(child, loc)
            else:
                current = end = self.stmt(child, current)
            changed |= end != loc
        return (None,) if changed else loc

    def loop(self, node: Node, loc: Loc) -> Loc:
        end = self.sequence(node, loc)
        if end == loc:
            return loc
        self.sequence(node, (None,))  # later iterations start somewhere else
        return (None,)

    def assignment(self, node: Node, loc: Loc) -> Loc:
        """`X=1 cmd`, `export X=1`: a variable that makes programs load code is a doubt."""
        name = node.child_by_field_name("name")
        if name is not None:
            environment(self.out, _text(name, self.src), shorten(_text(node, self.src)))
        for child in node.named_children:
            self.stmt(child, loc)
        return loc

    def function(self, node: Node, loc: Loc) -> Loc:
        name = node.child_by_field_name("name")
        if name is not None:
            self.out.functions.add(_text(name, self.src))
        body = node.child_by_field_name("body")
        if body is not None:
            self.stmt(body, loc)
        return loc

    def redirected(self, node: Node, loc: Loc) -> Loc:
        body: Node | None = None
        redirects: list[Node] = []
        for child in node.named_children:
            if child.type in _REDIRECTS:
                redirects.append(child)
            elif body is None and child.type != "comment":
                body = child
        if body is not None and body.type in ("list", "pipeline"):
            return self.chain(body, loc, redirects)
        for redirect in redirects:
            self.redirect(redirect, loc)
        if body is None:
            return loc
        if body.type == "command":
            extra = [word for redirect in redirects for word in _extra_destinations(redirect)]
            return self.command(body, loc, extra)
        return self.stmt(body, loc)

    def command(self, node: Node, loc: Loc, extra: Sequence[Node] = ()) -> Loc:
        name: Node | None = None
        args: list[Node] = []
        for child in node.named_children:
            if child.type == "command_name":
                name = child.named_children[0] if child.named_children else child
            elif child.type in _REDIRECTS:
                self.redirect(child, loc)
                args.extend(_extra_destinations(child))
            elif child.type != "comment":
                args.append(child)
        args.extend(extra)
        for child in args if name is None else [name, *args]:
            if child.type not in _LEAVES:
                self.stmt(child, loc)  # substitutions inside the words and assignments
        if name is None or name.is_missing:
            return loc  # only assignments and redirections: shell state
        words = [_word(arg, self.src) for arg in args if arg.type != "variable_assignment"]
        head = _word(name, self.src)
        if head.value is not None and program(head.value) in ("cd", "pushd", "popd"):
            return _cd(program(head.value), words, loc)
        Cmd("", [], loc[-1], shorten(_text(node, self.src)), self.out).run([head, *words])
        return loc

    # -- redirections ---------------------------------------------------------------------

    def redirect(self, node: Node, loc: Loc) -> None:
        if node.type == "file_redirect":
            self.file_redirect(node, loc)
            return
        for child in node.named_children:  # heredoc/herestring: body, targets, continuations
            if child.type == "file_redirect":
                self.file_redirect(child, loc)
            elif child.type not in ("heredoc_start", "heredoc_end"):
                self.stmt(child, loc)

    def file_redirect(self, node: Node, loc: Loc) -> None:
        op = next((child.type for child in node.children if not child.is_named), "")
        targets = [child for child in node.named_children if child.type != "file_descriptor"]
        if not targets:
            return
        self.stmt(targets[0], loc)
        target = _word(targets[0], self.src)
        duplicate = targets[0].type == "number" or target.value == "-"
        if op in _WRITE_OPS or (op == ">&" and not duplicate):
            Cmd("", [], loc[-1], shorten(_text(node, self.src)), self.out).write([target])


_METHODS: dict[str, Callable[[_Walker, Node, Loc], Loc]] = {
    "program": _Walker.sequence,
    "compound_statement": _Walker.sequence,
    "do_group": _Walker.sequence,
    "subshell": _Walker.subshell,
    "command_substitution": _Walker.substitution,
    "process_substitution": _Walker.substitution,
    "if_statement": _Walker.branching,
    "case_statement": _Walker.branching,
    "while_statement": _Walker.loop,
    "for_statement": _Walker.loop,
    "c_style_for_statement": _Walker.loop,
    "function_definition": _Walker.function,
    "variable_assignment": _Walker.assignment,
    "redirected_statement": _Walker.redirected,
    "command": _Walker.command,
}


def _really_broken(root: Node) -> bool:
    """has_error, except for `x=1 > f`: tree-sitter-bash wants a command name there and
    inserts an empty (MISSING) one, but bash accepts it."""
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type == "ERROR" or (node.is_missing and not _missing_name_is_benign(node)):
            return True
        stack.extend(node.children)
    return False


def _missing_name_is_benign(node: Node) -> bool:
    name = node.parent
    command = name.parent if name is not None else None
    if node.type != "word" or name is None or command is None or name.type != "command_name":
        return False
    return any(child.type in ("variable_assignment", "file_redirect") for child in command.children)


def _cd(name: str, words: list[Word], loc: Loc) -> Loc:
    """The directory stack after cd/pushd/popd."""
    targets = [w for w in words if not (w.value or "").startswith("-") or w.value == "-"]
    if name == "popd":
        return loc[:-1] if len(loc) > 1 else (None,)
    if not targets:
        return (*loc[:-1], "~") if name == "cd" else (None,)
    where = None if targets[0].value == "-" else norm(targets[0], loc[-1])
    return (*loc[:-1], where) if name == "cd" else (*loc, where)


def _extra_destinations(node: Node) -> list[Node]:
    """`echo hi >f arg`: tree-sitter files `arg` as a second target; it is an argument."""
    if node.type != "file_redirect":
        return []
    targets = [child for child in node.named_children if child.type != "file_descriptor"]
    return targets[1:]


def _text(node: Node, src: bytes) -> str:
    return src[node.start_byte : node.end_byte].decode("utf-8", "replace")


def _unique(items: list[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))
