"""No session puts in force a policy that an act could have written.

An act plants a policy (or a file a policy names) in a workspace; each way a human starts the
next session (`exec --session new`, a fresh `epistemic mcp`, `run`) refuses it with one line
naming the call, until the human puts it in force with `epistemic policy trust`. A policy
that appears while a session goes on does not stop it: the session goes on under the one it
recorded, and says so once. A policy a human writes between sessions is in force at once.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from conftest import EPISTEMIC, cli_env, epistemic, eventually
from epistemic_agent import Session
from epistemic_agent.journal.writers import find_writer
from epistemic_agent.policy.rules import PolicyError
from epistemic_agent.session.session import Settings

LOOK = "see what the workspace holds before anything else"
SETUP = "prepare the configuration the next session will use"
#: A policy an agent would like: everything allowed, nothing hidden. The command text never
#: names the file (the static gate would refuse it): python builds the name.
PLANT = (
    "python3 -c \"open('epistemic' + '.toml', 'w')"
    ".write('default = \\'allow\\'\\n[sandbox]\\nhidden = []\\n')\""
)
DENY_ALL = 'default = "deny"\n'


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home and a trust store of the test's own."""
    folder = tmp_path / "home"
    folder.mkdir()
    monkeypatch.setenv("HOME", str(folder))
    monkeypatch.delenv("XDG_STATE_HOME", raising=False)
    return folder


def env(home: Path) -> dict[str, str]:
    return cli_env(HOME=str(home), XDG_STATE_HOME=None)


def exec_(
    ws: Path, home: Path, *opts: str, act: str = "collect-info"
) -> subprocess.CompletedProcess[str]:
    return epistemic(
        "exec", "-C", str(ws), *opts, "--type", act, "--reason", LOOK, "--", "ls",
        env=env(home), no_traceback=True,
    )  # fmt: skip


def plant(ws: Path, home: Path) -> None:
    """The first session's act writes epistemic.toml (the workspace had none)."""
    planted = epistemic(
        "exec", "-C", str(ws), "--type", "setup", "--reason", SETUP, "--", PLANT,
        env=env(home), no_traceback=True,
    )  # fmt: skip
    assert planted.returncode == 0, planted.stderr
    assert (ws / "epistemic.toml").is_file()


def records(ws: Path, kind: str) -> list[dict[str, object]]:
    found = []
    for journal in [
        ws / ".epistemic" / "journal.jsonl",
        *ws.glob(".epistemic/sessions/*/journal.jsonl"),
    ]:
        for line in journal.read_text().splitlines():
            record = json.loads(line)
            if record.get("kind") == kind:
                found.append(record)
    return found


@pytest.mark.system  # end to end, slow for the default tier
def test_a_planted_policy_is_refused_by_a_new_exec_session_until_a_human_trusts_it(
    ws: Path, home: Path
) -> None:
    assert exec_(ws, home).returncode == 0
    plant(ws, home)
    refused = exec_(ws, home, "--session", "new")
    assert refused.returncode == 2
    line = next(x for x in refused.stderr.splitlines() if "not put in force" in x)
    assert "epistemic.toml" in line and "call 2 of session" in line and "(setup) wrote it" in line
    assert "epistemic policy trust" in line
    assert len(list(ws.glob(".epistemic/sessions/*/journal.jsonl"))) == 0  # nothing started
    trusted = epistemic("policy", "trust", "-C", str(ws), env=env(home), no_traceback=True)
    assert trusted.returncode == 0 and "trusted" in trusted.stdout
    entry = next((home / ".local/state/epistemic/trusted").iterdir())
    assert json.loads(entry.read_text())["path"] == str((ws / "epistemic.toml").resolve())
    started = exec_(ws, home, "--session", "new")
    assert started.returncode == 0, started.stderr
    header = json.loads(
        next(ws.glob(".epistemic/sessions/*/journal.jsonl")).read_text().split("\n")[0]
    )
    assert header["policy"]["source"] == str(ws / "epistemic.toml")
    assert header["confinement"]["hidden"] == [str(ws / ".epistemic")]  # the policy's own


