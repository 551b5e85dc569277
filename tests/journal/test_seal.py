"""`epistemic seal` and the seals `verify` checks: stock `ssh-keygen -Y sign/verify`, namespace
`epistemic`; a full rewrite caught by a seal; every kind of bad input a clear error."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import zipfile
from pathlib import Path
from typing import Any

import pytest

from conftest import epistemic_strict, eventually
from epistemic_agent.session.session import Session
from sshkeys import new_key

KEYGEN = shutil.which("ssh-keygen")
LOOK = "see what the workspace holds before changing anything"
CHANGE = "write the notes file the task asks for, as the deliverable"

pytestmark = pytest.mark.skipif(KEYGEN is None, reason="needs OpenSSH's ssh-keygen")


def environ(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "SSH_AUTH_SOCK"}
    return {**env, "HOME": str(home), **extra}


def allowed(folder: Path, *entries: tuple[str, Path]) -> Path:
    path = folder / "allowed_signers"
    lines = []
    for identity, key in entries:
        public = " ".join(key.with_suffix(".pub").read_text().split()[:2])
        lines.append(f'{identity} namespaces="epistemic" {public}')
    path.write_text("".join(line + "\n" for line in lines))
    return path


@pytest.fixture(scope="module")
def keys(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("keys")
    return {
        "alice": new_key(folder, "alice", "alice@example.org"),
        "mallory": new_key(folder, "mallory", "mallory@example.org"),
        "folder": folder,
    }


@pytest.fixture
def home(tmp_path: Path) -> Path:
    folder = tmp_path / "home"
    folder.mkdir()
    return folder


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    with Session(workspace) as session:
        assert session.bash("echo one", "collect-info", LOOK).ok
        assert session.write_file("notes.md", "first\n", CHANGE).ok
    return workspace


def seal_files(ws: Path) -> list[Path]:
    return sorted((ws / ".epistemic" / "seals").glob("seal-*.json"))


def verdict(ws: Path, env: dict[str, str], *options: str) -> tuple[int, dict[str, Any]]:
    done = epistemic_strict("verify", str(ws), "--json", *options, env=env)
    return done.returncode, json.loads(done.stdout)


def test_seal_then_check_it_with_ssh_keygen_alone(
    ws: Path, keys: dict[str, Path], home: Path
) -> None:
    env = environ(home)
    done = epistemic_strict("seal", str(ws), "--key", str(keys["alice"]), env=env)
    assert done.returncode == 0, done.stderr
    (statement,) = seal_files(ws)
    signature = statement.with_name(statement.name + ".sig")
    data = json.loads(statement.read_text())
    lines = (ws / ".epistemic" / "journal.jsonl").read_bytes().splitlines()
    assert data["lines"] == len(lines)
    assert data["head"] == hashlib.sha256(lines[-1]).hexdigest()
    assert data["session"] == json.loads(lines[0])["session"]
    assert data["signer"].startswith("SHA256:") and data["namespace"] == "epistemic"
    assert done.stdout.startswith(f"sealed: line {len(lines)}, head {data['head']}")
    signers = allowed(home, ("alice@example.org", keys["alice"]))
    with statement.open("rb") as stdin:  # what an auditor runs, with no epistemic installed
        by_hand = subprocess.run(
            [
                *("ssh-keygen", "-Y", "verify", "-f", str(signers), "-I", "alice@example.org"),
                *("-n", "epistemic", "-s", str(signature)),
            ],
            stdin=stdin,
            capture_output=True,
            check=False,
        )
    assert by_hand.returncode == 0, by_hand.stderr
    code, found = verdict(ws, env, "--allowed-signers", str(signers))
    assert code == 0, found
    assert found["seals"] == [
        {
            "path": f"seals/{statement.name}",
            "signature": "good",
            "identity": "alice@example.org",
            "lines": data["lines"],
            "head": data["head"],
            "signer": data["signer"],
        }
    ]
    code, found = verdict(ws, env)  # without trust: the signature checks out, not who made it
    assert code == 0 and found["seals"][0]["signature"] == "valid"


def test_a_seal_stays_valid_while_the_session_goes_on(
    ws: Path, keys: dict[str, Path], home: Path
) -> None:
    env = environ(home)
    assert epistemic_strict("seal", str(ws), "--key", str(keys["alice"]), env=env).returncode == 0
    with Session(ws) as session:
        assert session.bash("echo later", "collect-info", LOOK).ok
    signers = allowed(home, ("alice@example.org", keys["alice"]))
    code, found = verdict(ws, env, "--allowed-signers", str(signers))
    sealed = found["seals"][0]["lines"]
    assert code == 0 and sealed < found["lines"]
    assert found["sealed_through"] == sealed
    after = f"lines {sealed + 1}-{found['lines']} are covered by no seal"
    assert any(after in note for note in found["notes"]), found["notes"]
    assert epistemic_strict("seal", str(ws), "--key", str(keys["alice"]), env=env).returncode == 0
    code, found = verdict(ws, env, "--allowed-signers", str(signers))
    assert found["sealed_through"] == found["lines"]
    assert not any("covered by no seal" in note for note in found["notes"])


def rewrite(ws: Path) -> None:
    """Rebuild the journal with a reason changed, recomputing the chain and the head anchor."""
    journal = ws / ".epistemic" / "journal.jsonl"
    prev, out = "0" * 64, []
    for line in journal.read_bytes().splitlines():
        record = json.loads(line)
        record["prev"] = prev
        if record.get("reason") == CHANGE:
            record["reason"] = "a story told after the fact, long enough to pass"
        body = json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode()
        out.append(body)
        prev = hashlib.sha256(body).hexdigest()
    journal.write_bytes(b"".join(body + b"\n" for body in out))
    offset = sum(len(body) + 1 for body in out)
    position = {"offset": offset, "lines": len(out), "head": prev, "last_seq": 2}
    (ws / ".epistemic" / "head.json").write_text(json.dumps(position).ljust(255) + "\n")


def test_a_full_rewrite_is_caught_by_the_seal(ws: Path, keys: dict[str, Path], home: Path) -> None:
    env = environ(home)
    assert epistemic_strict("seal", str(ws), "--key", str(keys["alice"]), env=env).returncode == 0
    rewrite(ws)
    code, found = verdict(ws, env)
    assert code == 1
    assert [p["check"] for p in found["problems"]] == ["seal-mismatch"]
    assert "the journal was rewritten after it was sealed" in found["problem"]
    linted = json.loads(epistemic_strict("lint", str(ws), "--json", env=env).stdout)
    assert "integrity/seal-mismatch" in {f["check"] for f in linted["findings"]}
    for seal in (ws / ".epistemic" / "seals").iterdir():  # the rewriter deletes the seal too
        seal.unlink()
    assert verdict(ws, env)[0] == 0  # nothing left to tell, unless a seal is required:
    signers = allowed(home, ("alice@example.org", keys["alice"]))
    code, found = verdict(ws, env, "--allowed-signers", str(signers))
    assert code == 4 and [p["check"] for p in found["problems"]] == ["seal-missing"]
    assert found["status"] == "unsealed"


@pytest.mark.system  # end to end, slow for the default tier
def test_a_journal_never_sealed_is_unsealed_not_tampered(
    ws: Path, keys: dict[str, Path], home: Path
) -> None:
    """--allowed-signers asks for a seal: none is there, and nothing was changed. The verdict
    says what is missing (exit 4), never that the journal was tampered with; --seal-optional
    lets it pass, saying no seal vouches for it."""
    env = environ(home)
    signers = allowed(home, ("alice@example.org", keys["alice"]))
    done = epistemic_strict("verify", str(ws), "--allowed-signers", str(signers), env=env)
    assert done.returncode == 4, done
    first = done.stdout.splitlines()[0]
    assert first.startswith("UNSEALED: no seal: --allowed-signers asks for a signed head")
    assert "TAMPERED" not in done.stdout
    done = epistemic_strict(
        "verify", str(ws), "--allowed-signers", str(signers), "--seal-optional", env=env
    )
    assert done.returncode == 0 and done.stdout.startswith("intact: "), done
    assert "note: no seal: " in done.stdout
    alone = epistemic_strict("verify", str(ws), "--seal-optional", env=env)
    assert alone.returncode == 2 and "--seal-optional goes with --allowed-signers" in alone.stderr
    bundle = home / "record.zip"
    assert epistemic_strict("export", str(ws), "-o", str(bundle), env=env).returncode == 0
    packed = epistemic_strict("verify", str(bundle), "--allowed-signers", str(signers), env=env)
    assert packed.returncode == 4 and packed.stdout.startswith("UNSEALED: journal: no seal")
    optional = ("--allowed-signers", str(signers), "--seal-optional")
    assert epistemic_strict("verify", str(bundle), *optional, env=env).returncode == 0
    assert epistemic_strict("seal", str(ws), "--key", str(keys["alice"]), env=env).returncode == 0
    sealed = epistemic_strict("verify", str(ws), "--allowed-signers", str(signers), env=env)
    assert sealed.returncode == 0 and sealed.stdout.startswith("intact: "), sealed


def test_an_expected_head_of_zeros_is_no_line_of_the_journal(ws: Path, home: Path) -> None:
    """64 zeros is what line 1 names as its `prev`, the hash of no line: expecting it must not
    pass a journal, any journal."""
    done = epistemic_strict("verify", str(ws), "--expect-head", "0" * 64, env=environ(home))
    assert done.returncode == 1, done
    assert done.stdout.startswith(f"TAMPERED: the expected head {'0' * 64} is not the hash")
    head = json.loads(epistemic_strict("verify", str(ws), "--json").stdout)["head"]
    kept = epistemic_strict("verify", str(ws), "--expect-head", head, env=environ(home))
    assert kept.returncode == 0, kept


@pytest.mark.system  # end to end, slow for the default tier
def test_a_rewriter_sealing_with_their_own_key_is_an_unknown_signer(
    ws: Path, keys: dict[str, Path], home: Path
) -> None:
    env = environ(home)
    assert epistemic_strict("seal", str(ws), "--key", str(keys["alice"]), env=env).returncode == 0
    rewrite(ws)
    for seal in (ws / ".epistemic" / "seals").iterdir():
        seal.unlink()
    assert epistemic_strict("seal", str(ws), "--key", str(keys["mallory"]), env=env).returncode == 0
    signers = allowed(home, ("alice@example.org", keys["alice"]))
    code, found = verdict(ws, env, "--allowed-signers", str(signers))
    assert code == 1
    assert [p["check"] for p in found["problems"]] == ["seal-untrusted"]
    assert "an unknown signer" in found["problem"]
    code, found = verdict(ws, env, "--allowed-signers", str(signers), "--identity", "alice@x")
    assert code == 1 and "not a good signature by alice@x" in found["problem"]


def test_an_edited_statement_no_longer_matches_its_signature(
    ws: Path, keys: dict[str, Path], home: Path
) -> None:
    env = environ(home)
    assert epistemic_strict("seal", str(ws), "--key", str(keys["alice"]), env=env).returncode == 0
    rewrite(ws)
    (statement,) = seal_files(ws)
    data = json.loads(statement.read_text())
    lines = (ws / ".epistemic" / "journal.jsonl").read_bytes().splitlines()
    data["head"] = hashlib.sha256(lines[data["lines"] - 1]).hexdigest()  # follow the rewrite
    statement.write_text(json.dumps(data, indent=1) + "\n")
    code, found = verdict(ws, env)
    assert code == 1 and [p["check"] for p in found["problems"]] == ["seal-invalid"]
    assert "the signature does not match the statement" in found["problem"]


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        ("garbage-statement", "is not a seal: not JSON"),
        ("other-format", "is not a seal: not a seal statement"),
        ("no-signature", "is missing (or not a file)"),
        ("garbage-signature", "is not an SSH signature"),
        ("stray-file", "is not a seal statement (seal-*.json)"),
    ],
)
def test_garbage_seals_are_reported(
    ws: Path, keys: dict[str, Path], home: Path, damage: str, message: str
) -> None:
    env = environ(home)
    assert epistemic_strict("seal", str(ws), "--key", str(keys["alice"]), env=env).returncode == 0
    (statement,) = seal_files(ws)
    signature = statement.with_name(statement.name + ".sig")
    if damage == "garbage-statement":
        statement.write_bytes(b"\x00\xff not json")
    elif damage == "other-format":
        statement.write_text('{"format": "something-else"}')
    elif damage == "no-signature":
        signature.unlink()
    elif damage == "garbage-signature":
        signature.write_text("not a signature\n")
    else:
        (statement.parent / "notes.txt").write_text("hello")
    code, found = verdict(ws, env)
    assert code == 1 and found["problems"][0]["check"] == "seal-invalid"
    assert message in found["problem"], found["problem"]
    text = epistemic_strict("verify", str(ws), env=env)
    assert text.returncode == 1 and text.stdout.startswith("TAMPERED: seals/")


def test_sealing_with_the_agent_key_and_the_default_key(
    ws: Path, keys: dict[str, Path], home: Path, short_tmp: Path
) -> None:
    socket = short_tmp / "agent.sock"  # a socket's path must fit in 107 bytes
    agent = subprocess.Popen(
        ["ssh-agent", "-D", "-a", str(socket)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        eventually(socket.exists, "ssh-agent's socket", seconds=10)
        env = environ(home, SSH_AUTH_SOCK=str(socket))
        subprocess.run(["ssh-add", "-q", str(keys["alice"])], env=env, check=True)
        done = epistemic_strict("seal", str(ws), env=env)
        assert done.returncode == 0, done.stderr
        assert "(ssh-agent)" in done.stdout
    finally:
        agent.terminate()
        agent.wait(timeout=10)
    (home / ".ssh").mkdir()
    shutil.copy(keys["mallory"], home / ".ssh" / "id_ed25519")
    done = epistemic_strict("seal", str(ws), env=environ(home))  # no agent: the default key
    assert done.returncode == 0, done.stderr
    assert f"({home / '.ssh' / 'id_ed25519'})" in done.stdout
    signers = allowed(home, ("alice", keys["alice"]), ("mallory", keys["mallory"]))
    code, found = verdict(ws, environ(home), "--allowed-signers", str(signers))
    assert code == 0 and {s["identity"] for s in found["seals"]} == {"alice", "mallory"}


def test_bad_input_to_seal(ws: Path, keys: dict[str, Path], home: Path, tmp_path: Path) -> None:
    env = environ(home)
    garbage = tmp_path / "garbage.key"
    garbage.write_text("not a key\n")
    empty = tmp_path / "bin"
    empty.mkdir()
    cases = [
        (["--key", str(tmp_path / "nonexistent")], env, "no such key file"),
        (["--key", str(garbage)], env, "not an SSH key"),
        ([], env, "no SSH key to sign with"),
        (
            ["--key", str(keys["alice"])],
            {**env, "EPISTEMIC_SSH_KEYGEN": str(empty / "ssh-keygen")},
            "ssh-keygen not found",
        ),
    ]
    for options, environment, message in cases:
        done = epistemic_strict("seal", str(ws), *options, env=environment)
        assert done.returncode == 2, (options, done.stdout, done.stderr)
        assert done.stderr.startswith("epistemic: ") and message in done.stderr, done.stderr
        assert len(done.stderr.splitlines()) == 1
    assert not seal_files(ws)
    done = epistemic_strict("seal", str(tmp_path / "nowhere"), "--key", str(keys["alice"]), env=env)
    assert done.returncode == 2 and "no journal at" in done.stderr


def test_a_tampered_record_is_not_sealed(ws: Path, keys: dict[str, Path], home: Path) -> None:
    blob = next(p for p in (ws / ".epistemic" / "evidence").rglob("*") if p.is_file())
    blob.write_bytes(b"changed\n")
    done = epistemic_strict("seal", str(ws), "--key", str(keys["alice"]), env=environ(home))
    assert done.returncode == 1
    assert "TAMPERED: evidence " in done.stderr and "nothing was sealed" in done.stderr
    assert not seal_files(ws)


def test_bad_input_to_verify_with_signers(ws: Path, keys: dict[str, Path], home: Path) -> None:
    env = environ(home)
    signers = allowed(home, ("alice", keys["alice"]))
    garbage = home / "garbage_signers"
    garbage.write_text("this is not an allowed signers file\n")
    empty = home / "bin"
    empty.mkdir()
    cases = [
        (["--allowed-signers", str(home / "nonexistent")], env, "no such file"),
        (["--identity", "alice"], env, "--identity needs --allowed-signers"),
        (
            ["--allowed-signers", str(signers)],
            {**env, "EPISTEMIC_SSH_KEYGEN": str(empty / "ssh-keygen")},
            "ssh-keygen",
        ),
    ]
    for options, environment, message in cases:
        done = epistemic_strict("verify", str(ws), *options, env=environment)
        assert done.returncode == 2, (options, done.stdout, done.stderr)
        assert message in done.stderr and done.stdout == ""
    assert epistemic_strict("seal", str(ws), "--key", str(keys["alice"]), env=env).returncode == 0
    code, found = verdict(ws, env, "--allowed-signers", str(garbage))
    assert code == 1 and found["problems"][0]["check"] == "seal-untrusted"


def test_plain_verify_without_ssh_keygen_notes_the_unchecked_signature(
    ws: Path, keys: dict[str, Path], home: Path
) -> None:
    env = environ(home)
    assert epistemic_strict("seal", str(ws), "--key", str(keys["alice"]), env=env).returncode == 0
    empty = home / "bin"
    empty.mkdir()
    code, found = verdict(ws, {**env, "EPISTEMIC_SSH_KEYGEN": str(empty / "ssh-keygen")})
    assert code == 0 and found["seals"][0]["signature"] == "unchecked"
    assert any("signature not checked: ssh-keygen not found" in n for n in found["notes"])


@pytest.mark.system  # end to end, slow for the default tier
def test_export_carries_the_seals_and_verify_checks_them_in_the_bundle(
    ws: Path, keys: dict[str, Path], home: Path, tmp_path: Path
) -> None:
    env = environ(home)
    assert epistemic_strict("seal", str(ws), "--key", str(keys["alice"]), env=env).returncode == 0
    bundle = tmp_path / "sealed.zip"
    assert epistemic_strict("export", str(ws), "-o", str(bundle), env=env).returncode == 0
    with zipfile.ZipFile(bundle) as archive:
        names = archive.namelist()
        manifest = json.loads(archive.read("manifest.json"))
    (statement,) = seal_files(ws)
    assert f".epistemic/seals/{statement.name}" in names
    assert f".epistemic/seals/{statement.name}.sig" in names
    assert {f["role"] for f in manifest["files"] if "seals/" in f["path"]} == {"seal"}
    signers = allowed(home, ("alice@example.org", keys["alice"]))
    done = epistemic_strict("verify", str(bundle), "--allowed-signers", str(signers), env=env)
    assert done.returncode == 0, done.stdout
    assert "a good signature by alice@example.org" in done.stdout
    other = allowed(tmp_path, ("mallory", keys["mallory"]))
    done = epistemic_strict("verify", str(bundle), "--allowed-signers", str(other), env=env)
    assert done.returncode == 1 and "an unknown signer" in done.stdout
    head = json.loads(statement.read_text())["head"]
    done = epistemic_strict("verify", str(bundle), "--expect-head", "0" * 63 + "1", env=env)
    assert done.returncode == 1 and "is not the hash of any line" in done.stdout
    assert epistemic_strict("verify", str(bundle), "--expect-head", head, env=env).returncode == 0
