"""Confinement of every act: what it may write, what it may not see, and how that is enforced.

A `Confinement` is made once per session. For each act type it decides a `View`:

- observation acts (collect-info, test-hypothesis, verify) may write the session's scratch dir
  and nothing else, anywhere on the file system;
- mutating acts may write the workspace, the scratch dir, and the paths the policy grants that
  act (`[sandbox] writable`; setup acts get the package caches by default);
- with an allow-list of readable paths (`readable`, sandbox/readable.py), an act reads, lists and
  runs nothing else but the workspace, the scratch dir and its grants;
- no act sees the record folder (`.epistemic/`: an empty read-only folder takes its place), and
  the report, the policy in force and the tool's own installation are read-only wherever they
  lie inside a writable area.

`launch()` turns a view into what the executor needs (a function the spawning thread runs on
itself first, or a bwrap argv prefix); `run()` runs a file tool's I/O in a confined thread.
The mechanisms and their limits are described in confine_platform and docs/security.md.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TypeVar

from ...core import EXIT_RECORD, GUARANTEES, EpistemicError, is_mutating
from . import apply as confine_apply
from . import readable as confine_read
from .apply import Launch as Launch  # where the executor and the runtime find it
from .install import (
    Exposure,
    exposures,
    outermost,
    tool_paths,
    tool_prefixes,
    tool_routes,
    tool_wanted,
)
from .platform import Platform
from .view import View

T = TypeVar("T")
_ENV_NAME = re.compile(r"\$[A-Za-z_][A-Za-z0-9_]*")

#: What a setup act may write outside the workspace unless the policy says otherwise: the
#: package managers' download caches (pip, uv, npm, yarn, cargo, go, maven), where they exist.
DEFAULT_SETUP_GRANTS = (
    "~/.cache",
    "~/.npm",
    "~/.cargo/registry",
    "~/.cargo/git",
    "~/go/pkg/mod",
    "~/.m2/repository",
)


#: What no act may see unless the policy says otherwise (`[sandbox] hidden`): the operator's
#: keys, signing and cloud credentials, and the agents' sockets. `$NAME` is an environment
#: variable's value; a hidden `$NAME` also leaves the acts' environment (see `hidden_env`).
DEFAULT_HIDDEN = (
    "~/.ssh",
    "~/.gnupg",
    "$SSH_AUTH_SOCK",
    "$XDG_RUNTIME_DIR/gnupg",
    "~/.aws",
    "~/.azure",
    "~/.config/gcloud",
    "~/.kube",
    "~/.netrc",
    "~/.git-credentials",
    "~/.pypirc",
)

#: Environment variables that go with a hidden entry (an agent's pid with its socket).
_ENV_WITH = {"SSH_AUTH_SOCK": ("SSH_AUTH_SOCK", "SSH_AGENT_PID"), "~/.gnupg": ("GPG_AGENT_INFO",)}


class ConfinementError(EpistemicError, OSError):
    """The sandbox could not be set up for a call; the call does not run."""

    exit_status = EXIT_RECORD


class Confinement:
    """The confinement of one session's acts (build with `for_session`)."""

    def __init__(
        self,
        platform: Platform,
        workspace: Path,
        scratch: Path,
        record: Path,
        guarded: tuple[Path, ...],
        grants: dict[str, tuple[str, ...]] | None = None,
        hidden: tuple[Path, ...] = (),
        *,
        secrets: tuple[str, ...] | None = None,
        covers: tuple[tuple[Path, Path], ...] = (),
        readable: tuple[Path, ...] | None = None,
        tool: tuple[Path, ...] | None = None,
    ) -> None:
        self.platform = platform
        self.mechanism = platform.mechanism()
        self.workspace, self.scratch = str(workspace), str(scratch)
        self.secrets = DEFAULT_HIDDEN if secrets is None else secrets
        found, self.not_hidden = _expand_hidden(self.secrets, (self.workspace, self.scratch))
        self.hidden = (str(record), *(str(path) for path in hidden), *found)
        self.covers = tuple((str(path), str(decoy)) for path, decoy in covers)
        self.guarded = tuple(str(path) for path in guarded)
        wanted = {"setup": DEFAULT_SETUP_GRANTS, **(grants or {})}
        self.readable = confine_read.expand(
            None if readable is None else tuple(str(path) for path in readable)
        )
        grants_, self.missing = _expand_grants(wanted)
        self.grants, outside = confine_read.split_grants(grants_, self.readable)
        for act, paths in outside.items():
            self.missing[act] = (*self.missing.get(act, ()), *paths)
        self.tool, self.exposed = self._tool(tool)
        self._views: dict[str, View] = {}
        self._held: frozenset[str] | None = None

    def _tool(self, given: tuple[Path, ...] | None) -> tuple[tuple[str, ...], list[Exposure]]:
        """The tool's paths to keep read-only, and what of it no view can (`given`: a tool laid
        out by the caller, whose layout is its own business)."""
        if given is not None:
            return tuple(os.path.realpath(path) for path in given), []
        roots = self.roots()
        prefixes = set(tool_prefixes())  # whole prefixes where they hold no writable folder
        found = tuple(
            path for path in tool_paths() if path not in prefixes or not _holds_any(path, roots)
        )
        exposed, folders = exposures(found, roots, tool_routes(), tool_wanted())
        return tuple(dict.fromkeys((*found, *folders))), exposed

    def roots(self) -> tuple[str, ...]:
        """Every folder some act may write: the scratch folder, the workspace, the grants."""
        grants = (grant for paths in self.grants.values() for grant in paths)
        return tuple(dict.fromkeys((self.scratch, self.workspace, *grants)))

    def view(self, act: str) -> View:
        view = self._views.get(act)
        if view is None:
            view = self._views[act] = self._make_view(act)
        return view

    def _make_view(self, act: str) -> View:
        mutating = is_mutating(act)
        writable = [self.scratch]
        if mutating:
            writable += [self.workspace, *self.grants.get(act, ())]
        guarded = [path for path in self.guarded if _under_any(path, writable)]
        tool = outermost(
            [path for path in self.tool if _under_any(path, writable) and os.path.exists(path)]
        )
        hidden = tuple(path for path in self.hidden if os.path.lexists(path))
        protected = tuple(dict.fromkeys((*guarded, *tool)))
        covers = tuple(
            (path, decoy)
            for path, decoy in self.covers
            if os.path.isdir(path) and os.path.isdir(decoy)
        )
        writable = list(dict.fromkeys(writable))
        readable = None
        if self.readable is not None:  # the workspace is readable for every act
            readable = tuple(dict.fromkeys((*self.readable, self.workspace, *writable)))
        ends = (*protected, *hidden, *(path for path, _ in covers))
        pinned = pins(ends, writable)
        return View(mutating, tuple(writable), hidden, protected, covers, readable, pinned)

    def guard(self, path: Path) -> None:
        """Keep one more path read-only for every act (before the first view is made)."""
        assert not self._views, "guard paths before any act's view is made"
        self.guarded = (*self.guarded, os.path.realpath(path))

    def writable_by_an_act(self, path: str) -> bool:
        """Whether some act's view may write `path` (the workspace, or a grant)."""
        folders = [self.workspace, *(g for grants in self.grants.values() for g in grants)]
        return self.mechanism == "none" or _under_any(os.path.realpath(path), folders)

    def protected_items(self) -> tuple[str, ...]:
        """What no act may change, move or delete, nor any folder leading to it: the guarded
        files, the tool's installation (where it does not hold a writable folder: outside
        those nothing is writable, and `not_held` names what cannot be protected) and the
        hidden paths, as absolute paths."""
        tool = [path for path in self.tool if not _holds_any(path, self.roots())]
        return tuple(dict.fromkeys((*self.guarded, *tool, *self.hidden)))

    def launch(self, act: str, files: tuple[Path, ...] = ()) -> Launch:
        """How to start one call of this act; `files` (its output captures) stay writable."""
        mechanism, view = self.mechanism, self.view(act)
        if mechanism == "none":
            return Launch()
        self._ensure_scratch()
        from .tripwire import Tripwire  # loaded once an act runs, not at exec's start-up

        tripwire = Tripwire(view)
        if mechanism == "bwrap":
            bwrap = self.platform.bwrap
            assert bwrap is not None
            watch = partial(confine_apply.watch_bwrap, tripwire, bwrap)
            return Launch(watch, confine_apply.bwrap_argv(bwrap, view), tripwire)
        names = tuple(str(path) for path in files)
        enter = partial(confine_apply.enter, view, self.platform, names, tripwire)
        namespace = self.platform.namespaces is not None
        return Launch(confine=enter, tripwire=tripwire, pid_namespace=namespace)

    def run(self, act: str, work: Callable[[], T]) -> T:
        """Run `work` (a file tool's I/O) in a thread confined as a command of `act` would be.
        Under bwrap or none it runs unconfined here (the tools' path checks still apply)."""
        if not self.mechanism.startswith("landlock"):
            return work()
        self._ensure_scratch()
        view = self.view(act)
        if view.readable is not None:  # the tool's own code may import what it needs
            readable = (*view.readable, *self.tool)
            parts = (view.mutating, view.writable, view.hidden, view.protected, view.covers)
            view = View(*parts, readable, view.pinned)
        enter = partial(confine_apply.enter, view, self.platform, ())
        return in_confined_thread(enter, work)

    def hidden_env(self) -> tuple[str, ...]:
        """Environment variables acts do not get: those whose value is a hidden path (the SSH
        agent's socket, with its pid), on every platform, `none` included."""
        names: list[str] = []
        for entry in self.secrets:
            key = entry[1:] if _ENV_NAME.fullmatch(entry) else entry
            names += _ENV_WITH.get(key, ())
        return tuple(dict.fromkeys(names))

    def _ensure_scratch(self) -> None:
        """The scratch folder must exist to be bound writable."""
        os.makedirs(self.scratch, mode=0o700, exist_ok=True)

    @property
    def held(self) -> frozenset[str]:
        """The guarantees that hold for this session (computed once)."""
        if self._held is None:
            self._held = frozenset(GUARANTEES) - set(self.not_held())
        return self._held

    def not_held(self) -> dict[str, str]:
        """The guarantees that do not hold for this session, with why."""
        missing = self.platform.not_held()
        if "tool-protected" not in missing and self.exposed:
            missing["tool-protected"] = self.exposed[0].line()
        return missing

    def header(self) -> dict[str, object]:
        """The session header's `confinement` field (docs/journal-format.md)."""
        not_held = self.not_held()
        return {
            "mechanism": self.mechanism,
            "landlock_abi": self.platform.landlock_abi,
            "namespaces": self.platform.namespaces,
            "signals": _signals(self.platform),
            "held": [key for key in GUARANTEES if key not in not_held],
            "not_held": not_held,
            "scratch": self.scratch,
            "grants": {act: list(paths) for act, paths in self.grants.items()},
            "missing_grants": {act: list(paths) for act, paths in self.missing.items() if paths},
            "hidden": list(self.hidden),
            "not_hidden": self.not_hidden,
            "decoys": {path: decoy for path, decoy in self.covers},
            "protected": list(self.guarded),
            "readable": None if self.readable is None else list(self.readable),
        }


