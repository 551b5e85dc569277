"""The docs' commands, run as written.

A shell block of README.md or docs/*.md is run when the line before its opening fence is
`<!-- runnable -->` (tests/docblocks.py: one command a line, each must exit 0). Every `sh`
block of README.md and docs/clients.md is marked, or NOT_RUN says why not; MARKED counts the
marked blocks, so that a marker deleted by mistake fails.

Each block runs in a scratch place of its own (docblocks.Scratch: a git repository, a HOME
with alice@example.com's SSH key, a TMPDIR, .venv/bin first on PATH) with the docs'
placeholders filled in (docblocks.substituted: `/path/to/repo`, `path/to/repo` and `-C repo`
are the repository, `"TASK"` a short task, `HASH` the journal head the command before
printed). Models are fakes on 127.0.0.1 (docblocks.DocsModel: the SDKs read OPENAI_BASE_URL
and ANTHROPIC_BASE_URL; a command's own `--base-url http://localhost:PORT` gets one on that
port). What a block needs before it runs is prepared here, never by changing its commands:

- the tour runs under the README's policy, with the allowed_signers file the README's own
  block makes; before its `epistemic pending`, another session starts and waits with call 7
  (a write of app.py) for the approval the tour's `epistemic approve 7` gives; its `epistemic
  repl` reads one task line;
- "Reading sessions" reads a session that wrote app.py and verified it, and runs/a and runs/b,
  two sessions of one scripted task;
- `replay:session.json` is SESSION, the session the README's example of `run`'s output shows;
- a policy snippet (README.md, docs/policy.md, docs/clients.md) that is part of a file is
  checked with what a whole file has before it when it lacks them (WHOLE: `default = "allow"`,
  `approval = { allowed_signers = "allowed_signers" }`), the allowed_signers files it names
  made the README's way;
- the client blocks (`epistemic init`, then `claude -p` and `codex exec`) run the clients
  that tests/npm/package.json pins against tests/modelserver.py; Codex 0.171 reads no
  OPENAI_BASE_URL, so its model provider is in the scratch HOME's ~/.codex/config.toml.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import time
import tomllib
from pathlib import Path
from typing import Any

import pytest

from agentclients import HANDSHAKE_NAMES, Codex
from docblocks import TASK, Block, DocsModel, Scratch, blocks, models_on_ports, substituted
from modelserver import Call, ModelServer, Step
from npminstall import InstallError, install, pinned

ROOT = Path(__file__).resolve().parents[2]
DOCS = ["README.md", *(f"docs/{path.name}" for path in sorted((ROOT / "docs").glob("*.md")))]
MARKED = 7  # README.md: 5, docs/clients.md: 2
NOT_RUN = {
    ("README.md", "Quick start"): "./scripts/test is this test suite, and both scripts "
    "reinstall .venv/ in place",
}
#: What a client may not say on stderr when it runs as the docs say.
CLIENT_WARNING = re.compile(r"(?i)no known tool|unknown tool|not been trusted|untrusted")
PACKAGES = {  # as docs/clients.md names them
    "Claude Code": "@anthropic-ai/claude-code",
    "Codex CLI": "@openai/codex",
    "MCP Inspector": "@modelcontextprotocol/inspector",
}
#: What a policy snippet that is part of a file gets before it, when it lacks the key.
WHOLE = {
    "default": 'default = "allow"\n',
    "approval": 'approval = { allowed_signers = "allowed_signers" }\n',
}
LOOK = "Nothing is known about this workspace yet; list it before changing anything."
APP_PY = "".join(f"STEP_{n} = {n}\n" for n in range(1, 46))


def bash(command: str, act: str | None, reason: str) -> dict[str, Any]:
    args = {"command": command, "reason": reason} | ({"type": act} if act else {})
    return {"tool": "bash", "args": args}


#: `replay:session.json`: the session whose first two calls the README shows `run` printing.
SESSION: list[dict[str, Any]] = [
    {
        "calls": [
            bash(
                'grep -rn "def parse" src/',
                "collect-info",
                "Find where orders are parsed before changing it",
            )
        ]
    },
    {"calls": [bash("touch notes.md", None, "Start the notes file the task asks for")]},
    {"final": "Orders are parsed in src/orders.py."},
]
WRITE_APP = {
    "tool": "write_file",
    "args": {"path": "app.py", "content": APP_PY, "reason": "Add the app module the task asks for"},
}
#: The session the tour's `epistemic approve 7` answers: six looks, then call 7 waits.
WAITING: list[dict[str, Any]] = [
    *({"calls": [bash("ls src", "collect-info", f"{LOOK} (look {n})")]} for n in range(1, 7)),
    {"calls": [WRITE_APP]},
    {"final": "app.py is written."},
]
#: The session "Reading sessions" reads: it writes app.py, then verifies it.
APP: list[dict[str, Any]] = [
    {"calls": [WRITE_APP]},
    {"calls": [bash("grep -c STEP_ app.py", "verify", "Confirm every step of app.py landed")]},
    {"final": "app.py is written and checked."},
]


def marked(docs: list[str] = DOCS) -> list[Block]:
    return [block for doc in docs for block in blocks(ROOT, doc) if block.marked]


def is_client(block: Block) -> bool:
    """A block that sets up or runs Claude Code or Codex."""
    pattern = r"^(epistemic init |claude |codex )|&& (claude|codex) "
    return any(re.search(pattern, command) for command in block.commands())


def section_block(doc: str, section: str, lang: str) -> Block:
    found = [b for b in blocks(ROOT, doc) if b.section == section and b.lang == lang]
    assert found, f"{doc} has no {lang} block under {section!r}"
    return found[0]


def script(world: Scratch, name: str, turns: list[dict[str, Any]]) -> Path:
    path = world.root / name
    path.write_text(json.dumps(turns, indent=1))
    return path


def replay(world: Scratch, turns: list[dict[str, Any]], name: str, *args: str) -> None:
    where = script(world, name, turns)
    done = world.run(shlex.join(["epistemic", "run", "--model", f"replay:{where}", *args, TASK]))
    assert done.code == 0, done.said()


# What each kind of block needs before it runs.


class Waiting:
    """A session that waits with call 7 for an approval (WAITING), in the background."""

    def __init__(self) -> None:
        self.process: subprocess.Popen[bytes] | None = None

    def start(self, world: Scratch) -> None:
        where = script(world, "waiting.json", WAITING)
        argv = ["epistemic", "run", "--model", f"replay:{where}", "Add the app module"]
        with open(world.root / "waiting.out", "wb") as out:  # the child keeps its own copy
            self.process = subprocess.Popen(
                argv,
                cwd=world.repo,
                env=world.env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        deadline = time.monotonic() + 60
        while not any(request["seq"] == 7 for request in world.epistemic_json("pending")):
            said = (world.root / "waiting.out").read_text()
            assert self.process.poll() is None, f"the session ended before asking: {said}"
            assert time.monotonic() < deadline, f"no request for call 7 within 60 s: {said}"
            time.sleep(0.2)

    def finish(self, world: Scratch) -> None:
        assert self.process is not None
        said = (world.root / "waiting.out").read_text
        assert self.process.wait(timeout=60) == 0, said()
        assert (world.repo / "app.py").read_text() == APP_PY, said()

    def close(self) -> None:
        """Whatever happened, nothing the test started outlives it."""
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()


def tour(world: Scratch, block: Block) -> None:
    policies(world, section_block("README.md", "Policies and approval", "sh"))
    waiting = Waiting()
    try:
        world.play(
            block,
            before={"epistemic pending": waiting.start},
            after={"epistemic approve 7": waiting.finish},
            inputs={"epistemic repl": TASK + "\n"},
        )
    finally:
        waiting.close()


def reading(world: Scratch, block: Block) -> None:
    replay(world, APP, "app.json")
    for name in ("a", "b"):  # two agents, each in a copy of the repository
        shutil.copytree(world.repo / "src", world.repo / "runs" / name / "src")
        replay(world, SESSION, f"session-{name}.json", "-C", f"runs/{name}", "--here")
    world.play(block)


def policies(world: Scratch, block: Block) -> None:
    """The README's policy, and the allowed_signers file its own block makes."""
    (world.repo / "epistemic.toml").write_text(
        section_block("README.md", "Policies and approval", "toml").text
    )
    world.play(block)


