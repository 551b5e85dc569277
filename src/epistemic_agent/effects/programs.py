"""The program tables behind `effects.classify`, gathered from their families.

Importing this module registers every family's handlers (effects_core's registry); the walker
in `effects` then judges each simple command with `Cmd.run`. The families:

    effects_files      rm, cp, mv, touch, chmod, dd, patch...
    effects_text       sort -o, uniq IN OUT, xxd, less, tree, yq...
    effects_find       find, fd
    effects_sed        sed          effects_awk       awk, gawk, mawk
    effects_archives   tar, zip, unzip, gzip...
    effects_net        curl, wget, rsync, scp
    effects_wrappers   sudo, env, nice, timeout, xargs, bash -c, eval...
    effects_interp     python, perl, ruby, node, php
    effects_git        git: global options, and subcommands with grammars of their own
    effects_packages   pip, npm, apt, cargo, docker, kubectl, systemctl...
    effects_system     kill, date, hostname, crontab, dpkg
    effects_tools      formatters, ruff, compilers, and every unknown program

Each program's option grammar is declared once (effects_options.grammar) and documented in
docs/classifier.md, which is generated from the grammars (effects_grammar_doc).
"""

from __future__ import annotations

from .core import (
    READ_ONLY_PROGRAMS,
    Cmd,
    Findings,
    Word,
    environment,
    norm,
    program,
    shorten,
    words,
)
from .families import (  # noqa: F401 (imported to register their handlers)
    archives,
    awk,
    files,
    find,
    git,
    interp,
    net,
    packages,
    sed,
    system,
    text,
    tools,
    wrappers,
)

__all__ = [
    "READ_ONLY_PROGRAMS",
    "Cmd",
    "Findings",
    "Word",
    "environment",
    "norm",
    "program",
    "shorten",
]

#: Programs that never change anything, whatever their arguments (their output may be
#: redirected: the walker judges redirections). Shell builtins that only touch shell state too.
READ_ONLY_PROGRAMS.update(
    words(
        """ls ll la dir vdir cat head tail grep egrep fgrep wc cut tr diff cmp comm stat du df
        pwd echo printf true false test [ : which type whereis whatis apropos whoami id uname
        ps pgrep pidof pstree basename dirname realpath readlink nl od hexdump strings seq yes
        sleep cal ncal printenv locale tty nproc free uptime w who users groups getent getconf
        arch more most column expand unexpand fold fmt paste join rev tac base32 base64 md5sum
        sha1sum sha224sum sha256sum sha384sum sha512sum b2sum cksum sum numfmt factor expr bc
        jq look lsof lsblk lscpu lsmod lsusb lspci tput zcat zless zmore zgrep zegrep zfgrep
        zdiff bzcat bzgrep xzcat xzgrep zstdcat lz4cat pr tsort shellcheck yamllint tokei
        colordiff locate plocate exa eza lsd gron dpkg-query nm objdump readelf size ping dig
        nslookup host ss netstat vmstat iostat top lsb_release cd pushd popd dirs read mapfile
        readarray export declare typeset local readonly unset set shopt unalias help
        ulimit umask wait jobs times shift getopts let return exit break continue caller
        compgen complete disown logout clear"""
    )
)
