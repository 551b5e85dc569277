"""The path to what a session runs or obeys, protected as well as the thing itself.

An act that could rename a folder above a protected file could move it aside and rebuild the
path with content of its own: a policy that allows everything, a tool whose package runs a
payload in the next unconfined `epistemic exec`, a git hook the human's next commit runs.
Here every ancestor of every protected item, up to the writable root it lies in (the
workspace, a granted folder), is tried, from each mutating act type, by the shell and by an
interpreter, with the static gate blinded so that only the kernel stands in the way; then
the same attacks with the gate looking, which refuses the ones it can read before they run;
then through `epistemic exec` and `epistemic mcp`, after which the next session runs only
the human's code and policy.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import cli_env, epistemic
from epistemic_agent import Session
from epistemic_agent.effects.cache import EffectCache
from epistemic_agent.effects.classify import Effect
from epistemic_agent.execute.sandbox import confinement as confine
from epistemic_agent.execute.sandbox.platform import Platform, detect
from epistemic_agent.policy.file import load_policy
from epistemic_agent.session.session import Settings
from sshkeys import new_key, signer_line

pytestmark = [
    pytest.mark.system,  # protected paths under every mechanism
    pytest.mark.skipif(sys.platform != "linux", reason="confinement is Linux-only"),
]

FOUND = detect(probe_bwrap=True)
MUTATING = ("change-state", "setup", "revert", "cleanup")
WHY = "move this folder aside and put a copy of my own in its place"
POLICY = """default = "allow"
[approval]
allowed_signers = "keys/allowed_signers"
[[rule]]
id = "no-forbidden"
when = "command.contains('forbidden')"
decision = "deny"
[sandbox]
writable.setup = ["~/.local"]
writable.change-state = ["~/.local"]
writable.revert = ["~/.local"]
writable.cleanup = ["~/.local"]
"""


def platform(name: str) -> Platform:
    if name == "bwrap":
        assert FOUND.bwrap is not None and FOUND.bwrap_error is None, FOUND.bwrap_error
        return Platform(None, "off", None, "off", FOUND.bwrap, None)
    assert FOUND.landlock_abi is not None and FOUND.namespaces is not None
    return Platform(FOUND.landlock_abi, None, FOUND.namespaces, None, None, "not used")


@dataclass
class Layout:
    """A workspace holding each kind of protected item a few folders down."""

    ws: Path
    home: Path
    policy: Path

    @property
    def items(self) -> dict[str, Path]:
        return {
            "policy": self.policy,
            "signers": self.policy.parent / "keys" / "allowed_signers",
            "tool": self.ws / "app" / ".venv",
            "hooks": self.ws / ".git" / "hooks",
            "git config": self.ws / ".git" / "config",
            "client settings": self.ws / ".vscode" / "mcp.json",
            "trust store": self.home / ".local" / "state" / "epistemic" / "trusted",
        }

    def root_of(self, item: Path) -> Path:
        """The writable root an item lies in."""
        grant = self.home / ".local"
        return grant if grant in item.parents else self.ws

    def ladder(self, item: Path) -> list[Path]:
        """The item and every folder between it and its writable root, deepest first."""
        root, found = self.root_of(item), [item]
        found += [p for p in item.parents if root in p.parents]
        return found


@pytest.fixture
def layout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Layout]:
    ws, home = tmp_path / "ws", tmp_path / "home"
    policy = ws / "pol" / "sub" / "policy.toml"
    (policy.parent / "keys").mkdir(parents=True)
    (home / ".local" / "state" / "epistemic" / "trusted").mkdir(parents=True)
    key = new_key(tmp_path, "alice")
    (policy.parent / "keys" / "allowed_signers").write_text(signer_line(key) + "\n")
    policy.write_text(POLICY)
    venv = ws / "app" / ".venv" / "lib" / "pkg"
    venv.mkdir(parents=True)
    (venv / "__init__.py").write_text("TOOL = 'the human's'\n")
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    (ws / ".vscode").mkdir()
    (ws / ".vscode" / "mcp.json").write_text("{}\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_STATE_HOME", raising=False)
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    real = confine.tool_paths()
    monkeypatch.setattr(confine, "tool_paths", lambda: (*real, str(ws / "app" / ".venv")))
    yield Layout(ws, home, policy)


@pytest.fixture
def blind_gate(monkeypatch: pytest.MonkeyPatch) -> None:
    unknown = Effect("unknown", dynamic=True, reasons=("the test hides the command",))
    monkeypatch.setattr(EffectCache, "classify", lambda self, command: unknown)


def fingerprint(layout: Layout) -> dict[str, object]:
    """What each protected item holds, and which inode its path leads to."""
    found: dict[str, object] = {}
    for name, item in layout.items.items():
        info = os.stat(item)
        content = sorted(os.listdir(item)) if item.is_dir() else item.read_bytes()
        found[name] = (info.st_ino, content)
    return found


def swap_commands(step: Path) -> list[str]:
    """Move `step` aside and rebuild it, by the shell and by an interpreter."""
    moved = f"{step}.old"
    rebuild = f"mkdir -p {step.parent} && mkdir -p {step} ; printf PAYLOAD > {step}/x"
    python = f"import os; os.rename({str(step)!r}, {moved!r}); os.makedirs({str(step)!r})"
    return [f"mv {step} {moved} ; {rebuild}", f"python3 -c {json.dumps(python)} ; {rebuild}"]


@pytest.mark.parametrize("mechanism", ["landlock+namespaces", "bwrap"])
@pytest.mark.usefixtures("blind_gate")
def test_no_act_can_move_any_folder_on_the_way_to_a_protected_item(
    layout: Layout, mechanism: str
) -> None:
    before = fingerprint(layout)
    settings = Settings(platform=platform(mechanism))
    tried = 0
    with Session(layout.ws, settings, policy=load_policy(layout.policy)) as session:
        for number, (name, item) in enumerate(layout.items.items()):
            for step in layout.ladder(item):
                for index, act in enumerate(MUTATING):  # every act, each route twice a step
                    command = swap_commands(step)[index % 2]
                    done = session.bash(command, act, WHY)
                    assert done.status == "ran", (name, step, done.status, done.message)
                    flags = list(done.flags)  # the ids
                    assert "protected-path-attempted" in flags, (name, step, act, done.flags)
                    tried += 1
                    assert not Path(f"{step}.old").exists(), (name, step, act, done.stderr)
            assert number < 10
    assert fingerprint(layout) == before
    assert tried >= 60
    with Session(layout.ws, settings, policy=load_policy(layout.policy)) as session:
        assert session.bash("echo forbidden", "setup", WHY).status == "rejected"


@pytest.mark.parametrize("mechanism", ["landlock+namespaces", "bwrap"])
def test_the_gate_refuses_the_moves_it_can_read_and_records_them(
    layout: Layout, mechanism: str
) -> None:
    settings = Settings(platform=platform(mechanism))
    with Session(layout.ws, settings, policy=load_policy(layout.policy)) as session:
        for item in layout.items.values():
            for step in layout.ladder(item):
                for act in MUTATING:
                    done = session.bash(f"mv {step} {step}.old", act, WHY)
                    assert done.status == "rejected" and done.rule == "path-protected", step
                    assert f"{step}', which is or leads to" in str(done.message)
                written = session.write_file(str(item / "x" if item.is_dir() else item), "x", WHY)
                if layout.ws in item.parents:
                    assert written.status == "rejected" and written.rule == "path-protected"


def test_through_exec_and_mcp_the_next_session_runs_only_the_humans_policy(
    layout: Layout,
) -> None:
    env = cli_env(HOME=str(layout.home), XDG_STATE_HOME=None, TMPDIR=str(layout.ws.parent))
    pol = ["--policy", str(layout.policy)]

    def exec_(act: str, command: str) -> subprocess.CompletedProcess[str]:
        return epistemic(
            "exec", "-C", str(layout.ws), *pol, "--type", act, "--reason", WHY, "--", command,
            env=env, no_traceback=True,
        )  # fmt: skip

    read = exec_("setup", f"mv {layout.ws / 'pol'} {layout.ws / 'pol.old'}")
    assert read.returncode == 2 and "path-protected" in read.stderr
    script = layout.ws.parent / "swap.py"  # no path the gate could read
    script.write_text(
        "import os, sys\ntry:\n    os.rename('p' + 'ol', 'elsewhere')\n"
        "except OSError as error:\n    sys.exit(str(error))\n"
    )
    hidden = f"python3 {script}"
    swapped = exec_("setup", hidden)
    assert swapped.returncode != 0 and not (layout.ws / "elsewhere").exists()
    assert exec_("setup", "echo forbidden").returncode == 2  # the human's policy, still
    outcomes = [r for r in journal_records(layout.ws) if r.get("kind") == "outcome"]
    assert "protected-path-attempted" in json.dumps(outcomes[-1]["flags"])  # the hidden move
    served = mcp_calls(layout, env, pol, hidden, "echo forbidden")
    assert "busy" in served[0].lower() and "no-forbidden" in served[1], served
    outcomes = [r for r in journal_records(layout.ws) if r.get("kind") == "outcome"]
    assert "protected-path-attempted" in json.dumps(outcomes[-1]["flags"])  # the MCP session's
    assert not (layout.ws / "elsewhere").exists()
    again = mcp_calls(layout, env, pol, "echo forbidden")  # a fresh server, the same flags
    assert "no-forbidden" in again[0]


def journal_records(ws: Path) -> list[dict[str, object]]:
    journals = [
        ws / ".epistemic" / "journal.jsonl",
        *ws.glob(".epistemic/sessions/*/journal.jsonl"),
    ]
    return [json.loads(line) for path in journals for line in path.read_text().splitlines()]


def mcp_calls(layout: Layout, env: dict[str, str], opts: list[str], *commands: str) -> list[str]:
    """Each command through a fresh `epistemic mcp` server, over stdio, as a client sends it."""
    import anyio

    from mcpclient import connect

    texts: list[str] = []

    async def main() -> None:
        async with connect(layout.ws, *opts, env=env) as client:
            for command in commands:
                args = {"command": command, "type": "setup", "reason": WHY}
                result = await client.call_tool("bash", args)
                texts.append(" ".join(getattr(part, "text", "") for part in result.content))

    anyio.run(main)
    return texts