def probe(
    platform: Platform, workspace: Path, writable: dict[str, tuple[str, ...]] | None
) -> Confinement:
    """The confinement a session in `workspace` would get (before any session exists)."""
    record = workspace / ".epistemic"
    guarded = (workspace / "RATIONALE.md",)
    return Confinement(platform, workspace, Path("/tmp/epistemic"), record, guarded, writable)


def unmet(required: tuple[str, ...], confinement: Confinement) -> str | None:
    """Why a policy that requires these guarantees cannot start here; None when it can."""
    missing = {key: why for key, why in confinement.not_held().items() if key in required}
    if not missing:
        return None
    lines = [f"  {key}: {why}" for key, why in missing.items()]
    return (
        f"the policy requires confinement this machine cannot give (mechanism "
        f"{confinement.mechanism}; see `epistemic doctor`):\n" + "\n".join(lines)
    )


def warning(confinement: Confinement) -> str | None:
    """One line for a terminal when some guarantee does not hold; None when all do."""
    missing = confinement.not_held()
    if not missing:
        return None
    return (
        f"epistemic: confinement {confinement.mechanism}: {len(missing)} guarantee(s) do not "
        f"hold on this machine ({', '.join(missing)}); see `epistemic doctor`"
    )


def in_confined_thread(enter: Callable[[], None], work: Callable[[], T]) -> T:
    """Run `work` in a new thread that first confines itself with `enter` (namespaces,
    capabilities and Landlock are per thread: the rest of this process stays as it was)."""
    result: list[T] = []
    failure: list[BaseException] = []

    def body() -> None:
        try:
            enter()
        except OSError as error:
            failure.append(ConfinementError(error.errno, f"cannot confine the call: {error}"))
            return
        try:
            result.append(work())
        except BaseException as error:
            failure.append(error)

    thread = threading.Thread(target=body, name="epistemic-confined")
    thread.start()
    try:
        thread.join()
    except BaseException:  # a signal's exception: let the spawn finish, so it can be undone
        thread.join()
        raise
    if failure:
        raise failure[0]
    return result[0]