def plain(world: Scratch, block: Block) -> None:
    (world.repo / "session.json").write_text(json.dumps(SESSION, indent=1))
    world.play(block)


PREPARE = {
    "A tour of the CLI": tour,
    "Reading sessions": reading,
    "Policies and approval": policies,
}


def test_every_shell_block_is_marked_or_says_why_not() -> None:
    for doc in ("README.md", "docs/clients.md"):
        for block in blocks(ROOT, doc):
            if block.lang == "sh" and not block.marked:
                assert (doc, block.section) in NOT_RUN, f"{block.where}: mark it, or say why not"
    found = marked()
    assert all(block.lang == "sh" for block in found), [b.where for b in found if b.lang != "sh"]
    assert len(found) >= MARKED, f"{len(found)} marked blocks, {MARKED} expected: a lost marker?"
    assert any(is_client(block) for block in found)


@pytest.mark.system  # every command the docs show, as written (minutes)
def test_the_docs_commands_run_as_written(tmp_path: Path) -> None:
    """Every marked block but the clients', each in a scratch place of its own."""
    runnable = [block for block in marked() if not is_client(block)]
    ports = sorted(
        {int(port) for b in runnable for port in re.findall(r"//localhost:(\d+)", b.text)}
    )
    with DocsModel() as model, models_on_ports(ports) as fixed:
        for number, block in enumerate(runnable):
            world = Scratch(tmp_path / f"block-{number}", model.url)
            PREPARE.get(block.section, plain)(world, block)
    assert len(runnable) >= MARKED - 3  # the client blocks run in the test below
    asked = {m for server in (model, *fixed) for m in server.models}
    named = {
        m
        for b in runnable
        for p, m in re.findall(r"--model (\w[\w-]*):(\S+)", b.text)
        if p != "replay"
    }
    assert named and named <= asked, f"models no command asked the fakes for: {named - asked}"


