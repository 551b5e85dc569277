"""Only a human's key approves: signed answers, checked against the policy's allowed signers
before anything runs, re-checkable by an auditor with stock ssh-keygen; and every answer that
should not count, tried as an attacker would, does not."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from conftest import EPISTEMIC, epistemic, eventually
from ptyterm import answer_prompt
from sshkeys import KEYGEN, SIGNED_POLICY, new_key, require_signatures, signer_line

CHANGE = "The report asks for a marker file; creating it is the change itself."


@dataclass
class Keys:
    alice: Path  # in allowed_signers as alice@example.com
    mallory: Path  # a key of her own, unknown to the policy
    signers: str  # the allowed_signers line(s)


@pytest.fixture(scope="module")
def keys(tmp_path_factory: pytest.TempPathFactory) -> Keys:
    folder = tmp_path_factory.mktemp("keys")
    alice, mallory = new_key(folder, "alice"), new_key(folder, "mallory")
    return Keys(alice, mallory, signer_line(alice))


@pytest.fixture
def ws(tmp_path: Path, keys: Keys, monkeypatch: pytest.MonkeyPatch) -> Path:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    require_signatures(workspace, keys.signers, monkeypatch)
    return workspace


def journal(ws: Path) -> list[dict[str, Any]]:
    lines = (ws / ".epistemic" / "journal.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def of_kind(ws: Path, kind: str) -> list[dict[str, Any]]:
    return [r for r in journal(ws) if r["kind"] == kind]


@pytest.fixture
def waiting(ws: Path) -> Iterator[subprocess.Popen[str]]:
    """A change-state call waiting for approval in another process."""
    process = subprocess.Popen(
        [EPISTEMIC, "exec", "--type", "change-state", "--reason", CHANGE, "--", "touch made.txt"],
        cwd=ws, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    eventually((ws / ".epistemic" / "pending" / "1.request.json").exists, "the request")
    yield process
    if process.poll() is None:
        process.kill()
    process.communicate()


def finish(process: subprocess.Popen[str]) -> tuple[int, str]:
    _, err = process.communicate(timeout=60)
    return process.returncode, err


@pytest.mark.system  # a terminal, end to end
def test_a_signed_approval_runs_the_call_and_an_auditor_can_recheck_it(
    ws: Path, keys: Keys, waiting: subprocess.Popen[str], tmp_path: Path
) -> None:
    answered = epistemic("approve", "1", "--key", str(keys.alice), "--comment", "CHG-114", cwd=ws)
    assert answered.returncode == 0, answered.stderr
    said = "call 1 approved by alice@example.com (signed, key SHA256:"
    assert answered.stdout.startswith(said), answered.stdout
    code, err = finish(waiting)
    assert code == 0, err
    assert (ws / "made.txt").exists()
    approval = of_kind(ws, "approval")[0]
    assert approval["signed"] is True and approval["decision"] == "approved"
    assert approval["by"] == approval["signer"] == "alice@example.com"
    assert approval["key"].startswith("SHA256:") and approval["comment"] == "CHG-114"
    # the auditor: the statement names the call's line, and stock ssh-keygen verifies it
    lines = (ws / ".epistemic" / "journal.jsonl").read_bytes().splitlines()
    call_line = next(line for line in lines if b'"kind":"call"' in line)
    assert f"call: {hashlib.sha256(call_line).hexdigest()}" in approval["statement"]
    (tmp_path / "statement").write_text(approval["statement"])
    (tmp_path / "statement.sig").write_text(approval["signature"])
    with (tmp_path / "statement").open("rb") as statement:
        done = subprocess.run(
            [KEYGEN, "-Y", "verify", "-f", str(ws / "allowed_signers"), "-I",
             "alice@example.com", "-n", "epistemic-approval", "-s",
             str(tmp_path / "statement.sig")],
            stdin=statement, capture_output=True, text=True, check=False,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr


def refused(answered: subprocess.CompletedProcess[str], why: str) -> None:
    """`approve` said, in one line and with exit 3, that the session refused its answer."""
    assert answered.returncode == 3, answered
    assert answered.stdout == "" and "Traceback" not in answered.stderr
    lines = answered.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("epistemic: the session refused the answer")
    assert why in lines[0] and "call 1 still waits" in lines[0], lines


def assert_rejected_then_signed(
    ws: Path, keys: Keys, waiting: subprocess.Popen[str], why: str
) -> None:
    """The bad answer was journaled as rejected, the call kept waiting and ran only once
    alice signed."""
    rejected = eventually(lambda: of_kind(ws, "approval-rejected"), "the rejection")
    assert why in rejected[0]["why"], rejected
    assert not (ws / "made.txt").exists()
    assert epistemic("approve", "1", "--key", str(keys.alice), cwd=ws).returncode == 0
    code, err = finish(waiting)
    assert code == 0, err
    assert of_kind(ws, "approval")[0]["signer"] == "alice@example.com"


@pytest.mark.system  # a terminal, end to end
def test_an_unsigned_answer_does_not_count(
    ws: Path, keys: Keys, waiting: subprocess.Popen[str]
) -> None:
    answered = epistemic("approve", "1", "--unsigned", "--as", "alice@example.com", cwd=ws)
    refused(answered, "not signed")
    assert_rejected_then_signed(ws, keys, waiting, "not signed")


@pytest.mark.system  # a terminal, end to end
def test_an_unknown_signer_does_not_count(
    ws: Path, keys: Keys, waiting: subprocess.Popen[str]
) -> None:
    answered = epistemic("approve", "1", "--as", "alice@example.com", "--key", str(keys.mallory),
                         cwd=ws)  # fmt: skip
    refused(answered, "unknown signer")
    assert_rejected_then_signed(ws, keys, waiting, "unknown signer")


@pytest.mark.system  # a terminal, end to end
def test_a_claimed_name_that_is_not_the_keys_does_not_count(
    ws: Path, keys: Keys, waiting: subprocess.Popen[str]
) -> None:
    done = epistemic("approve", "1", "--key", str(keys.alice), "--as", "bob@example.com", cwd=ws)
    refused(done, "not to 'bob@example.com'")
    assert_rejected_then_signed(ws, keys, waiting, "not to 'bob@example.com'")


ANSWER = Path(".epistemic") / "pending" / "1.answer.json"


def forge(ws: Path, change: Callable[[dict[str, Any]], None], signed_at: str = "") -> None:
    """A signed answer, then altered the way an attacker would, put back in its place."""
    request = json.loads((ws / ".epistemic" / "pending" / "1.request.json").read_text())
    from epistemic_agent.gate.signing import sign
    from epistemic_agent.gate.statement import Statement

    statement = Statement(
        request["session"], 1, request["call"], "denied", signed_at or request["requested"], ""
    )
    signature, _ = sign(statement, str(Path(os.environ["FORGE_KEY"])))
    answer = {
        "nonce": request["nonce"],
        "decision": "denied",
        "comment": "",
        "statement": statement.text(),
        "signature": signature,
        "at": request["requested"],
    }
    change(answer)
    (ws / ANSWER).write_text(json.dumps(answer))


FORGERIES: dict[str, tuple[Callable[[dict[str, Any]], None], str]] = {
    "decision flipped after signing": (
        lambda a: a.update(decision="approved"),
        "does not match this request",
    ),
    "statement for another call": (
        lambda a: a.update(statement=a["statement"].replace("seq: 1", "seq: 2")),
        "does not match this request",
    ),
    "signature of garbage": (
        lambda a: a.update(
            signature="-----BEGIN SSH SIGNATURE-----\nAAAA\n-----END SSH SIGNATURE-----\n"
        ),
        "does not check out",
    ),
    "no nonce (replayed)": (lambda a: a.pop("nonce"), "no matching nonce"),
    "not a decision": (lambda a: a.update(decision="yes"), "holds no decision"),
    "statement unreadable": (lambda a: a.update(statement="approve it"), "malformed"),
}


@pytest.mark.system  # end to end, slow for the default tier
@pytest.mark.parametrize("forgery", FORGERIES, ids=list(FORGERIES))
def test_forged_answers_do_not_count(
    ws: Path,
    keys: Keys,
    waiting: subprocess.Popen[str],
    forgery: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("FORGE_KEY", str(keys.alice))
    change, why = FORGERIES[forgery]
    forge(ws, change)
    assert_rejected_then_signed(ws, keys, waiting, why)


@pytest.mark.parametrize(
    "signed_at", ["2020-01-01T00:00:00.000Z", "2099-01-01T00:00:00.000Z", "yesterday"]
)
def test_an_answer_signed_outside_the_requests_time_does_not_count(
    ws: Path,
    keys: Keys,
    waiting: subprocess.Popen[str],
    monkeypatch: pytest.MonkeyPatch,
    signed_at: str,
) -> None:
    """A statement signed before the request was made (prepared in advance, or kept from
    an earlier session) or dated in the future is refused, though the key is alice's."""
    monkeypatch.setenv("FORGE_KEY", str(keys.alice))
    forge(ws, lambda answer: None, signed_at=signed_at)
    assert_rejected_then_signed(ws, keys, waiting, "outside the time the request was open")


