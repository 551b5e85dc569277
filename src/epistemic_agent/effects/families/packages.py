"""Programs driven by subcommands: package managers, containers, services. A subcommand is
read-only, changing, or runs project code (unknown); an unlisted one is unknown."""

from __future__ import annotations

import re

from ...core import struct
from ..core import HANDLERS, PATTERNS, VERSION_ARGS, Cmd, Word, maybe_option, words
from ..model import MUTATING, READ_ONLY


@struct
class Table:
    """A program driven by subcommands; `a:b` names a two-word subcommand."""

    ro: frozenset[str]
    mut: frozenset[str]
    run: frozenset[str] = frozenset()
    what: str = "changes installed packages"
    run_what: str = "runs project scripts or code: effect unknown"
    bare: str = READ_ONLY  # the class of an invocation without any argument
    argopts: frozenset[str] = frozenset()  # options before the subcommand that take a value
    flagged: frozenset[str] = frozenset()  # `sub:flag`: this flag makes sub mutating


def _table_of(ro: str, mut: str, run: str = "", **kw: str) -> Table:
    sets = {key: words(kw.pop(key, "")) for key in ("argopts", "flagged")}
    return Table(words(ro + " help"), words(mut), words(run), **kw, **sets)  # type: ignore[arg-type]


_NPM_MUT = """install i in ins inst insta instal isnt isnta isntal isntall add ci install-clean ic
    uninstall remove rm r un unlink update up upgrade udpate link ln prune dedupe ddp init
    create publish unpublish deprecate pack rebuild rb audit:fix cache shrinkwrap star unstar
    login logout adduser owner dist-tag access team token pkg version config install-test it
    install-ci-test cit set-script"""
_NPM_RO = """ls list ll la view info show v outdated search s se find help-search config:get
    config:list config:ls get root prefix bin whoami explain why doctor audit fund ping query
    sbom pkg:get cache:ls cache:verify docs repo bugs home"""
_PIP = _table_of(
    "list show freeze check search debug inspect index hash cache:list cache:dir cache:info "
    "config:list config:get config:debug",
    "install uninstall download wheel cache config lock",
    argopts="--log --proxy --cache-dir --python --retries --timeout --exists-action "
    "--trusted-host --cert --client-cert --use-feature --use-deprecated --keyring-provider",
)
_APT = _table_of(
    "list search show showsrc policy depends rdepends madison changelog moo check",
    """install reinstall remove purge autoremove autopurge update upgrade full-upgrade
    dist-upgrade build-dep source download clean autoclean satisfy edit-sources markauto
    unmarkauto hold unhold""",
    what="changes system packages",
    argopts="-o -c -t --target-release",
)
_DOCKER = _table_of(
    """ps images inspect logs version info history top stats events port diff search
    container:ls container:ps container:inspect container:logs image:ls image:inspect
    image:history network:ls network:inspect volume:ls volume:inspect system:df system:info
    compose:ps compose:logs compose:config compose:images compose:ls compose:top
    compose:version context:ls context:show buildx:ls""",
    """build pull push rm rmi stop start restart kill create tag commit cp pause unpause rename
    update load import save login logout network volume system image container compose buildx
    context builder""",
    "run exec attach compose:run compose:exec container:run container:exec",
    what="changes containers, images or volumes",
    run_what="runs a container: effect unknown",
    argopts="-H --host --context -c --config --log-level -l -f --file -p --project-name "
    "--env-file --profile",
)
TABLES: dict[str, Table] = {
    "pip": _PIP,
    "npm": _table_of(
        _NPM_RO,
        _NPM_MUT,
        "run run-script rum urn test tst t start stop restart exec x explore",
        argopts="--prefix -C -w --workspace",
    ),
    "pnpm": _table_of(
        "ls list ll view info outdated why audit root bin store:path licenses",
        """install i add remove rm uninstall un update up upgrade link ln unlink prune import
        rebuild rb fetch dedupe patch patch-commit publish pack init store env setup""",
        "run test t start exec dlx create",
        argopts="-C --dir --filter -F",
    ),
    "yarn": _table_of(
        "list info why versions outdated licenses owner:list tag:list config:get config:list "
        "bin dir audit",
        """add remove install upgrade up upgrade-interactive link unlink init import dedupe
        autoclean cache global set version publish pack policies config tag owner""",
        "run test start exec dlx node create workspace workspaces",
        bare=MUTATING,
        argopts="--cwd",
    ),
    "bun": _table_of(
        "pm:ls outdated",
        "install i add a remove rm update link unlink init create pm upgrade",
        "run test x exec build",
    ),
    "apt": _APT,
    "apt-get": _APT,
    "aptitude": _APT,
    "apt-mark": _table_of(
        "showauto showmanual showhold showinstall showremove showpurge",
        "auto manual hold unhold minimize-manual install remove purge",
        what="changes system package marks",
    ),
    "gem": _table_of(
        "list search info environment env contents which specification spec query dependency "
        "outdated owner",
        "install i uninstall update cleanup build push yank pristine sources fetch unpack",
        "exec open",
    ),
    "cargo": _table_of(
        "search locate-project verify-project pkgid version read-manifest report",
        """install uninstall add remove rm new init update fix fmt clean publish
        generate-lockfile vendor yank login logout owner package""",
        "build b check c test t run r bench doc d clippy rustc rustdoc miri",
        what="changes dependencies, installed tools or project files",
        run_what="builds (and may run) project code: effect unknown",
    ),
    "go": _table_of(
        "version doc list env mod:graph mod:verify mod:why",
        """install get fmt clean mod mod:tidy mod:download mod:init mod:edit mod:vendor work
        fix""",
        "build test run vet tool generate",
        what="changes modules, installed tools or project files",
        run_what="builds (and may run) project code: effect unknown",
        flagged="env:-w env:-u",
    ),
    "brew": _table_of(
        """list ls info search config doctor deps leaves outdated uses home desc --prefix
        --cellar --cache --repository cat formulae casks commands log options shellenv""",
        """install uninstall remove rm reinstall upgrade update tap untap link unlink cleanup
        pin unpin autoremove services bundle postinstall edit create migrate""",
    ),
    "conda": _table_of(
        "list info search env:list config compare doctor notices activate deactivate",
        "install remove uninstall update upgrade create clean init env rename",
        "run",
        flagged="config:--set config:--add config:--remove config:--append config:--prepend "
        "config:--remove-key",
    ),
    "poetry": _table_of(
        "show check about list search env:info env:list",
        "add remove install update lock init new build publish self sync env:remove env:use "
        "cache:clear",
        "run shell",
    ),
    "uv": _table_of(
        """pip:list pip:show pip:freeze pip:check pip:tree python:list python:find python:dir
        tool:list tool:dir cache:dir version""",
        """add remove sync lock init venv pip pip:install pip:uninstall pip:sync pip:compile
        tool tool:install tool:uninstall tool:upgrade python python:install python:uninstall
        python:pin build publish cache cache:clean cache:prune self""",
        "run tool:run",
    ),
    "pipx": _table_of(
        "list environment",
        "install uninstall upgrade upgrade-all uninstall-all reinstall reinstall-all inject "
        "uninject ensurepath pin unpin",
        "run",
    ),
    "dnf": _table_of(
        "list info search provides whatprovides repolist repoinfo check-update history deplist "
        "repoquery check",
        """install remove erase update upgrade downgrade reinstall autoremove clean makecache
        group groupinstall groupremove distro-sync swap mark""",
        what="changes system packages",
    ),
    "apk": _table_of(
        "info search list policy stats dot verify audit version",
        "add del update upgrade fix cache fetch",
        what="changes system packages",
    ),
    "docker": _DOCKER,
    "podman": _DOCKER,
    "kubectl": _table_of(
        """get describe logs explain version api-resources api-versions cluster-info top auth
        diff wait events config:view config:get-contexts config:current-context
        config:get-clusters""",
        """apply create delete edit patch replace scale rollout set label annotate expose
        autoscale cordon uncordon drain taint cp config certificate""",
        "exec port-forward proxy attach debug run",
        what="changes cluster resources",
        run_what="runs or attaches to workloads: effect unknown",
        argopts="-n --namespace --context --cluster --kubeconfig -s --server --user -l "
        "--selector -o --output -f --filename -c --container",
    ),
    "apt-cache": _table_of(
        """search show showpkg showsrc stats dump dumpavail unmet depends rdepends pkgnames
        dotty xvcg policy madison""",
        "gencaches",
        what="rebuilds the package cache",
        argopts="-c --config-file -o --option -p --pkg-cache -s --src-cache",
    ),
    "systemctl": _table_of(
        """status show list-units list-unit-files list-sockets list-timers list-dependencies
        list-jobs is-active is-enabled is-failed is-system-running cat get-default
        show-environment""",
        """start stop restart reload try-restart reload-or-restart enable disable reenable mask
        unmask daemon-reload daemon-reexec kill reset-failed set-default edit isolate link preset
        set-environment unset-environment import-environment poweroff reboot halt suspend
        hibernate""",
        what="changes system services",
    ),
}
for _alias, _same in (
    ("yum", "dnf"),
    ("microdnf", "dnf"),
    ("mamba", "conda"),
    ("micromamba", "conda"),
):
    TABLES[_alias] = TABLES[_same]