def test_run_prints_each_call_as_the_readme_shows(tmp_path: Path) -> None:
    models = section_block("README.md", "Models", "sh")
    example = section_block("README.md", "Models", "text").text
    command = next(c for c in models.commands() if "replay:session.json" in c)
    world = Scratch(tmp_path, "http://127.0.0.1:9")  # a scripted session calls no model
    (world.repo / "session.json").write_text(json.dumps(SESSION, indent=1))
    done = world.run(substituted(command, world.repo, ""))
    assert done.code == 0, done.said()

    def durations(text: str) -> str:
        return re.sub(r"\d+\.\d\d s\b", "N.NN s", text)

    assert durations(example) in durations(done.stdout), done.stdout


@pytest.mark.system  # end to end, slow for the default tier
def test_the_policy_snippets_pass_policy_check(tmp_path: Path) -> None:
    world = Scratch(tmp_path, "http://127.0.0.1:9")
    policies(world, section_block("README.md", "Policies and approval", "sh"))
    signers = (world.repo / "allowed_signers").read_text()
    docs = ("README.md", "docs/policy.md", "docs/clients.md")
    snippets = [block for doc in docs for block in blocks(ROOT, doc) if block.lang == "toml"]
    assert len(snippets) >= 9
    for number, snippet in enumerate(snippets):
        folder = world.root / "snippets" / str(number)
        folder.mkdir(parents=True)
        try:
            keys = tomllib.loads(snippet.text)
        except tomllib.TOMLDecodeError as error:
            raise AssertionError(f"{snippet.where}: not TOML: {error}") from None
        lacks = "".join(line for key, line in WHOLE.items() if key not in keys)
        (folder / "epistemic.toml").write_text(lacks + snippet.text)
        for name in re.findall(r'allowed_signers = "([^"]+)"', lacks + snippet.text):
            (folder / name).write_text(signers)  # made the README's way
        done = world.run(
            shlex.join(["epistemic", "policy", "check", str(folder / "epistemic.toml")])
        )
        assert done.code == 0, f"{snippet.where}\n{done.said()}"


