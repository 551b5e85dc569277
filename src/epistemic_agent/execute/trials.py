"""Each guarantee tried on this machine the way an attacker would (`epistemic doctor`).

A confinement is built for a throwaway lab (lab.py) with the platform given, and real confined
acts, spawned as a session spawns them (`run_shell` with `Confinement.launch`), try to break
each guarantee: write, move aside or rebuild the record and the path to every protected item,
read the record's private files and the operator's secrets, write outside what their act
allows, change metadata from an observation, replace the tool's installation or move its
parents aside, signal or look into the doctor's own process, read outside an allow-list. What
a trial managed is judged from outside the act: a fingerprint of what it must not change, the
lab's token in what it printed, the kernel's answer to a signal. A guarantee holds only when
every one of its trials ran and failed to break it.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from ..core import GUARANTEES, struct
from .sandbox.confinement import Confinement
from .sandbox.platform import Platform
from .shell import bounded_text, run_shell
from .trial_lab import SITE, Lab, changed

TIMEOUT = 10.0
#: What an act may read under an allow-list in the trial: enough for bash and coreutils.
SYSTEM = ("/usr", "/bin", "/lib", "/lib64", "/sbin", "/etc", "/dev", "/proc")
RECORD = (
    "ws/.epistemic",
    "ws/RATIONALE.md",
    "ws/config/policy.toml",
    "ws/deep/a/b/signers",
    "ws/rec.old",
    "ws/hl",
)
TOOL = ("ws/app", "grant/bin", "ws/app.old", "grant/bin.old")
WRITE = 'for f in {}; do printf x >> "$f"; done 2>/dev/null'


@struct
class Trial:
    """One attempt on one guarantee: what it tried, from which act, and what it managed."""

    guarantee: str
    name: str
    act: str
    managed: str | None = None  # None: it failed to break the guarantee

    def to_json(self) -> dict[str, object]:
        return {"trial": self.name, "act": self.act, "held": self.managed is None,
                "managed": self.managed}  # fmt: skip


@struct
class Attempt:
    guarantee: str
    name: str
    act: str
    command: str
    watched: tuple[str, ...] = ()  # what it must not change (relative to the lab's root)
    leak: str = ""  # what printing the lab's token means it managed ("": nothing to print)
    readable: bool = False  # run under an allow-list of readable paths


def prove(platform: Platform) -> dict[str, list[Trial]]:
    """Every guarantee tried with this platform in a throwaway lab (removed after)."""
    base = tempfile.mkdtemp(prefix="epistemic-doctor-")
    try:
        return _run(Lab(Path(os.path.realpath(base))), platform)
    finally:
        _remove(Path(base))


def verdicts(trials: dict[str, list[Trial]]) -> dict[str, str]:
    """Each guarantee some trial broke, with what the first one managed."""
    found = {}
    for key, done in trials.items():
        broken = [trial for trial in done if trial.managed is not None]
        if broken:
            first = broken[0]
            found[key] = f"tried here, a {first.act} act could {first.name}: {first.managed}"
    return found


def _run(lab: Lab, platform: Platform) -> dict[str, list[Trial]]:
    lab.build()
    grant: tuple[str, ...] = (str(lab.grant),)
    every = {"setup": grant, "change-state": grant}
    confinement = Confinement(
        platform, lab.ws, lab.scratch, lab.record, lab.guarded, every,
        secrets=lab.secrets, tool=lab.tool,
    )  # fmt: skip
    allowed = (*SYSTEM, str(lab.ws))
    listed = Confinement(
        platform, lab.ws, lab.scratch, lab.record, lab.guarded, every,
        secrets=lab.secrets, tool=lab.tool, readable=tuple(map(Path, allowed)),
    )  # fmt: skip
    results: dict[str, list[Trial]] = {key: [] for key in GUARANTEES}
    held = lab.root / f"held-{lab.token}"  # a file the doctor holds open while acts look
    with held.open("w"):
        for attempt in attempts(lab):
            used = listed if attempt.readable else confinement
            trial = _try(lab, used, attempt)
            results[attempt.guarantee].append(trial)
            if trial.managed is not None:
                lab.build()  # the next trial starts from an intact lab
    return results


def attempts(lab: Lab) -> list[Attempt]:
    """What an attacker tries, guarantee by guarantee."""
    found = [*_record(), *_private(), *_observations(), *_mutations(), *_tool()]
    found += _processes(os.getpid())
    for act in ("collect-info", "setup"):
        command = (
            f"cat {lab.home}/.ssh/id_ed25519 {lab.home}/.netrc /proc/self/root{lab.home}/.netrc"
        )
        leak = "its output held a hidden key's content"
        found.append(Attempt("secrets-hidden", "read the operator's keys", act, command, leak=leak))
    command = f"cat ../outside/secret; ls -la {lab.outside}"
    leak = "its output held the file's content"
    found.append(Attempt("reads-allow-listed", "read outside the allow-list", "collect-info",
                         command, leak=leak, readable=True))  # fmt: skip
    return found


def _record() -> list[Attempt]:
    tries = {
        "append to the journal": "printf x >> .epistemic/journal.jsonl",
        "replace the head anchor": "printf x > .epistemic/head.json",
        "delete the journal": "rm -f .epistemic/journal.jsonl",
        "hard-link the journal": "ln .epistemic/journal.jsonl hl && printf x >> hl",
        "move the record aside and rebuild it": "mv .epistemic rec.old; mkdir -p .epistemic/tmp; "
        "printf x > .epistemic/journal.jsonl",
        "write the report and the policy": WRITE.format("RATIONALE.md config/policy.toml"),
    }
    for parent in ("config", "deep", "deep/a", "deep/a/b"):
        item = "config/policy.toml" if parent == "config" else "deep/a/b/signers"
        tries[f"move {parent} aside and rebuild {item}"] = _rebuild(parent, item)
    return [Attempt("record-protected", name, "change-state", command, RECORD)
            for name, command in tries.items()]  # fmt: skip


def _private() -> list[Attempt]:
    command = "cat .epistemic/journal.jsonl .epistemic/pending/* .epistemic/evidence/*/* "
    command += ".epistemic/tmp/*; ls -laR .epistemic"
    leak = "its output held a private file's content"
    return [Attempt("record-private", "read the record", act, command, leak=leak)
            for act in ("collect-info", "change-state")]  # fmt: skip


def _observations() -> list[Attempt]:
    paths = "src/app.py src/new ../outside/new ../grant/new $HOME/new ../new"
    watched = ("ws/src", "outside", "grant", "home/new", "new")
    chmod = "chmod 600 src/app.py; touch -d @0 src/app.py; chown 1:1 src/app.py"
    return [
        Attempt("observations-write-scratch-only", "write outside the scratch folder",
                "collect-info", WRITE.format(paths), watched),
        Attempt("observations-keep-metadata", "change a file's mode, times and owner",
                "collect-info", chmod + " 2>/dev/null", ("ws/src",)),
    ]  # fmt: skip


def _mutations() -> list[Attempt]:
    paths = "../outside/new ../outside/secret $HOME/new ../new"
    watched = ("outside", "home/new", "new")
    return [Attempt("mutations-confined", "write outside the workspace and grants", act,
                    WRITE.format(paths), watched) for act in ("change-state", "setup")]  # fmt: skip


def _tool() -> list[Attempt]:
    package = f"{SITE}/epistemic_agent/__init__.py"
    tries = {
        "write the installation": WRITE.format(f"{package} app/.venv/bin/epistemic")
        + f"; printf x > {SITE}/evil.pth",
        "replace a program the session runs": WRITE.format("../grant/bin/ssh-keygen"),
        "delete the installation": "rm -rf app/.venv",
        "move ../grant/bin aside and rebuild it": "cd ../grant && "
        + _rebuild("bin", "bin/ssh-keygen"),
    }
    parts = package.split("/")[:-1]
    parents = ["/".join(parts[: count + 1]) for count in range(len(parts))]
    for parent in parents:
        tries[f"move {parent} aside and rebuild the package"] = _rebuild(parent, package)
    return [Attempt("tool-protected", name, act, command, TOOL)
            for name, command in tries.items() for act in ("setup", "change-state")]  # fmt: skip


def _processes(pid: int) -> list[Attempt]:
    """A signal that the doctor ignores (SIGWINCH), and a look at its open files (what
    ptrace's rules guard)."""
    found = []
    for act in ("collect-info", "change-state"):
        command = f"kill -s WINCH {pid} 2>/dev/null && echo sent-$TOKEN"
        found.append(Attempt("processes-isolated", "signal the doctor", act, command,
                             leak="the kernel delivered the signal"))  # fmt: skip
        command = f"ls -l /proc/{pid}/fd/ 2>/dev/null"
        found.append(Attempt("processes-isolated", "list the doctor's open files", act, command,
                             leak="its output listed the doctor's open files"))  # fmt: skip
    return found


def _rebuild(parent: str, item: str) -> str:
    folder = os.path.dirname(item)
    return f"mv {parent} {parent}.moved 2>/dev/null || exit 0; mkdir -p {folder}; printf x > {item}"


def _try(lab: Lab, confinement: Confinement, attempt: Attempt) -> Trial:
    managed = _attempt(lab, confinement, attempt)
    return Trial(attempt.guarantee, attempt.name, attempt.act, managed)


def _attempt(lab: Lab, confinement: Confinement, attempt: Attempt) -> str | None:
    """Run one attempt as a confined act; what it managed, None when it failed."""
    before = lab.fingerprint(attempt.watched)
    ran = f"ran-{lab.token[:8]}"
    command = f"echo {ran}; {attempt.command}"
    env = {**os.environ, "HOME": str(lab.home), "TMPDIR": str(lab.scratch), "TOKEN": lab.token}
    try:
        launch = confinement.launch(attempt.act)
        done = run_shell(command, lab.ws, TIMEOUT, lab.captures, launch=launch, env=env)
    except OSError as error:  # ConfinementError too: the act could not be confined
        return f"the trial could not run ({error})"
    out = bounded_text(done.stdout, 20_000)
    done.discard()
    moved = [*changed(before, lab.fingerprint(attempt.watched)), *_moved_aside(lab)]
    if moved:
        return f"changed {', '.join(sorted(set(moved))[:3])}"
    if attempt.leak and lab.token in out.replace(ran, ""):
        return attempt.leak
    if ran not in out:
        return f"the trial did not run (exit {done.returncode})"
    return None


def _moved_aside(lab: Lab) -> list[str]:
    """Folders a trial moved aside (`NAME.moved`): the rename itself broke the guarantee."""
    found = [*lab.ws.rglob("*.moved"), *lab.grant.glob("*.moved")]
    return [str(path.relative_to(lab.root)) for path in found]


def _remove(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)
