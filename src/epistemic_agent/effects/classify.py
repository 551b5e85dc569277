"""Static effect classification of shell commands: what a command would do, without running it.

`classify(command) -> Effect` parses the command once with tree-sitter-bash (syntax.py) and
walks the tree (walker.py), judging every
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

from .model import MUTATING, READ_ONLY, UNKNOWN, Effect
from .syntax import bash_parser
from .walker import Walker

__all__ = ["MUTATING", "READ_ONLY", "UNKNOWN", "Effect", "classify"]


def classify(command: str) -> Effect:
    """Classify a shell command statically. Never raises."""
    if not command.strip():
        return Effect(READ_ONLY, reasons=("empty command: nothing runs",))
    try:
        bash_parser()
        return Walker().top(command)
    except RecursionError:
        return Effect(UNKNOWN, reasons=("the command nests too deeply to analyse: effect unknown",))
    except Exception as exc:  # a classifier must never take the agent down
        reason = f"internal error while analysing ({type(exc).__name__}): effect unknown"
        return Effect(UNKNOWN, reasons=(reason,))