# The real clients (slow: a few seconds a run).


@pytest.fixture(scope="module")
def binaries() -> Path:
    try:
        return install()
    except InstallError as error:
        pytest.fail(f"the real MCP clients could not be installed: {error}", pytrace=False)


@pytest.mark.system  # the real clients, installed from npm
def test_clients_md_names_the_pinned_clients_and_the_node_they_declare(binaries: Path) -> None:
    section = (ROOT / "docs" / "clients.md").read_text().split("## What the tests drive", 1)[1]
    rows = re.findall(r"^\| ([^|]+?) \| ([^|]+?) \| ([^|]+?) \|$", section, re.M)
    table = {name: (version, node) for name, version, node in rows if name != "client"}
    assert {PACKAGES.get(name) for name in table} == set(pinned()), table
    for name, (version, node) in table.items():
        installed = json.loads((binaries.parent / PACKAGES[name] / "package.json").read_text())
        assert version == pinned()[PACKAGES[name]] == installed["version"], name
        assert node == installed.get("engines", {}).get("node", "none"), name
    claude = (binaries / "claude").resolve()
    assert claude.read_bytes()[:4] == b"\x7fELF"  # native: it runs whatever the Node.js
    for program, name in (("claude", "Claude Code"), ("codex", "Codex CLI")):
        said = subprocess.run([binaries / program, "--version"], capture_output=True, text=True)
        assert table[name][0] in said.stdout, said


@pytest.mark.system  # the real clients, installed from npm
def test_the_clients_run_headless_as_the_docs_say(tmp_path: Path, binaries: Path) -> None:
    """clients.md's `epistemic init` block, then its headless block and the README's: each run
    makes one gated call, and neither client warns about a tool or an untrusted workspace."""
    look = Step([Call("bash", {"command": "ls", "type": "collect-info", "reason": LOOK})])
    steps = [look, Step(text="Listed."), look, Step(text="Listed.")]  # two runs each
    runs = [block for block in marked() if is_client(block)]
    assert len(runs) >= 3  # clients.md's init and headless blocks, the README's headless one
    runs.sort(key=lambda block: not block.commands()[0].startswith("epistemic init"))
    with ModelServer("anthropic", steps) as claude, ModelServer("responses", steps) as codex:
        world = Scratch(tmp_path, claude.url, path=[binaries])
        Codex(binaries).provider(world.home, codex.url)
        world.env["SCRIPTED_API_KEY"] = "not-a-key"
        for block in runs:
            for ran in world.play(block):
                assert not CLIENT_WARNING.search(ran.stderr), f"{block.where}\n{ran.said()}"
    names = []
    for entry in world.epistemic_json("sessions"):
        journal = Path(entry["journal"])
        client = json.loads(journal.read_text().splitlines()[0])["mcp_client"]
        names.append((client["name"], client["version"]))  # the versions clients.md states
        views = world.epistemic_json("log", str(journal))
        assert [(v["act"], v["status"], v["reason"]) for v in views] == [
            ("collect-info", "ran", LOOK)
        ]
    expected = [
        (HANDSHAKE_NAMES["claude-code"], pinned()[PACKAGES["Claude Code"]]),
        (HANDSHAKE_NAMES["codex"], pinned()[PACKAGES["Codex CLI"]]),
    ]
    assert sorted(names) == sorted(expected * 2)