@pytest.mark.system  # a terminal, end to end
def test_a_late_or_unknown_answer_fails_with_a_clear_message(ws: Path, keys: Keys) -> None:
    (ws / "epistemic.toml").write_text(SIGNED_POLICY.replace("timeout = 60", "timeout = 0.5"))
    done = epistemic(
        "exec", "--type", "change-state", "--reason", CHANGE, "--", "touch made.txt", cwd=ws
    )
    assert done.returncode == 2 and "no answer within 0.5 s" in done.stderr
    late = epistemic("approve", "1", "--key", str(keys.alice), cwd=ws)
    assert late.returncode == 1 and "timed out" in late.stderr and "Traceback" not in late.stderr
    unknown = epistemic("approve", "5", "--key", str(keys.alice), cwd=ws)
    assert unknown.returncode == 4 and "was ever opened" in unknown.stderr
    assert not (ws / "made.txt").exists()


def test_no_key_to_sign_with_is_a_clear_error(ws: Path, waiting: subprocess.Popen[str]) -> None:
    done = epistemic("approve", "1", cwd=ws)
    assert done.returncode == 3 and "no SSH key to sign with" in done.stderr, done
    missing = epistemic("approve", "1", "--key", "/nonexistent/key", cwd=ws)
    assert missing.returncode == 3 and "no such key file" in missing.stderr
    assert not (ws / ANSWER).exists()