_PIP_NAME = re.compile(r"pip[0-9.]*")


def _table(c: Cmd, t: Table) -> None:
    subs = _subcommand(c.args, t)
    if not subs:
        if t.bare == MUTATING and not any(w.value in VERSION_ARGS for w in c.args):
            c.change(t.what)
        return
    first = subs[0].value
    if first is None:
        c.change(f"runs a subcommand that is not known statically, which may be one that {t.what}")
        return
    second = subs[1].value if len(subs) > 1 else None
    flagged = any(key.startswith(first + ":") for key in t.flagged)
    hidden = flagged and any(maybe_option(w) for w in c.args)  # `go env "$X"`: $X may be -w
    if hidden or any(f"{first}:{w.value}" in t.flagged for w in c.args):
        c.change(t.what)
        return
    for key in (f"{first}:{second}", first):
        if key in t.ro:
            return
        if key in t.mut:
            c.change(t.what)
            return
        if key in t.run:
            c.unknown(t.run_what)
            return
    c.unknown(f"has an unknown {c.name} subcommand ({first}): effect unknown")


def _subcommand(args: list[Word], t: Table) -> list[Word]:
    """The first two operands. An operand right after an option the table does not know may
    be that option's value (`npm --registry URL install`): it is skipped when a later one is
    a known subcommand."""
    firsts = {key.partition(":")[0] for key in t.ro | t.mut | t.run}
    subs: list[Word] = []
    skip = doubtful = False
    for k, word in enumerate(args):
        value = word.value
        if skip:
            skip = doubtful = False
            continue
        if value is not None and value.startswith("-"):
            skip = value in t.argopts
            doubtful = not skip and "=" not in value
            continue
        later = any(w.value in firsts for w in args[k + 1 :])
        if doubtful and not subs and value not in firsts and later:
            doubtful = False
            continue
        subs.append(word)
        if len(subs) == 2:
            break
    return subs


for _program in TABLES:
    HANDLERS[_program] = lambda c: _table(c, TABLES[c.name])


def _pip(c: Cmd) -> None:
    c.name = "pip"
    _table(c, TABLES["pip"])


PATTERNS.append((_PIP_NAME, _pip))
