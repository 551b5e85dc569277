"""Fixed per-request token cost: the system prompt plus the tool schemas, in cl100k_base tokens.

Run from the repository root with the project's virtualenv (node >= 18 and npm on PATH):

    .venv/bin/python bench/bench_tokens.py            # Markdown tables; exit 1 if over target
    .venv/bin/python bench/bench_tokens.py --json     # the same figures as one JSON object

Tokens are counted offline by bench/tokens/count.mjs with the npm package js-tiktoken, pinned in
bench/tokens/package-lock.json; its rank tables ship inside the package, so nothing is
downloaded at count time. If bench/tokens/node_modules is missing, the script runs
`npm ci --silent` there first (that step needs the npm registry once). Before counting, it runs
`count.mjs --self-test`, which checks the exact cl100k_base token ids of known strings
("hello world" -> [15339, 1917]), so a wrong encoding or a broken install fails loudly instead
of producing plausible numbers.

What is counted comes from the product's single sources, never from copies:

* the system prompt: `epistemic_agent.agent.prompt.system_prompt()`;
* the tools as they travel on the wire: `openai_tools()` and `anthropic_tools()` serialised the
  way both SDKs serialise request bodies (`json.dumps(..., separators=(",", ":"),
  ensure_ascii=False)`: openai `_utils/_json.py::openapi_dumps`, anthropic
  `_utils/_json.py::encoder`). The figure with `json.dumps` default separators is shown too.

Caveats: this is a proxy. Providers re-render tool schemas into their own prompt format before
the model sees them (and Anthropic models use their own tokenizer and add a tool-use preamble),
so the billed count differs; cl100k_base over the wire JSON is a stable, comparable measure of
what this project controls. The reference figure (about 1,530 tokens, the concept's reference
implementation that repeats the act list three times) is quoted, not measured here.

Exit status: 0 if both providers' totals are within the target, 1 if not, 2 on a setup error.
Nothing in the repository is modified except bench/tokens/node_modules (git-ignored).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from epistemic_agent.agent.prompt import system_prompt
from epistemic_agent.core.tools import REASON_HELP, TOOL_SPECS, anthropic_tools, openai_tools
from epistemic_agent.core.vocabulary import ACTS

TARGET = 750
#: The concept's reference implementation (act list repeated three times); quoted, not measured.
REFERENCE_TOKENS = 1530

TOKENS_DIR = Path(__file__).resolve().parent / "tokens"
COUNTER = TOKENS_DIR / "count.mjs"
PROVIDERS = ("openai", "anthropic")


class SetupError(RuntimeError):
    """node/npm missing, install failed, or the counter failed its self-test."""


def wire(obj: Any) -> str:
    """JSON exactly as the openai and anthropic SDKs put it in the request body."""
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def _need(tool: str) -> str:
    found = shutil.which(tool)
    if found is None:
        raise SetupError(f"`{tool}` not found on PATH")
    return found


def ensure_counter() -> str:
    """Install js-tiktoken from the lockfile if needed, self-test the counter; return node."""
    node = _need("node")
    if not (TOKENS_DIR / "node_modules" / "js-tiktoken").is_dir():
        npm = _need("npm")
        done = subprocess.run(
            [npm, "ci", "--silent", "--no-audit", "--no-fund"],
            cwd=TOKENS_DIR,
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            raise SetupError(f"npm ci failed in {TOKENS_DIR}:\n{done.stderr or done.stdout}")
    test = subprocess.run(
        [node, str(COUNTER), "--self-test"], capture_output=True, text=True, check=False
    )
    if test.returncode != 0:
        raise SetupError(f"count.mjs self-test failed:\n{test.stdout}{test.stderr}")
    return node


def count(node: str, texts: Mapping[str, str]) -> dict[str, int]:
    """Token counts of each named text, in one node process."""
    done = subprocess.run(
        [node, str(COUNTER)],
        input=json.dumps({"texts": dict(texts)}),
        capture_output=True,
        text=True,
        encoding="utf-8",
        check=False,
    )
    if done.returncode != 0:
        raise SetupError(f"count.mjs failed: {done.stderr.strip()}")
    counts: dict[str, int] = json.loads(done.stdout)
    if set(counts) != set(texts):
        raise SetupError("count.mjs answered for a different set of texts")
    return counts


@dataclass(frozen=True)
class Figures:
    """Everything measured, keyed by the names used in `build_texts`."""

    tokens: dict[str, int]

    def __getitem__(self, name: str) -> int:
        return self.tokens[name]

    def total(self, provider: str) -> int:
        return self["system_prompt"] + self[f"{provider}_tools"]


def build_texts() -> dict[str, str]:
    """Every text to count, from the product's own sources."""
    oa = openai_tools()
    an = anthropic_tools()
    bash = next(spec for spec in TOOL_SPECS if spec.name == "bash")
    type_prop: dict[str, Any] = bash.properties["type"]
    reason_prop: dict[str, Any] = bash.properties["reason"]
    texts: dict[str, str] = {
        "system_prompt": system_prompt(),
        "openai_tools": wire(oa),
        "anthropic_tools": wire(an),
        "openai_tools_default_separators": json.dumps(oa),
        "anthropic_tools_default_separators": json.dumps(an),
        "type_description": type_prop["description"],
        "type_property": wire({"type": type_prop}),
        "type_enum": wire(type_prop["enum"]),
        "reason_property": wire({"reason": reason_prop}),
        "reason_help": REASON_HELP,
    }
    for spec, oa_entry, an_entry in zip(TOOL_SPECS, oa, an, strict=True):
        texts[f"tool:{spec.name}:openai"] = wire(oa_entry)
        texts[f"tool:{spec.name}:anthropic"] = wire(an_entry)
        texts[f"tool:{spec.name}:description"] = spec.description
        texts[f"tool:{spec.name}:parameters"] = wire(spec.parameters)
    for act in ACTS:
        texts[f"act:{act.name}"] = f"{act.name}: {act.meaning}; "
    return texts