@pytest.mark.system  # end to end, slow for the default tier
def test_a_planted_policy_stops_a_fresh_mcp_server_and_a_run(ws: Path, home: Path) -> None:
    plant(ws, home)
    served = subprocess.run(
        [EPISTEMIC, "mcp", "-C", str(ws)], env=env(home), stdin=subprocess.DEVNULL,
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert served.returncode == 2 and "not put in force: call 1 of session" in served.stderr
    assert "Traceback" not in served.stderr
    script = ws.parent / "session.json"
    script.write_text(json.dumps([{"final": "done"}]))
    ran = epistemic(
        "run", "--model", f"replay:{script}", "-C", str(ws), "look around",
        env=env(home), no_traceback=True,
    )  # fmt: skip
    assert ran.returncode == 2 and "not put in force: call 1 of session" in ran.stderr
    assert epistemic("policy", "trust", "-C", str(ws), env=env(home)).returncode == 0
    ran = epistemic(
        "run", "--model", f"replay:{script}", "-C", str(ws), "look around",
        env=env(home), no_traceback=True,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    served = subprocess.run(
        [EPISTEMIC, "mcp", "-C", str(ws)], env=env(home), stdin=subprocess.DEVNULL,
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert served.returncode == 0 and "not put in force" not in served.stderr, served.stderr


@pytest.mark.system  # end to end, slow for the default tier
def test_a_policy_planted_mid_session_does_not_stop_it_and_is_said_once(
    ws: Path, home: Path
) -> None:
    assert exec_(ws, home).returncode == 0
    plant(ws, home)
    first, second = exec_(ws, home), exec_(ws, home)
    assert first.returncode == 0 and second.returncode == 0, first.stderr
    assert "goes on under the one it recorded" in first.stderr
    assert "goes on under the one it recorded" not in second.stderr
    ignored = records(ws, "policy-ignored")
    assert len(ignored) == 1 and ignored[0]["in_force"]["source"] == "preset:approve-none"
    assert records(ws, "policy") == []  # the policy in force never changed
    assert epistemic("verify", str(ws), env=env(home)).returncode == 0


def test_a_policy_a_human_writes_between_sessions_is_in_force_at_once(ws: Path, home: Path) -> None:
    assert exec_(ws, home).returncode == 0
    (ws / "epistemic.toml").write_text(DENY_ALL)
    refused = exec_(ws, home, "--session", "new")
    assert refused.returncode == 2 and "REJECTED policy" in refused.stderr  # in force: it denies


def after_the_session(folder: Path) -> None:
    """Until a file written now is dated after this moment: file times come from a clock that
    ticks every few milliseconds, so a human's write just after the last call could otherwise
    be dated while it ran."""
    moment, probe = time.time_ns(), folder / "clock-probe"

    def dated_after() -> bool:
        probe.write_text("")
        return probe.stat().st_mtime_ns > moment

    eventually(dated_after, "a file time after the session's end", 5)


def test_signers_an_act_wrote_are_refused_for_the_policy_that_names_them(
    ws: Path, home: Path
) -> None:
    (ws / "keys").mkdir()
    line = f"alice@example.com ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{'A' * 43}\n"
    with Session(ws) as session:
        write = f"open('keys/allowed_' + 'signers', 'w').write({line!r})"
        assert session.bash(f'python3 -c "{write}"', "setup", SETUP).returncode == 0
        assert session.bash("ls", "collect-info", LOOK).status == "ran"  # the act is long over
    after_the_session(ws.parent)
    (ws / "epistemic.toml").write_text(
        'default = "allow"\n[approval]\nallowed_signers = "keys/allowed_signers"\n'
    )
    with pytest.raises(PolicyError) as refused:
        Session(ws, Settings(session="new")).open()
    assert "allowed_signers: not put in force: call 1 of session" in str(refused.value)
    assert "epistemic.toml" not in str(refused.value)  # the human wrote the policy itself


def test_a_call_that_ran_when_the_file_changed_is_named_without_observation(
    ws: Path, home: Path
) -> None:
    with Session(ws, Settings(observe=False)) as session:  # nothing observed: the ctime tells
        assert session.bash(PLANT, "change-state", SETUP).returncode == 0
    target = str((ws / "epistemic.toml").resolve())
    writer = find_writer(ws, target, os.stat(target).st_ctime)
    assert writer is not None and writer.seq == 1 and not writer.wrote
    assert "was running when it changed" in writer.describe()
    with pytest.raises(PolicyError, match=r"call 1 of session .* was running when it changed"):
        Session(ws, Settings(session="new")).open()


@pytest.mark.system  # the trust store is read-only for acts: confinement
def test_no_act_can_write_the_trust_store_even_where_home_is_granted(ws: Path, home: Path) -> None:
    (ws / "epistemic.toml").write_text(
        'default = "allow"\n[sandbox]\nwritable = { setup = ["~"] }\n'
    )
    with Session(ws) as session:
        store = home / ".local/state/epistemic/trusted"
        assert store.is_dir()
        static = session.bash(f"printf x > {store}/forged.json", "setup", SETUP)
        forge = (
            f"import os\nfor a, b in [('{store}/f', None), ('{store}', '{store}.old'), "
            f"('{store.parent}', '{store.parent}.old')]:\n"
            "    try:\n        open(a, 'w').write('x') if b is None else os.rename(a, b)\n"
            "    except OSError as e:\n        print(e)\n"
        )
        (ws.parent / "forge.py").write_text(forge)
        kernel = session.bash(f"python3 {ws.parent / 'forge.py'}", "setup", SETUP)
    assert static.status == "rejected" and static.rule == "path-protected"
    assert (
        kernel.status == "ran"
        and kernel.stdout.count("Read-only file system") + kernel.stdout.count("busy") == 3
    ), kernel.stdout
    assert store.is_dir() and not (store / "forged.json").exists() and not (store / "f").exists()
    assert not (home / ".local/state/epistemic.old").exists()


def test_a_plain_exec_after_a_read_only_one_goes_on_and_says_why(ws: Path, home: Path) -> None:
    first = exec_(ws, home, "--read-only")
    assert first.returncode == 0, first.stderr
    plain = exec_(ws, home)
    assert plain.returncode == 0, plain.stderr
    assert "appeared or changed" not in plain.stderr
    assert "(none in the workspace, so preset:approve-none)" in plain.stderr
    assert "started under (preset:read-only)" in plain.stderr and "--approve" in plain.stderr
    changed = exec_(ws, home, "--approve", "none", act="change-state")
    assert changed.returncode == 0, changed.stderr  # named: in force from here
    assert records(ws, "policy")[-1]["source"] == "preset:approve-none"
