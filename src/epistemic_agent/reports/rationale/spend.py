"""RATIONALE.md's account of what the model calls cost: tokens, dollars, per act type, and
the share of output spent on the declared reasons (see docs/report.md)."""

from __future__ import annotations

import re

from ...journal import Spend, dollars

_NAME = re.compile(r"[a-z][a-z-]*|\([a-z ]+\)")


def section(spend: Spend) -> str:
    """Empty until a provider reports tokens (a scripted model reports none)."""
    if not spend.reported:
        return ""
    data = spend.to_json()
    cost = dollars(data["cost"])
    if data["unpriced"]:
        cost += f" ({data['unpriced']} model call(s) without a known price)"
    lines = [
        f"_Tokens: {data['input_tokens']:,} input ({data['cached_tokens']:,} read from the "
        f"prompt cache, {data['cache_creation_input_tokens']:,} written to it), "
        f"{data['output_tokens']:,} output; cost {cost}._",
        "",
    ]
    if data["reason_share"] is not None:
        lines += [
            f"_Declared reasons: about {data['reason_tokens']:,} output tokens, "
            f"{data['reason_share']:.1%} of the output._",
            "",
        ]
    if data["thinking_records"] or data["compactions"]:
        lines += [
            f"_{data['thinking_records']} thinking record(s) in the journal; "
            f"{data['compactions']} compaction(s) of old tool output._",
            "",
        ]
    lines += ["| act type | calls | input tokens | output tokens | cost |", "|---|--:|--:|--:|--:|"]
    for act, bucket in data["by_act"].items():
        lines.append(
            f"| {_name(act)} | {bucket['calls']} | {bucket['input_tokens']:,.0f} | "
            f"{bucket['output_tokens']:,.0f} | {dollars(bucket['cost'])} |"
        )
    return "\n".join(lines) + "\n\n"


def _name(act: str) -> str:
    """An act as a code span; a foreign writer's odd name is shown escaped, not as Markdown."""
    if _NAME.fullmatch(act):
        return f"`{act}`"
    shown = act.encode("unicode_escape").decode("ascii").replace("`", "'").replace("|", "\\|")
    return f"`{shown}`"