def _table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    right = [i > 0 for i in range(len(header))]
    lines = [
        "| " + " | ".join(header) + " |",
        "|" + "|".join("---:" if r else "---" for r in right) + "|",
    ]
    for row in rows:
        cells = [f"{c:,}" if isinstance(c, int) else str(c) for c in row]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f}%" if whole else "-"


def render(fig: Figures) -> str:
    sp = fig["system_prompt"]
    totals = {p: fig.total(p) for p in PROVIDERS}
    out: list[str] = []

    out.append("## Fixed per-request cost (cl100k_base, js-tiktoken, offline)\n")
    rows: list[list[object]] = [["system prompt", sp, sp]]
    rows.append(["tool schemas (wire JSON, compact)", fig["openai_tools"], fig["anthropic_tools"]])
    rows.append(
        ["**total per request**", f"**{totals['openai']:,}**", f"**{totals['anthropic']:,}**"]
    )
    rows.append(["target", TARGET, TARGET])
    rows.append(
        [
            "verdict",
            *(
                "PASS" if totals[p] <= TARGET else f"FAIL (+{totals[p] - TARGET:,})"
                for p in PROVIDERS
            ),
        ]
    )
    rows.append(
        [
            f"reference implementation (act list x3), quoted: ~{REFERENCE_TOKENS:,}",
            *(f"{_pct(totals[p], REFERENCE_TOKENS)} of it" for p in PROVIDERS),
        ]
    )
    rows.append(
        [
            "(tools with json.dumps default separators)",
            fig["openai_tools_default_separators"],
            fig["anthropic_tools_default_separators"],
        ]
    )
    out.append(_table(["", "OpenAI", "Anthropic"], rows))

    out.append("\n\n## Per tool (one list entry, wire JSON)\n")
    tool_rows: list[list[object]] = []
    for spec in TOOL_SPECS:
        k = f"tool:{spec.name}"
        tool_rows.append(
            [
                f"`{spec.name}`",
                fig[f"{k}:openai"],
                fig[f"{k}:anthropic"],
                fig[f"{k}:description"],
                fig[f"{k}:parameters"],
            ]
        )
    sums = {p: sum(fig[f"tool:{s.name}:{p}"] for s in TOOL_SPECS) for p in PROVIDERS}
    tool_rows.append(
        [
            "list brackets and commas",
            fig["openai_tools"] - sums["openai"],
            fig["anthropic_tools"] - sums["anthropic"],
            "",
            "",
        ]
    )
    out.append(
        _table(
            [
                "tool",
                "OpenAI entry",
                "Anthropic entry",
                "of which description",
                "parameters schema",
            ],
            tool_rows,
        )
    )

    out.append("\n\n## Where the budget goes\n")
    n_reason = sum(1 for s in TOOL_SPECS if "reason" in s.properties)
    where: list[list[object]] = [
        [
            "act vocabulary: bash `type` description (text)",
            fig["type_description"],
            _pct(fig["type_description"], totals["openai"]),
        ],
        [
            "act vocabulary: whole `type` property (enum + description, JSON)",
            fig["type_property"],
            _pct(fig["type_property"], totals["openai"]),
        ],
        ["  of which the enum of act names", fig["type_enum"], ""],
        [
            f"`reason` property, repeated in {n_reason} tools",
            n_reason * fig["reason_property"],
            _pct(n_reason * fig["reason_property"], totals["openai"]),
        ],
        ["system prompt", sp, _pct(sp, totals["openai"])],
    ]
    out.append(_table(["item", "tokens", "share of OpenAI total"], where))

    out.append("\n\n## Act vocabulary, one act at a time (`name: meaning; ` in the description)\n")
    out.append(_table(["act", "tokens"], [[f"`{a.name}`", fig[f"act:{a.name}"]] for a in ACTS]))
    return "\n".join(out) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    try:
        node = ensure_counter()
        fig = Figures(count(node, build_texts()))
    except SetupError as err:
        print(f"bench_tokens: {err}", file=sys.stderr)
        return 2
    ok = all(fig.total(p) <= TARGET for p in PROVIDERS)
    if args.json:
        summary = {
            "encoding": "cl100k_base",
            "target": TARGET,
            "reference_quoted": REFERENCE_TOKENS,
            "totals": {p: fig.total(p) for p in PROVIDERS},
            "pass": ok,
            "tokens": fig.tokens,
        }
        print(json.dumps(summary, indent=2))
    else:
        print(render(fig), end="")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