def _expand_hidden(
    entries: tuple[str, ...], inside: tuple[str, ...]
) -> tuple[tuple[str, ...], dict[str, str]]:
    """The hidden entries as real paths that exist, and those left visible with why (an
    entry holding the workspace or the scratch folder would blind every act)."""
    found: list[str] = []
    skipped: dict[str, str] = {}
    for entry in entries:
        expanded = os.path.expandvars(os.path.expanduser(entry))
        if "$" in expanded or not os.path.isabs(expanded):
            continue  # an unset variable: nothing to hide
        real = os.path.realpath(expanded)
        if not os.path.exists(real):
            continue
        if any(_under_any(folder, [real]) for folder in inside):
            skipped[real] = "it holds the workspace or the scratch folder"
            continue
        found.append(real)
    return tuple(dict.fromkeys(found)), skipped


def _expand_grants(
    wanted: dict[str, tuple[str, ...]],
) -> tuple[dict[str, tuple[str, ...]], dict[str, tuple[str, ...]]]:
    """Grants as real directories that exist; the ones that do not, apart."""
    grants: dict[str, tuple[str, ...]] = {}
    missing: dict[str, tuple[str, ...]] = {}
    for act, paths in wanted.items():
        real = [os.path.realpath(os.path.expanduser(path)) for path in paths]
        grants[act] = tuple(dict.fromkeys(path for path in real if os.path.isdir(path)))
        missing[act] = tuple(path for path in real if not os.path.isdir(path))
    return grants, missing


def pins(ends: tuple[str, ...], writable: list[str]) -> tuple[str, ...]:
    """The folders strictly between each writable folder and each path in `ends` beneath it,
    shallowest first: moving any of them aside would let an act rebuild the path to a
    protected item with content of its own."""
    found: set[str] = set()
    for end in ends:
        roots = [folder for folder in writable if _under_any(end, [folder]) and folder != end]
        if not roots:
            continue
        root = max(roots, key=len).rstrip("/")
        parent = os.path.dirname(end)
        while len(parent) > len(root) and parent.startswith(root + "/"):
            found.add(parent)
            parent = os.path.dirname(parent)
    return tuple(sorted(found, key=lambda path: (path.count("/"), path)))


def _under_any(path: str, folders: list[str]) -> bool:
    return any(path == folder or path.startswith(folder.rstrip("/") + "/") for folder in folders)


def _holds_any(path: str, folders: tuple[str, ...]) -> bool:
    return any(_under_any(folder, [path]) for folder in folders)


def _signals(platform: Platform) -> str:
    if platform.mechanism() == "bwrap" or platform.pid_scope:
        return "pid-namespace"
    if platform.scoped_signals and platform.mechanism() != "none":
        return "landlock-scope"
    return "none"