@pytest.mark.system  # a terminal, end to end
def test_a_missing_or_empty_allowed_signers_file_stops_the_session(ws: Path) -> None:
    (ws / "allowed_signers").unlink()
    done = epistemic("exec", "--type", "collect-info", "--reason", CHANGE, "--", "true", cwd=ws)
    assert (
        done.returncode == 2 and "allowed_signers 'allowed_signers' cannot be read" in done.stderr
    )
    (ws / "allowed_signers").write_text("# nobody yet\n")
    done = epistemic("exec", "--type", "collect-info", "--reason", CHANGE, "--", "true", cwd=ws)
    assert done.returncode == 2 and "holds no signer lines" in done.stderr
    (ws / "epistemic.toml").write_text(
        SIGNED_POLICY.replace('allowed_signers = "allowed_signers"\n', "")
    )
    done = epistemic("exec", "--type", "collect-info", "--reason", CHANGE, "--", "true", cwd=ws)
    assert done.returncode == 2 and "names nobody who may approve" in done.stderr
    assert "Traceback" not in done.stderr


def test_optional_signatures_take_unsigned_answers_and_lint_lists_them(ws: Path) -> None:
    text = SIGNED_POLICY.replace(
        'allowed_signers = "allowed_signers"\n', 'signatures = "optional"\n'
    )
    (ws / "epistemic.toml").write_text(text)
    process = subprocess.Popen(
        [EPISTEMIC, "exec", "--type", "change-state", "--reason", CHANGE, "--", "touch made.txt"],
        cwd=ws, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    eventually((ws / ".epistemic" / "pending" / "1.request.json").exists, "the request")
    answered = epistemic("approve", "1", "--as", "qa", cwd=ws)  # no key here: unsigned
    assert answered.returncode == 0, answered.stderr
    assert answered.stdout.startswith("call 1 approved by qa (unsigned"), answered.stdout
    assert "signed," not in answered.stdout and "answering unsigned" in answered.stderr
    code, err = finish(process)
    assert code == 0, err
    approval = of_kind(ws, "approval")[0]
    assert approval["signed"] is False and approval["by"] == "qa"
    linted = epistemic("lint", str(ws), "--json", cwd=ws)
    findings = json.loads(linted.stdout)["findings"]
    assert [f["check"] for f in findings] == ["approval-unsigned"], findings
    assert linted.returncode == 1


def on_terminal(
    ws: Path, home: Path, answer: bytes, comment: bytes, then: Any = None, *opts: str
) -> tuple[int, bytes]:
    """`epistemic exec` at a terminal (a pty): answer y/n, then the comment, then `then`."""
    argv = [EPISTEMIC, "exec", "--type", "change-state", "--reason", CHANGE, "--", "touch made.txt"]
    env = {**os.environ, "HOME": str(home)}
    return answer_prompt([*argv[:2], *opts, *argv[2:]], str(ws), answer, comment, env, then)


def terminal_policy(ws: Path) -> None:
    (ws / "epistemic.toml").write_text(
        SIGNED_POLICY.replace('channel = "file"\n', 'channel = "terminal"\n')
    )


def home_with(tmp_path: Path, key: Path | None) -> Path:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    if key is not None:
        shutil.copy(key, home / ".ssh" / "id_ed25519")
    return home


def test_a_terminal_answer_is_signed_with_the_operators_key(
    ws: Path, keys: Keys, tmp_path: Path
) -> None:
    terminal_policy(ws)
    code, screen = on_terminal(ws, home_with(tmp_path, keys.alice), b"y\n", b"looked at it\n")
    approval = of_kind(ws, "approval")[0]
    assert code == 0, screen
    assert approval["signed"] is True and approval["by"] == "alice@example.com"
    assert approval["comment"] == "looked at it" and (ws / "made.txt").exists()
    assert b"cannot be signed" not in screen


def approve_from_another_shell(ws: Path, keys: Keys, verb: str = "approve") -> Any:
    def then(wait_for: Callable[[bytes], None]) -> None:
        wait_for(b"waits")
        eventually((ws / ".epistemic" / "pending" / "1.request.json").exists, "the request")
        signed = epistemic(verb, "1", "--key", str(keys.alice), "--comment", "CHG-9", cwd=ws)
        assert signed.returncode == 0, signed.stderr

    return then


def test_an_approval_by_a_key_nobody_trusts_is_recorded_as_given_and_does_not_run_the_call(
    ws: Path, keys: Keys, tmp_path: Path
) -> None:
    terminal_policy(ws)
    home = home_with(tmp_path, keys.mallory)
    code, screen = on_terminal(
        ws, home, b"y\n", b"fine by me\n", approve_from_another_shell(ws, keys, "deny")
    )
    rejected = of_kind(ws, "approval-rejected")
    assert len(rejected) == 1 and "unknown signer" in rejected[0]["why"], rejected
    assert rejected[0]["decision"] == "approved" and rejected[0]["comment"] == "fine by me"
    (approval,) = of_kind(ws, "approval")
    assert approval["decision"] == "denied" and approval["by"] == "alice@example.com"
    assert approval["signed"] is True and approval["comment"] == "CHG-9"
    assert code == 2 and not (ws / "made.txt").exists(), screen


def test_without_a_key_the_terminal_says_so_first_and_a_yes_is_kept_unsigned(
    ws: Path, keys: Keys, tmp_path: Path
) -> None:
    terminal_policy(ws)
    home = home_with(tmp_path, None)
    code, screen = on_terminal(
        ws, home, b"y\n", b"looked at the diff\n", approve_from_another_shell(ws, keys)
    )
    text = screen.decode()
    assert text.index("cannot be signed") < text.index("[y/n]")  # said before anyone answers
    assert "--key" in text
    (rejected,) = of_kind(ws, "approval-rejected")
    assert rejected["decision"] == "approved" and rejected["comment"] == "looked at the diff"
    assert "no SSH key" in rejected["why"] and rejected["claimed_by"]
    (approval,) = of_kind(ws, "approval")
    assert approval["decision"] == "approved" and approval["by"] == "alice@example.com"
    assert code == 0 and (ws / "made.txt").exists(), screen
    report = (ws / "RATIONALE.md").read_text()
    assert "1 approved, 0 denied" in report and "denied by" not in report  # nobody denied


def test_without_a_key_a_no_is_a_denial_by_the_person_at_the_terminal(
    ws: Path, tmp_path: Path
) -> None:
    terminal_policy(ws)
    code, screen = on_terminal(ws, home_with(tmp_path, None), b"n\n", b"not now\n")
    (approval,) = of_kind(ws, "approval")
    assert approval["decision"] == "denied" and approval["by"] and approval["signed"] is False
    assert approval["comment"] == "not now" and "no SSH key" in approval["unsigned"]
    assert code == 2 and not (ws / "made.txt").exists(), screen


@pytest.mark.system  # end to end, slow for the default tier
def test_run_signs_a_terminal_answer_with_the_key_it_is_given(
    ws: Path, keys: Keys, tmp_path: Path
) -> None:
    terminal_policy(ws)
    script = tmp_path / "session.json"
    call = {"command": "touch made.txt", "type": "change-state", "reason": CHANGE}
    script.write_text(json.dumps([{"calls": [{"tool": "bash", "args": call}]}, {"final": "ok"}]))
    argv = [EPISTEMIC, "run", "--model", f"replay:{script}", "--key", str(keys.alice), "task"]
    env = {**os.environ, "HOME": str(home_with(tmp_path, None)), "EPISTEMIC_MODEL": ""}
    code, screen = answer_prompt(argv, str(ws), b"y\n", b"ok\n", env)
    (approval,) = of_kind(ws, "approval")
    assert approval["signed"] is True and approval["by"] == "alice@example.com", screen
    assert code == 0 and (ws / "made.txt").exists()
    missing = epistemic("run", "--model", f"replay:{script}", "--key", "/nonexistent", "t", cwd=ws)
    assert missing.returncode == 2 and "--key /nonexistent: no such key file" in missing.stderr


def test_a_waiting_call_is_in_the_report_at_once(
    ws: Path, keys: Keys, waiting: subprocess.Popen[str]
) -> None:
    report = (ws / "RATIONALE.md").read_text()
    assert "1. `change-state` · waiting for approval" in report
    assert epistemic("approve", "1", "--key", str(keys.alice), cwd=ws).returncode == 0
    assert finish(waiting)[0] == 0
    assert "1. `change-state` · ok" in (ws / "RATIONALE.md").read_text()


# -- an auditor's check of the approvals in a finished journal ----------------------------------


@pytest.fixture
def approved(ws: Path, keys: Keys, waiting: subprocess.Popen[str]) -> Path:
    """A journal with one call alice approved (signed), and a later call."""
    answered = epistemic("approve", "1", "--key", str(keys.alice), "--comment", "CHG-114", cwd=ws)
    assert answered.returncode == 0, answered.stderr
    said = "call 1 approved by alice@example.com (signed, key SHA256:"
    assert answered.stdout.startswith(said), answered.stdout
    assert finish(waiting)[0] == 0
    return ws


def rechain(ws: Path, change: Callable[[dict[str, Any]], None]) -> None:
    """Rewrite the journal as someone who can write it would: every record through `change`,
    the hash chain and the head anchor recomputed, so the chain alone verifies."""
    path = ws / ".epistemic" / "journal.jsonl"
    prev, out = "0" * 64, []
    for line in path.read_bytes().splitlines():
        record = json.loads(line)
        record["prev"] = prev
        change(record)
        body = json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode()
        out.append(body)
        prev = hashlib.sha256(body).hexdigest()
    path.write_bytes(b"".join(body + b"\n" for body in out))
    seqs = [r["seq"] for r in map(json.loads, out) if isinstance(r.get("seq"), int)]
    position = {"offset": sum(len(b) + 1 for b in out), "lines": len(out), "head": prev,
                "last_seq": max(seqs, default=0)}  # fmt: skip
    (ws / ".epistemic" / "head.json").write_text(json.dumps(position).ljust(255) + "\n")


def verdict(ws: Path, *options: str) -> dict[str, Any]:
    done = epistemic("verify", ".", "--json", *options, cwd=ws)
    assert "Traceback" not in done.stderr, done.stderr
    found: dict[str, Any] = json.loads(done.stdout)
    found["exit"] = done.returncode
    return found


def checks(found: dict[str, Any]) -> list[str]:
    return [problem["check"] for problem in found.get("problems", [])]


@pytest.mark.system  # end to end, slow for the default tier
def test_verify_matches_each_signed_approval_to_its_call(approved: Path) -> None:
    plain = verdict(approved)
    assert plain["exit"] == 0 and checks(plain) == []
    assert any("1 signed approval(s) match their calls" in n for n in plain["notes"])
    signers = verdict(approved, "--allowed-signers", "allowed_signers")
    assert checks(signers) == ["seal-missing"]  # never sealed; the approval itself is good
    assert signers["status"] == "unsealed" and signers["exit"] == 4  # missing, not tampered
    assert any("1 signed approval(s) checked" in n for n in signers["notes"])
    optional = verdict(approved, "--allowed-signers", "allowed_signers", "--seal-optional")
    assert optional["exit"] == 0 and optional["status"] == "intact" and checks(optional) == []
    assert any("1 signed approval(s) checked" in n for n in optional["notes"])
    assert any(n.startswith("no seal: ") for n in optional["notes"])


def edit_the_command(record: dict[str, Any]) -> None:
    if record["kind"] == "call":
        record["command"] = "rm -rf /srv/data"  # what alice approved was `touch made.txt`


def edit_the_comment(record: dict[str, Any]) -> None:
    if record["kind"] == "approval":
        record["comment"] = "approved by the change board"


def another_session(record: dict[str, Any]) -> None:
    if record["kind"] == "session":
        record["session"] = "f" * 32


@pytest.mark.system  # end to end, slow for the default tier
@pytest.mark.parametrize("change", [edit_the_command, edit_the_comment, another_session])
def test_an_approval_that_no_longer_fits_its_record_is_caught(
    approved: Path, change: Callable[[dict[str, Any]], None]
) -> None:
    """The chain is rebuilt and verifies; the approval statement still names the call line,
    session and comment alice signed, so the rewrite shows."""
    rechain(approved, change)
    found = verdict(approved)
    assert found["exit"] != 0 and "approval-mismatch" in checks(found), found
    assert "chain-broken" not in checks(found)


@pytest.mark.system  # a terminal, end to end
def test_an_approval_re_signed_by_another_key_is_untrusted(
    approved: Path, keys: Keys, tmp_path: Path
) -> None:
    """Mallory rewrites the approval's signature with her own key over the same statement
    and names alice in the record: without --allowed-signers it fits, with it it is caught."""
    record = of_kind(approved, "approval")[0]
    (tmp_path / "statement").write_text(record["statement"])
    subprocess.run([KEYGEN, "-q", "-Y", "sign", "-n", "epistemic-approval", "-f",
                    str(keys.mallory), str(tmp_path / "statement")], check=True)  # fmt: skip
    forged = (tmp_path / "statement.sig").read_text()

    def resign(found: dict[str, Any]) -> None:
        if found["kind"] == "approval":
            found["signature"] = forged

    rechain(approved, resign)
    assert "approval-untrusted" not in checks(verdict(approved))
    strict = verdict(approved, "--allowed-signers", "allowed_signers")
    assert "approval-untrusted" in checks(strict), strict
    assert strict["status"] == "tampered" and strict["exit"] == 1  # outranks the missing seal
    assert strict["check"] == "approval-untrusted" and "seal-missing" in checks(strict)
    optional = verdict(approved, "--allowed-signers", "allowed_signers", "--seal-optional")
    assert optional["exit"] == 1 and checks(optional) == ["approval-untrusted"]


@pytest.mark.system  # a terminal, end to end
def test_a_signer_renamed_in_the_record_is_untrusted(approved: Path) -> None:
    def rename(found: dict[str, Any]) -> None:
        if found["kind"] == "approval":
            found["signer"] = found["by"] = "bob@example.com"

    rechain(approved, rename)
    strict = verdict(approved, "--allowed-signers", "allowed_signers")
    assert "approval-untrusted" in checks(strict), strict


def test_a_preset_asks_for_no_signature_and_a_default_key_does_not_refuse_the_answer(
    tmp_path: Path, keys: Keys, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With no allowed signers nobody could check a signature: `approve` answers unsigned,
    even with a key at ~/.ssh/id_ed25519, and the session takes the answer."""
    ws = tmp_path / "preset"
    ws.mkdir()
    home = home_with(tmp_path, keys.mallory)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    argv = ["exec", "--approve", "mutating", "--type", "change-state", "--reason", CHANGE]
    process = subprocess.Popen(
        [EPISTEMIC, *argv, "--", "touch made.txt"],
        cwd=ws, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    eventually((ws / ".epistemic" / "pending" / "1.request.json").exists, "the request")
    answered = epistemic("approve", "1", "--as", "qa", cwd=ws)
    assert answered.returncode == 0 and "unsigned" in answered.stdout + answered.stderr, answered
    assert finish(process)[0] == 0 and (ws / "made.txt").exists()
    (approval,) = of_kind(ws, "approval")
    assert approval["signed"] is False and approval["by"] == "qa"
