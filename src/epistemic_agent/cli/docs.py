"""docs/cli.md, generated from the parser's own `--help` text so it cannot drift."""

from __future__ import annotations

import argparse
import os

WIDTH = "100"
EXIT_STATUSES = """## Exit statuses

Every command: 0 when it did what it was asked; 2 on bad input (a usage error, a path that
holds no journal, a bad policy, a mistyped command: `epistemic lgo` suggests `log`); 74 when
the record cannot be written or read; 130 when interrupted; 141 when the reader of its output
went away (`| head`). `exec` and `tool` exit with the command's own status, 2 when the call was
rejected or denied, 124 on timeout. `verify`: 0 intact, 1 tampered, 3 torn.

**A journal that does not verify.** Every reader (`log`, `report`, `stats`, `diff`, `plot`,
`html`, `lint`, `export`) checks the hash chain it reads, as `epistemic verify` does, and when
it is not intact says so first, on stderr, before any other output:

```text
epistemic: WARNING: the journal does not verify (TAMPERED): line 4 was edited: ...
epistemic: UNVERIFIED: lines 4-9 (calls 2-4) are not covered by the chain (lines 1-3 verify): ...
epistemic: run `epistemic verify` for the whole verdict
```

RATIONALE.md (`epistemic report`) and the HTML page carry the same notice at the top. The
commands whose purpose is a verdict fail on a journal that is itself damaged (edited,
inserted into, cut, or contradicting its head anchor): `report` and `export` exit 1 (the
report and the bundle are still written, with the notice), `lint` exits 1 with an
`integrity/ID` finding. This is the only change to their exit statuses: an intact journal
exits as before, and a torn last line (a crash) or a missing evidence blob is announced but
leaves `report` and `export` at 0. `log`, `stats`, `diff`, `plot` and `html` only show what
is there: they announce, and exit 0.

**Naming the workspace.** Every command takes `-C DIR`. Those that act in a workspace (`exec`,
`tool`, `run`, `repl`, `doctor`, `mcp`, `init`, `policy check`, `policy explain`, `pending`,
`approve`, `deny`) read it as the workspace; every other command runs as if started in DIR
(its path arguments, the default `.` among them, are read from there, as with `git -C`). A
positional path keeps working.
"""


def render_cli_docs() -> str:
    from .app import build_parser

    previous = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = WIDTH
    try:
        parser = build_parser()
        parts = [
            "# The `epistemic` command line",
            "",
            "Generated from `--help` by `python -m epistemic_agent.cli.docs > docs/cli.md`; "
            "a test keeps it current.",
            "",
            "```text",
            parser.format_help().rstrip(),
            "```",
        ]
        for name, sub in _subparsers(parser).items():
            parts += ["", f"## epistemic {name}", "", "```text", sub.format_help().rstrip(), "```"]
            for inner, nested in _subparsers(sub).items():
                parts += ["", f"### epistemic {name} {inner}", "", "```text"]
                parts += [nested.format_help().rstrip(), "```"]
        parts += ["", EXIT_STATUSES.rstrip()]
    finally:
        if previous is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = previous
    return "\n".join(parts) + "\n"


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return {name: sub for name, sub in action.choices.items() if sub.prog.endswith(name)}
    return {}


if __name__ == "__main__":
    print(render_cli_docs(), end="")
