"""Static effect classification of shell commands: a table of commands, then properties."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from epistemic_agent.effects import MUTATING, READ_ONLY, UNKNOWN, Effect, classify

CLASSES = {READ_ONLY, MUTATING, UNKNOWN}


@dataclass(frozen=True)
class Case:
    command: str
    cls: str
    writes: tuple[str, ...] | None = None  # None: not checked
    deletes: tuple[str, ...] | None = None
    dynamic: bool | None = None
    extra: dict[str, object] = field(default_factory=dict)

    def __str__(self) -> str:
        return self.command


def R(command: str) -> Case:
    """Read-only: nothing written, nothing deleted, nothing dynamic."""
    return Case(command, READ_ONLY, (), (), False)


def M(command: str, w: tuple[str, ...] = (), d: tuple[str, ...] = (), dyn: bool = False) -> Case:
    """Mutating, with exactly these writes and deletes."""
    return Case(command, MUTATING, w, d, dyn)


def U(command: str, w: tuple[str, ...] | None = None, d: tuple[str, ...] | None = None) -> Case:
    return Case(command, UNKNOWN, w, d)


BASICS = [
    R("ls"),
    R("ls -la src"),
    R("cat README.md"),
    R("head -n 20 src/app.py"),
    R("tail -f log.txt"),
    R("grep -rn 'def main' src"),
    R("rg -n foo"),
    R("ag foo"),
    R("wc -l *.py"),
    R("cut -d: -f1 /etc/passwd"),
    R("tr a-z A-Z"),
    R("diff a.txt b.txt"),
    R("cmp a b"),
    R("file x.bin"),
    R("stat f"),
    R("du -sh ."),
    R("df -h"),
    R("pwd"),
    R("echo hello"),
    R("printf '%s\\n' a b"),
    R("true"),
    R("false"),
    R("test -f x"),
    R("[ -d src ]"),
    R("which python"),
    R("type ls"),
    R("command -v git"),
    R("env"),
    R("date"),
    R("date +%Y-%m-%d"),
    R("whoami"),
    R("id -u"),
    R("uname -a"),
    R("ps aux"),
    R("jq .name package.json"),
    R("sort f"),
    R("sort -rn -k2 f"),
    R("sort -t, -k2,2n f"),
    R("uniq f"),
    R("uniq -c f"),
    R("tree -L 2"),
    R("basename /a/b.c"),
    R("realpath ."),
    R("sha256sum f"),
    R("xxd f | head"),
    R("nl -ba f"),
    R("column -t f"),
    R("less f"),
    R("sleep 1"),
    R("seq 1 10"),
    R("printenv PATH"),
    R("hostname"),
    R("kill -0 123"),
    R("kill -l"),
    R("apt-cache policy python3"),
    R("dpkg -l"),
    R("shellcheck run.sh"),
    R(":"),
    R("zcat f.gz"),
    R("gunzip -c f.gz"),
    R("tar -tzf a.tgz"),
    R("unzip -l a.zip"),
    R("dd if=a"),
    R("mktemp -u"),
    R("crontab -l"),
    R("yq '.a' f.yaml"),
]

QUOTING = [
    R('echo "a > b"'),
    R("echo 'a > b'"),
    R('echo "rm -rf /"'),
    R("echo rm -rf /"),
    R("printf 'rm x; > y'"),
    R('echo "$(echo hi)"'),
    R("echo `ls`"),
    R("ls # > f"),
    R("echo a\\>b"),
    R("grep '>' f"),
    R("grep -c '>>' f"),
    R('echo "a|b" | cat'),
    R("echo 'sudo rm -rf ~'"),
    R("echo héllo wörld"),
    R("echo 日本語"),
]

REDIRECTS = [
    M("echo hi > out.txt", w=("out.txt",)),
    M("echo hi >> log", w=("log",)),
    M("ls &> all.log", w=("all.log",)),
    M("ls &>> all.log", w=("all.log",)),
    M("ls >| f", w=("f",)),
    M("ls 2> err.txt", w=("err.txt",)),
    M("ls 1> out", w=("out",)),
    M("ls >& out", w=("out",)),
    M("ls 2>> err", w=("err",)),
    M("> f", w=("f",)),
    M("exec 3>f", w=("f",)),
    M("exec > log 2>&1", w=("log",)),
    M("ls > /tmp/out", w=("/tmp/out",)),
    M("ls > ../up.txt", w=("../up.txt",)),
    M("ls > ./a/../b.txt", w=("b.txt",)),
    M("ls > 'my file.txt'", w=("my file.txt",)),
    M('ls > "my file.txt"', w=("my file.txt",)),
    M("ls > my\\ file.txt", w=("my file.txt",)),
    M('echo > "out dir/$x"', dyn=True),
    M("echo > $OUT", dyn=True),
    M("echo > *.txt", dyn=True),
    M("echo > ~/notes.txt", w=("~/notes.txt",)),
    M("echo hi >f arg", w=("f",)),
    M("echo é > ü.txt", w=("ü.txt",)),
    M("ls > /dev/sda", w=("/dev/sda",)),
    R("ls > /dev/null"),
    R("ls 2>/dev/null"),
    R("ls &>/dev/null"),
    R("ls >/dev/stdout"),
    R("ls >/dev/stderr"),
    R("ls >/dev/tty"),
    R("ls >/dev/fd/3"),
    R("ls 2>&1"),
    R("ls 1>&2"),
    R("ls >&2"),
    R("ls 2>&-"),
    R("cat < in.txt"),
    R("cat <<< 'hello'"),
    R("ls 2>&1 >/dev/null | wc -l"),
    M("make 2>&1 | tee build.log", w=("build.log",)),
    M("cmd 2>&1 | tee log.txt", w=("log.txt",)),
    M("ls | tee -a a.log b.log", w=("a.log", "b.log")),
    R("ls | tee /dev/stderr"),
    M("echo x | sudo tee /etc/hosts", w=("/etc/hosts",)),
    M("ls >> log 2>> err", w=("log", "err")),
]

HEREDOCS = [
    M("cat <<EOF > out.txt\nhello\nEOF", w=("out.txt",)),
    M("cat <<'EOF' > out.txt\n$(rm x)\nEOF", w=("out.txt",)),
    M("cat <<-EOF >> f 2>/dev/null\n\tb\nEOF", w=("f",)),
    R("cat <<EOF\nhello > world\nEOF"),
    R("cat <<'EOF'\nrm -rf /\nEOF"),
    M("cat <<EOF\n$(rm z)\nEOF", d=("z",)),
    M("cat <<EOF | tee f | wc\nb\nEOF", w=("f",)),
    M("cat <<EOF > f && rm y\nbody\nEOF", w=("f",), d=("y",)),
    R("cat <<EOF | grep x\nbody\nEOF"),
    M("tee notes.md <<EOF\n# notes\nEOF", w=("notes.md",)),
    M('cat <<< "$(rm q)"', d=("q",)),
    U("python - <<EOF\nprint(1)\nEOF"),
    U("bash <<EOF\nls\nEOF"),
]

SUBSTITUTIONS = [
    M("echo $(rm x)", d=("x",)),
    M('echo "$(rm x)"', d=("x",)),
    M("echo `rm x`", d=("x",)),
    M("echo $(echo $(rm deep))", d=("deep",)),
    M("echo `echo \\`rm x\\``", d=("x",)),
    R("x=$(cat f)"),
    R("x=$(git rev-parse HEAD)"),
    M("x=$(rm f)", d=("f",)),
    M("a=$(rm x) ls", d=("x",)),
    R("echo ${HOME:-/tmp}"),
    R("echo $((1 + 2))"),
    R("diff <(ls a) <(ls b)"),
    M("diff <(ls) >(tee f)", w=("f",)),
    M("ls > >(tee out.log)", w=("out.log",)),
    R("tee >(grep x) < f"),
    M("cat $(touch marker; echo f)", w=("marker",)),
    R("[[ $(git status --porcelain) ]]"),
    M("[[ -f $(rm x) ]]", d=("x",)),
    M("for f in $(rm x); do echo $f; done", d=("x",)),
    M("case $(rm x) in a) ;; esac", d=("x",)),
]

CONTROL = [
    R("[[ -f x ]] && cat x"),
    R("[[ -n $x && $x == y* ]]"),
    R("ls && pwd || echo failed"),
    R("ls; pwd; echo done"),
    R("(ls; pwd)"),
    R("{ ls; pwd; }"),
    R("ls | grep x | sort | uniq -c"),
    R("! grep -q foo f"),
    R("time ls"),
    R("time -p ls"),
    R("time ( ls )"),
    R("time -p { ls; pwd; }"),
    M("time { rm x; }", d=("x",)),
    M("time for i in a; do rm x; done", d=("x",)),
    R("echo time { x"),
    R("! { ls; }"),
    R("! if true; then ls; fi"),
    M("x && ! { rm y; }", d=("y",)),
    M("! for i in a; do rm x; done", d=("x",)),
    R("if [ -f x ]; then cat x; else echo none; fi"),
    R("if grep -q a f; then echo y; elif grep -q b f; then echo z; fi"),
    R("for f in *.py; do wc -l $f; done"),
    R("for ((i=0;i<3;i++)); do echo $i; done"),
    R("while read l; do echo $l; done < f"),
    R("until false; do :; done"),
    R("case $x in a) echo a;; *) ls;; esac"),
    R("select x in a b; do echo $x; done"),
    R("x=1"),
    R("x=1 y=2"),
    M("x=1 > f", w=("f",)),
    M("FOO=1 > f ls", w=("f",)),
    R("export PATH=/x:$PATH"),
    R("declare -a arr=(1 2 3)"),
    R("local x=1"),
    R("unset x"),
    R("arr=(a b c)"),
    R("((x++))"),
    R("let x=1+2"),
    R("set -euo pipefail"),
    R("ls &"),
    R("sleep 1 & wait"),
    R("f() { ls; }; f"),
    R("function g { pwd; }; g"),
    M("f() { rm x; }; f", d=("x",)),
    M("f() { ls; }; f > out", w=("out",)),
    M('for f in *.py; do rm "$f"; done', dyn=True),
    M('while read l; do rm "$l"; done < f', dyn=True),
    M("if true; then rm x; fi", d=("x",)),
    M("if [ -f x ]; then cat x; else rm y; fi", d=("y",)),
    M("case $x in a) rm y;; *) ls;; esac", d=("y",)),
    M("! rm x", d=("x",)),
    M("time rm x", d=("x",)),
    M("ls && rm x", d=("x",)),
    M("ls || rm x", d=("x",)),
    M("rm x; ls", d=("x",)),
    M("(rm x)", d=("x",)),
    M("{ rm x; }", d=("x",)),
    M("ls | xargs rm", dyn=True),
    M("{ ls; pwd; } > out", w=("out",)),
    M("(cd x; ls) > f", w=("f",)),
    M("ls | sort > sorted.txt", w=("sorted.txt",)),
    M("a && b > f && c", w=("f",)),
    M("sleep 1 & rm x", d=("x",)),
    M("until false; do rm x; done", d=("x",)),
]

CWD = [
    M("cd src && rm x", d=("src/x",)),
    M("cd src; rm x", d=("src/x",)),
    M("cd src && cd .. && rm x", d=("x",)),
    M("cd a/b && rm ../x", d=("a/x",)),
    M("cd /tmp && rm x", d=("/tmp/x",)),
    M("cd ~ && rm x", d=("~/x",)),
    M("cd && rm x", d=("~/x",)),
    M("cd ~/proj && rm x", d=("~/proj/x",)),
    M("cd $DIR && rm x", dyn=True),
    M("cd - && rm x", dyn=True),
    M("cd src && echo hi > out.txt", w=("src/out.txt",)),
    M("cd src && ls > out.txt", w=("src/out.txt",)),
    M("cd src && rm -rf build > /dev/null 2>&1", d=("src/build",)),
    M("pushd a && rm x && popd && rm y", d=("a/x", "y")),
    M("pushd a; pushd b; rm x; popd; rm y", d=("a/b/x", "a/y")),
    M("(cd a && rm x) && rm y", d=("a/x", "y")),
    M("cd a | rm x", d=("x",)),
    M("echo $(cd a) && rm x", d=("x",)),
    M("cd a & rm x", d=("x",)),
    M("cd a || exit 1; rm y", d=("a/y",)),
    M("cd a || rm x; rm y", d=("a/y",), dyn=True),
    M("if true; then cd a; fi; rm x", dyn=True),
    M("for d in a b; do cd $d; done; rm x", dyn=True),
    M("cd src && git rm old.py", d=("src/old.py",)),
    M("cd src && cp a b", w=("src/b",)),
    M("cd src && bash -c 'rm x'", d=("src/x",)),
    M("cd src && find . -delete", d=("src",)),
    M("env -C sub rm x", d=("sub/x",)),
    M("git -C sub rm x", d=("sub/x",)),
    M("sudo -D /srv rm x", d=("/srv/x",)),
    M("rm ../../x", d=("../../x",)),
    M("rm ./a//b/../c", d=("a/c",)),
]

FILES = [
    M("rm x", d=("x",)),
    M("rm -rf build", d=("build",)),
    M("rm -rf build dist", d=("build", "dist")),
    M("rm -f -- -weird", d=("-weird",)),
    M("rm /etc/passwd", d=("/etc/passwd",)),
    M("rm -rf /", d=("/",)),
    M("rm ~/x ~user/y", d=("~/x", "~user/y")),
    M("rm a\\ b 'c d' \"e f\"", d=("a b", "c d", "e f")),
    M("rm $'tab\\there'", d=("tab\there",)),
    M("rm *.pyc", dyn=True),
    M("rm x{1,2}", dyn=True),
    M("rm file[0-9]", dyn=True),
    M('rm "$f"', dyn=True),
    M('rm -- "$(ls)"', dyn=True),
    M("rmdir d", d=("d",)),
    M("unlink f", d=("f",)),
    M("mv a b", w=("b",), d=("a",)),
    M("mv -t dir a b", w=("dir",), d=("a", "b")),
    M("mv *.txt dir/", w=("dir",), dyn=True),
    M("cp a b", w=("b",)),
    M("cp -r src/ dst", w=("dst",)),
    M("cp a b c dir/", w=("dir",)),
    M("cp -t dir a b", w=("dir",)),
    R("cp a /dev/null"),
    M("ln -s target link", w=("link",)),
    M("ln -s /usr/bin/python", w=("python",)),
    M("install -m 755 a /usr/local/bin/a", w=("/usr/local/bin/a",)),
    M("install -d dir1 dir2", w=("dir1", "dir2")),
    M("touch f", w=("f",)),
    M("touch -d '2 days ago' f", w=("f",)),
    M("mkdir -p a/b/c", w=("a/b/c",)),
    M("mkdir -m 700 secret", w=("secret",)),
    M("chmod +x run.sh", w=("run.sh",)),
    M("chmod -R 755 dir", w=("dir",)),
    M("chmod -w f", w=("f",)),
    M("chmod --reference=a b", w=("b",)),
    M("chown -R user:group dir", w=("dir",)),
    M("chgrp staff f", w=("f",)),
    M("truncate -s 0 f", w=("f",)),
    M("tee a b", w=("a", "b")),
    M("shred -u f", w=("f",), d=("f",)),
    M("dd if=a of=b", w=("b",)),
    M("dd if=/dev/zero of=/dev/sda bs=1M", w=("/dev/sda",)),
    M("dd if=a of=$OUT", dyn=True),
    M("sort -o out in", w=("out",)),
    M("sort -o sorted.txt -k2 f", w=("sorted.txt",)),
    M("sort --output=s.txt f", w=("s.txt",)),
    M("uniq in out", w=("out",)),
    M("uniq -c in out", w=("out",)),
    M("shuf -o out in", w=("out",)),
    M("iconv -f utf8 -t ascii -o out in", w=("out",)),
    M("patch f fix.diff", w=("f",)),
    M("patch -p1 < fix.diff", dyn=True),
    R("patch --dry-run -p1 < fix.diff"),
    M("split -l 10 f", dyn=True),
    M("mktemp", dyn=True),
    M("mktemp -d", dyn=True),
    M("sponge f", w=("f",)),
    M("mkfifo pipe", w=("pipe",)),
    M("rsync -av src/ dst/", w=("dst",)),
    M("rsync -av src/ host:dst/"),
    R("rsync -n -av a b"),
    M("scp host:f .", w=(".",)),
    M("scp f host:"),
    M("/usr/bin/rm x", d=("x",)),
    M("/bin/rm x", d=("x",)),
    M("\\rm x", d=("x",)),
    M('"rm" x', d=("x",)),
    M("r'm' x", d=("x",)),
]

WRAPPERS = [
    M("sudo rm x", d=("x",)),
    M("sudo -u www-data rm x", d=("x",)),
    M("sudo -E env FOO=1 rm x", d=("x",)),
    R("sudo ls /root"),
    R("sudo -l"),
    U("sudo -s"),
    M("sudo -e /etc/hosts", w=("/etc/hosts",)),
    M("doas rm x", d=("x",)),
    U("doas -s"),
    R('awk \'END { close("x"); system("") }\''),
    M("timeout 5 rm x", d=("x",)),
    M("timeout -s KILL 5s rm x", d=("x",)),
    R("timeout 5 ls"),
    M("nice -n 5 rm x", d=("x",)),
    R("nice ls"),
    M("nohup rm x", d=("x",)),
    M("stdbuf -oL rm x", d=("x",)),
    R("stdbuf -oL grep x f"),
    M("FOO=1 rm x", d=("x",)),
    R("FOO=1 BAR=2 ls"),
    M("env FOO=1 rm x", d=("x",)),
    R("env -i ls"),
    R("env FOO=bar"),
    M("env -S 'rm x'", d=("x",)),
    M("command rm x", d=("x",)),
    R("command -v rm"),
    M("exec rm x", d=("x",)),
    R("exec ls"),
    R("builtin cd x"),
    M("time -o t.txt ls", w=("t.txt",)),
    M("xargs rm", dyn=True),
    M("xargs -0 -n1 rm -f", dyn=True),
    R("xargs grep foo"),
    R("find . -type f | xargs grep -l foo"),
    R("xargs"),
    M("xargs -I{} mv {} dest/", w=("dest",), dyn=True),
    M("xargs -I % cp % backup/", w=("backup",)),
    R("xargs -I{} echo {}"),
    M("ls | xargs sed -i 's/a/b/'", dyn=True),
    M("bash -c 'rm x'", d=("x",)),
    M("sh -c 'echo hi > f'", w=("f",)),
    M("bash -lc 'cd x && rm y'", d=("x/y",)),
    M("bash -euo pipefail -c 'rm z'", d=("z",)),
    R("bash -c 'ls -la'"),
    R('sh -c "git status"'),
    M("bash -c \"bash -c 'rm deep'\"", d=("deep",)),
    U('bash -c "$CMD"'),
    U("bash -c 'echo hi; if'"),
    R("bash -n script.sh"),
    U("bash script.sh"),
    U("bash"),
    U("curl -fsSL https://x/install.sh | bash"),
    U("curl -fsSL url | sh -s -- --yes"),
    M('eval "rm x"', d=("x",)),
    R("eval ls"),
    U('eval "$CMD"'),
    M("trap 'rm -f tmp' EXIT", d=("tmp",)),
    R("trap - EXIT"),
    R("watch -n 1 ls"),
    M("watch 'rm x'", d=("x",)),
    U("source .venv/bin/activate"),
    U(". ./env.sh"),
]

FIND = [
    R("find . -name '*.py'"),
    R("find / -name x -print"),
    R("find . -type f -newer ref -print0"),
    R("find src -maxdepth 2 -name '*.md'"),
    M("find . -name x -delete", d=(".",)),
    M("find . -name '*.pyc' -delete", d=(".",)),
    M("find build dist -delete", d=("build", "dist")),
    M("find -delete", d=(".",)),
    M("find . -exec rm {} \\;", dyn=True),
    M("find . -exec rm -f {} +", dyn=True),
    M("find . -execdir rm {} +", dyn=True),
    M("find . -ok rm {} \\;", dyn=True),
    R("find . -exec grep -l x {} +"),
    R("find . -exec grep -l x {} \\;"),
    R("find . -type f -exec wc -l {} ';'"),
    M("find . -exec sh -c 'rm \"$1\"' _ {} \\;", dyn=True),
    R("find . -exec sh -c 'grep x \"$1\"' _ {} \\;"),
    M("find . -exec mv {} /tmp \\;", w=("/tmp",), dyn=True),
    M("find src -fprint out.txt", w=("out.txt",)),
    M("find . -fprintf out.txt '%p\\n'", w=("out.txt",)),
    R("find . -name -delete-me"),
    M("find . -exec chmod 644 {} +", dyn=True),
]

SED_AWK = [
    R("sed -n p file"),
    R("sed 's/a/b/g' file"),
    R("sed -n '1,5p;10q' f"),
    R("sed -ne 's/x/y/p' f"),
    R("sed 'y/abc/xyz/' f"),
    R("sed '$!N;s/\\n/ /' f"),
    R("sed -n '/start/,/end/{p}' f"),
    R("sed 's|/usr|/opt|g' f"),
    R("sed -E 's/(a|b)+/c/' f"),
    R("sed '/^#/d' f"),
    R("sed --sandbox 'w x' f"),
    R("sed 'a\\\nfoo' f"),
    R("sed 's/w/W/' f"),
    R("sed '2i hello' f"),
    M("sed -i s/a/b/ file", w=("file",)),
    M("sed -i 's/a/b/g' a.txt b.txt", w=("a.txt", "b.txt")),
    M("sed -i.bak 's/a/b/' f", w=("f", "f.bak")),
    M("sed -Ei 's/a/b/' f", w=("f",)),
    M("sed --in-place=.orig 's/a/b/' f", w=("f", "f.orig")),
    M("sed -i -e 's/a/b/' -e 's/c/d/' f", w=("f",)),
    M("sed -i 's/a/b/' *.py", dyn=True),
    M("sed -e 's/a/b/w out.txt' f", w=("out.txt",)),
    M("sed '/x/w out' f", w=("out",)),
    M("sed -n '/err/W errors.log' f", w=("errors.log",)),
    R("sed 's/a/b/w /dev/stdout' f"),
    U("sed 1e f"),
    U("sed 's/a/b/e' f"),
    U("sed -f script.sed f"),
    M('sed "$SCRIPT" f', dyn=True),  # $SCRIPT may be `-es/x/y/w out`
    R("awk '{print $1}' f"),
    R("awk -F: '{print $1}' /etc/passwd"),
    R("awk '$1 > 5 {print}' f"),
    R("awk '{if ($1 > 5) print $2}' f"),
    R("awk 'NR > 1 && $3 >= 10' f"),
    R("awk '{print (a > b)}' f"),
    R("awk '/a>b/ {print}' f"),
    R("awk 'BEGIN { x = 1 / 2; print x }'"),
    R("awk -F: '{print $1 > \"/dev/stderr\"}' f"),
    R("awk '{print | \"sort\"}' f"),
    R("awk 'BEGIN{system(\"ls\")}'"),
    R("awk '{\"date\" | getline d; print d}'"),
    R("awk -v n=3 'NR <= n' f"),
    M("awk '{print > \"o.txt\"}' f", w=("o.txt",)),
    M("awk '{print $0 >> \"all.log\"}' f", w=("all.log",)),
    M('awk \'{printf("%s\\n", $1) > "out"}\' f', w=("out",)),
    M("awk '{print > $1 \".txt\"}' f", dyn=True),
    M("awk '{print | \"rm x\"}' f", d=("x",)),
    M("awk 'BEGIN{system(\"rm x\")}'", d=("x",)),
    M("awk -i inplace '{print}' f", w=("f",)),
    U("awk 'BEGIN{system(cmd)}'"),
    U("awk -f prog.awk f"),
    R("gawk --sandbox '{print > \"x\"}' f"),
]

GIT = [
    R("git status"),
    R("git status --porcelain"),
    R("git log --oneline -n 5"),
    R("git log -p -- src/app.py"),
    R("git diff"),
    R("git diff HEAD~1 --stat"),
    R("git diff --cached"),
    R("git show HEAD:file"),
    R("git blame f"),
    R("git rev-parse HEAD"),
    R("git ls-files"),
    R("git grep foo"),
    R("git branch"),
    R("git branch -a"),
    R("git branch -vv"),
    R("git branch --contains abc"),
    R("git branch --show-current"),
    R("git tag"),
    R("git tag -l 'v*'"),
    R("git remote -v"),
    R("git remote"),
    R("git remote get-url origin"),
    R("git stash list"),
    R("git stash show -p"),
    R("git config user.name"),
    R("git config --get user.name"),
    R("git config --list"),
    R("git worktree list"),
    R("git reflog"),
    R("git describe --tags"),
    R("git shortlog -sn"),
    R("git cat-file -p HEAD"),
    R("git --no-pager log"),
    R("git -c color.ui=never status"),
    R("git --version"),
    R("git"),
    R("git clean -n"),
    R("git clean --dry-run -d"),
    R("git add -n ."),
    R("git commit --dry-run"),
    R("git push --dry-run"),
    R("git apply --check p.diff"),
    R("git apply --stat p.diff"),
    R("git format-patch --stdout -1"),
    R("git hash-object f"),
    R("git symbolic-ref HEAD"),
    R("git notes"),
    R("git submodule status"),
    R("git bisect log"),
    M("git log --output=f", w=("f",)),
    M("git log --output f", w=("f",)),
    M("git diff --output=changes.diff", w=("changes.diff",)),
    M("git show --output=s.txt HEAD", w=("s.txt",)),
    M("git commit -m x", dyn=True),
    M("git commit -am 'fix bug'", dyn=True),
    M("git add .", dyn=True),
    M("git add -A", dyn=True),
    M("git stash", dyn=True),
    M("git stash pop", dyn=True),
    M("git stash push -m wip", dyn=True),
    M("git checkout main", dyn=True),
    M("git checkout -b feat", dyn=True),
    M("git checkout -- f", w=("f",)),
    M("git checkout .", w=(".",)),
    M("git checkout HEAD -- a b", w=("a", "b")),
    M("git switch main", dyn=True),
    M("git restore f", w=("f",)),
    M("git restore --staged f", dyn=True),
    M("git reset --hard", dyn=True),
    M("git reset HEAD~1", dyn=True),
    M("git rm x", d=("x",)),
    M("git rm -r dir", d=("dir",)),
    M("git rm --cached x", dyn=True),
    M("git mv a b", w=("b",), d=("a",)),
    M("git clean -fdx", d=(".",)),
    M("git clean -fd src", d=("src",)),
    M("git merge feature", dyn=True),
    M("git rebase main", dyn=True),
    M("git cherry-pick abc", dyn=True),
    M("git revert HEAD", dyn=True),
    M("git pull", dyn=True),
    M("git fetch", dyn=True),
    M("git push origin main", dyn=True),
    M("git init", w=(".git",)),
    M("git init newrepo", w=("newrepo/.git",)),
    M("git init --bare r.git", w=("r.git",)),
    M("git clone https://github.com/a/b.git", w=("b",)),
    M("git clone git@github.com:a/b.git dest", w=("dest",)),
    M("git apply p.diff", dyn=True),
    M("git am < mail", dyn=True),
    M("git tag v1", dyn=True),
    M("git tag -a v1 -m release", dyn=True),
    M("git tag -d v1", dyn=True),
    M("git branch feature", dyn=True),
    M("git branch -d x", dyn=True),
    M("git branch -D x", dyn=True),
    M("git branch -m old new", dyn=True),
    M("git remote add o url", dyn=True),
    M("git config user.name x", dyn=True),
    M("git config --global core.editor vim", dyn=True),
    M("git config --unset user.email", dyn=True),
    M("git worktree add ../wt", w=("../wt",)),
    M("git gc", dyn=True),
    M("git bisect start", dyn=True),
    M("git submodule update --init", dyn=True),
    M("git format-patch -1", dyn=True),
    M("git format-patch -o patches HEAD~2", w=("patches",)),
    M("git archive -o out.zip HEAD", w=("out.zip",)),
    M("git hash-object -w f", dyn=True),
    M("git update-index --assume-unchanged f", dyn=True),
    U("git frob"),
    M("git $SUB", dyn=True),  # $SUB may be `rm -rf .`
]

PACKAGES = [
    M("npm install", dyn=True),
    M("npm i lodash", dyn=True),
    M("npm ci", dyn=True),
    M("npm uninstall x", dyn=True),
    M("yarn", dyn=True),
    M("yarn add react", dyn=True),
    M("pnpm install", dyn=True),
    M("pnpm add -D vitest", dyn=True),
    M("pip install -e .", dyn=True),
    M("pip install requests", dyn=True),
    M("pip3 install -r requirements.txt", dyn=True),
    M("pip3.11 uninstall -y x", dyn=True),
    M("python -m pip install x", dyn=True),
    M("python3 -m pip install --upgrade pip", dyn=True),
    M("pip cache purge", dyn=True),
    M("apt-get install -y curl", dyn=True),
    M("sudo apt update", dyn=True),
    M("apt install jq", dyn=True),
    M("dpkg -i x.deb", dyn=True),
    M("gem install rails", dyn=True),
    M("cargo install ripgrep", dyn=True),
    M("cargo add serde", dyn=True),
    M("go install golang.org/x/tools/gopls@latest", dyn=True),
    M("go get ./...", dyn=True),
    M("go mod tidy", dyn=True),
    M("go env -w GOPROXY=direct", dyn=True),
    M("brew install jq", dyn=True),
    M("conda install numpy", dyn=True),
    M("conda config --set auto_activate_base false", dyn=True),
    M("poetry add httpx", dyn=True),
    M("poetry install", dyn=True),
    M("uv add httpx", dyn=True),
    M("uv pip install x", dyn=True),
    M("uv sync", dyn=True),
    M("pipx install black", dyn=True),
    M("docker build .", dyn=True),
    M("docker compose up -d", dyn=True),
    M("kubectl apply -f x.yaml", dyn=True),
    M("systemctl restart nginx", dyn=True),
    R("npm ls"),
    R("npm --version"),
    R("npm view react version"),
    R("npm config get registry"),
    R("yarn --version"),
    R("pip list"),
    R("pip freeze"),
    R("pip show requests"),
    R("pip --version"),
    R("pip3.11 freeze"),
    R("pip cache list"),
    R("python3 -m pip list"),
    R("apt list --installed"),
    R("apt-cache search x"),
    R("cargo --version"),
    R("go version"),
    R("go env GOPATH"),
    R("go list ./..."),
    R("brew list"),
    R("conda list"),
    R("conda config --show"),
    R("poetry show"),
    R("uv pip list"),
    R("docker ps"),
    R("docker images"),
    R("docker compose -f x.yml ps"),
    R("kubectl get pods -n ns"),
    R("kubectl -n ns get pods"),
    R("systemctl status nginx"),
    U("npm run build"),
    U("npm test"),
    U("npm start"),
    U("npx create-react-app x"),
    U("yarn build"),
    U("poetry run pytest"),
    U("uv run pytest"),
    U("uvx ruff check"),
    U("cargo build"),
    U("cargo test"),
    U("go build ./..."),
    U("go test ./..."),
    U("docker run ubuntu"),
    U("docker exec -it c bash"),
    U("kubectl exec -it pod -- sh"),
    U("npm frobnicate"),
]

TOOLS = [
    U("make test"),
    U("make"),
    U("cmake --build build"),
    U("pytest -q"),
    U("python -m pytest -q"),
    U("mypy src"),
    U("python -m mypy src"),
    U("tox"),
    U("jest"),
    U("ruff check ."),
    U("ruff format --check ."),
    R("ruff --version"),
    R("cmake --version"),
    R("pytest --version"),
    M("ruff check --fix .", w=(".",)),
    M("ruff format .", w=(".",)),
    M("ruff format src tests", w=("src", "tests")),
    M("black src", w=("src",)),
    M("black .", w=(".",)),
    R("black --check ."),
    R("black --diff src"),
    M("isort .", w=(".",)),
    R("isort --check-only ."),
    M("prettier --write .", w=(".",)),
    R("prettier --check ."),
    R("prettier src/a.ts"),
    M("gofmt -w main.go", w=("main.go",)),
    R("gofmt -l ."),
    M("python -m black .", w=(".",)),
    M("gcc -o out main.c", w=("out",)),
    M("gcc -O2 x.c -oprog", w=("prog",)),
    M("cc main.c", dyn=True),
    R("gcc -fsyntax-only x.c"),
    R("gcc --version"),
]

INTERPRETERS = [
    U("python -c 'import os; os.remove(\"x\")'"),
    U("python -c 'print(open(\"x\").read())'"),
    U('python -c \'__import__("os").remove("x")\''),
    U("python -c \"exec('x')\""),
    U("python3 -c 'import subprocess; subprocess.run([\"ls\"])'"),
    U('python -c "print(().__class__.__base__.__subclasses__())"'),
    U('python -c "(lambda: 1)()"'),
    U('python -c "$CODE"'),
    R("python3 -c 'print(1+1)'"),
    R("python3 -c 'import sys; print(sys.version)'"),
    R("python -c 'import sys; print(sys.executable, sys.path)'"),
    R('python -c "import platform; print(platform.python_version())"'),
    R("python -c \"print('a'.upper())\""),
    R("python -c 'print(len([1, 2, 3]), sorted({3, 1}))'"),
    R("python -V"),
    R("python --version"),
    R("python3.11 --version"),
    U("python"),
    U("python script.py"),
    U("python3 -u manage.py migrate"),
    U("python -m http.server"),
    R("python -m json.tool in.json"),
    M("python -m json.tool in.json out.json", w=("out.json",)),
    M("python -m venv .venv", w=(".venv",)),
    M("python3 -m venv --prompt x env", w=("env",)),
    M("python -m compileall src", dyn=True),
    U("node -e 'console.log(1)'"),
    U("node app.js"),
    R("node --version"),
    U("perl -e 'print 1'"),
    U("perl -ne 'print if /x/' f"),
    U("perl -Mstrict -e 1"),
    M("perl -pi -e 's/a/b/' f", w=("f",)),
    M("perl -i.bak -pe 's/a/b/' f g", w=("f", "g")),
    R("perl -v"),
    U("ruby -e 'puts 1'"),
    U("php -r 'echo 1;'"),
    R("php -v"),
    U("./run.sh"),
    U("scripts/test.sh"),
    U("/opt/bin/rm x"),
    U("deno run main.ts"),
]

NETWORK = [
    R("curl -s https://example.com"),
    R("curl -I url"),
    R("curl -X GET url"),
    R("curl -o /dev/null -w '%{http_code}' url"),
    R("curl -o - url"),
    R("curl -D - url"),
    R("curl -fsSL url | jq ."),
    M("curl -o f url", w=("f",)),
    M("curl -sSLo out.html url", w=("out.html",)),
    M("curl --output page.html url", w=("page.html",)),
    M("curl -O https://x/y.tgz", dyn=True),
    M("curl -c cookies.txt url", w=("cookies.txt",)),
    M("curl url > page.html", w=("page.html",)),
    U("curl -X POST -d x url"),
    U("curl -d '{}' url"),
    U("curl -F file=@a url"),
    U("curl -X DELETE url"),
    M("wget url", dyn=True),
    M("wget -O file url", w=("file",)),
    M("wget -P downloads url", dyn=True),
    M("wget -o wget.log -O - url", w=("wget.log",)),
    R("wget -qO- url"),
    R("wget -q -O - url"),
    R("wget --spider url"),
    U("ssh host ls"),
]

ARCHIVES = [
    M("tar -czf a.tgz dir", w=("a.tgz",)),
    M("tar czf a.tgz dir", w=("a.tgz",)),
    M("tar cvzf backup.tar.gz src", w=("backup.tar.gz",)),
    M("tar --create --file=a.tar dir", w=("a.tar",)),
    M("tar -cf - dir | gzip > a.tgz", w=("a.tgz",)),
    R("tar -cf - dir | wc -c"),
    M("tar xzf a.tgz", w=(".",)),
    M("tar -xzf a.tgz -C out", w=("out",)),
    M("tar -xf a.tar --directory=/opt", w=("/opt",)),
    M("wget -q -O - url | tar xz", w=(".",)),
    R("tar -xOf a.tgz file"),
    R("tar tf a.tar"),
    M("unzip a.zip", w=(".",)),
    M("unzip -d out a.zip", w=("out",)),
    M("unzip -o a.zip -d out", w=("out",)),
    M("zip -r a.zip dir", w=("a.zip",)),
    M("gzip f", w=("f.gz",), d=("f",)),
    M("gzip -k f", w=("f.gz",)),
    M("gzip -d f.gz", w=("f",), d=("f.gz",)),
    M("gunzip f.gz", w=("f",), d=("f.gz",)),
    M("gunzip a.tgz", w=("a.tar",), d=("a.tgz",)),
    M("xz -d a.tar.xz", w=("a.tar",), d=("a.tar.xz",)),
    M("bzip2 f", w=("f.bz2",), d=("f",)),
    M("zstd f", w=("f.zst",)),
    M("gzip < f > f.gz", w=("f.gz",)),
    R("gzip -c f"),
    R("gzip"),
]

ALLOW_LIST_EXCEPTIONS = [
    R("xxd f"),
    M("xxd f out.hex", w=("out.hex",)),
    M("xxd -r in.hex out.bin", w=("out.bin",)),
    R("less -S f"),
    M("less -o log f", w=("log",)),
    R("tree -L 3 src"),
    M("tree -o t.txt", w=("t.txt",)),
    M("info -o out ls", w=("out",)),
    M("sdiff -o merged a b", w=("merged",)),
    M("cloc --out=report.txt .", w=("report.txt",)),
    R("fd pattern"),
    R("fd -e py -x wc -l"),
    M("fd -e py -x rm {}", dyn=True),
    M("fd -e py -X rm", dyn=True),
    R("rg foo"),
    U("rg --pre ./preprocess foo"),
    R("man ls"),
    U("man -P 'rm x' ls"),
    U("dc -e '!rm x'"),
    U("fzf"),
]

SYSTEM = [
    M("kill 123"),
    M("pkill -f server"),
    M("killall node"),
    M("date -s '2020-01-01'"),
    M("hostname newname"),
    M("crontab -e"),
    M("yq -i '.a = 1' f.yaml", w=("f.yaml",)),
    M("jq . f.json > out.json", w=("out.json",)),
]

ERRORS_AND_ODDITIES = [
    U("echo ("),
    U("if then fi"),
    U("echo 'unterminated"),
    U("cat <<EOF; rm y\nb\nEOF"),
    U("$CMD x"),
    U('"$(which rm)" x'),
    U("${TOOL:-rm} x"),
    U("frobnicate --all"),
    U("vim f"),
    Case("", READ_ONLY, (), (), False),
    Case("   \n\t ", READ_ONLY, (), (), False),
    R("# just a comment"),
    R("ls\n\npwd\n"),
    M("ls\nrm x\n", d=("x",)),
    U("echo hi; rm x; if", d=("x",)),
    M("ls > 'ü ñ.txt'", w=("ü ñ.txt",)),
    M("rm 日本.txt", d=("日本.txt",)),
    R("echo '🙂' | cat"),
]

CASES = [
    *BASICS,
    *QUOTING,
    *REDIRECTS,
    *HEREDOCS,
    *SUBSTITUTIONS,
    *CONTROL,
    *CWD,
    *FILES,
    *WRAPPERS,
    *FIND,
    *SED_AWK,
    *GIT,
    *PACKAGES,
    *TOOLS,
    *INTERPRETERS,
    *NETWORK,
    *ARCHIVES,
    *ALLOW_LIST_EXCEPTIONS,
    *SYSTEM,
    *ERRORS_AND_ODDITIES,
]


def test_the_table_is_large_and_has_no_duplicates() -> None:
    commands = [case.command for case in CASES]
    assert len(commands) >= 300
    duplicates = {c for c in commands if commands.count(c) > 1}
    assert not duplicates


@pytest.mark.parametrize("case", CASES, ids=str)
def test_classify(case: Case) -> None:
    effect = classify(case.command)
    assert effect.cls == case.cls, effect.reasons
    if case.writes is not None:
        assert effect.writes == case.writes, effect.reasons
    if case.deletes is not None:
        assert effect.deletes == case.deletes, effect.reasons
    if case.dynamic is not None:
        assert effect.dynamic == case.dynamic, effect.reasons
    if case.cls != READ_ONLY:
        assert effect.reasons
    for reason in effect.reasons:
        assert "internal error" not in reason
        assert reason.count("`") >= 2 or reason.startswith(("the command", "empty"))


def test_reasons_name_the_part_and_what_it_does() -> None:
    assert classify("ls > out.txt").reasons == ("`> out.txt` writes out.txt",)
    assert classify("rm -rf build").reasons == ("`rm -rf build` deletes build",)
    reason = classify("python -c 'import os'").reasons[0]
    assert reason.startswith("`python -c") and reason.endswith("runs inline code: effect unknown")
    assert "frob" in classify("frob x").reasons[0]
    assert classify("echo (").reasons == ("the command does not parse as shell: effect unknown",)


def test_to_json() -> None:
    effect = classify("cd src && rm x > ../log.txt; rm y")
    data = effect.to_json()
    assert data == {
        "class": "mutating",
        "paths": ["log.txt", "src/x", "src/y"],
        "writes": ["log.txt"],
        "deletes": ["src/x", "src/y"],
        "dynamic": False,
        "reasons": list(effect.reasons),
    }
    assert json.loads(json.dumps(data)) == data


def test_effect_is_frozen() -> None:
    effect = classify("ls")
    with pytest.raises(AttributeError):
        effect.cls = MUTATING  # type: ignore[misc]
    assert effect == Effect(READ_ONLY)


def test_deep_nesting_is_unknown_not_an_exception() -> None:
    effect = classify("echo " + "$(" * 600 + "ls" + ")" * 600)
    assert effect.cls == UNKNOWN
    effect = classify(" && ".join(["ls"] * 3000))
    assert effect.cls in CLASSES


def test_nested_strings_stop_somewhere() -> None:
    assert classify("eval " * 5 + "rm x").deletes == ("x",)
    deep = classify("eval " * 12 + "rm x")
    assert deep.cls == UNKNOWN
    assert any("too deeply" in reason for reason in deep.reasons)


def test_the_parser_only_ever_sees_ascii(monkeypatch: pytest.MonkeyPatch) -> None:
    """tree-sitter-bash's scanner calls isalpha() on raw code points: non-ASCII input can
    segfault the process (seen with U+A93BD). Every parse must get ASCII bytes."""
    from epistemic_agent import effects

    classify("ls")  # build the real parser
    seen: list[bytes] = []
    real = effects._PARSER

    class Recording:
        def parse(self, data: bytes) -> object:
            seen.append(data)
            return real.parse(data)  # type: ignore[union-attr]

    monkeypatch.setattr(effects, "_PARSER", Recording())
    effect = classify("V:K\x05{\U000a93bdA; rm 日本.txt; bash -c 'rm ü'; time { rm é; }")
    assert effect.deletes == ("日本.txt", "ü", "é")
    assert seen and all(max(data, default=0) < 128 for data in seen)


def test_import_is_lazy() -> None:
    import subprocess
    import sys

    code = (
        "import sys; import epistemic_agent.effects as e; "
        "assert 'tree_sitter' not in sys.modules; assert 'typing' not in sys.modules; "
        "assert 'epistemic_agent.effects_programs' not in sys.modules; e.classify('ls'); "
        "assert 'tree_sitter' in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# -- properties ---------------------------------------------------------------------------

READ_ONLY_ATOMS = [
    "ls",
    "ls -la src",
    "cat README.md",
    "grep -rn foo src",
    "git status",
    "git log --oneline",
    "head -n 5 f",
    "wc -l f",
    "echo hi",
    'echo "a > b"',
    "sed -n 1,5p f",
    "find . -name '*.py'",
    "jq . f.json",
    "diff a b",
    "sort f",
    "awk '{print $1}' f",
    "pwd",
    "true",
    "[[ -f x ]]",
    "x=1",
    "git diff --stat",
    "ls 2>/dev/null",
    "xargs grep foo",
    "python3 -c 'print(1)'",
]
OTHER_ATOMS = [
    "rm x",
    "touch f",
    "make test",
    "npm install",
    "python script.py",
    "sed -i s/a/b/ f",
    "git commit -m m",
    "frob",
    "curl -o out url",
    "echo hi > f",
    "mv a b",
    "pytest",
]


def _compose(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.one_of(
        st.tuples(children, children).map(lambda p: f"{p[0]} && {p[1]}"),
        st.tuples(children, children).map(lambda p: f"{p[0]} || {p[1]}"),
        st.tuples(children, children).map(lambda p: f"{p[0]}; {p[1]}"),
        st.tuples(children, children).map(lambda p: f"{p[0]} | {p[1]}"),
        children.map(lambda c: f"( {c} )"),
        children.map(lambda c: f"{{ {c}; }}"),
        children.map(lambda c: f"echo $( {c} )"),
        children.map(lambda c: f"! {c}"),
        children.map(lambda c: f"for i in a b; do {c}; done"),
        st.tuples(children, children).map(lambda p: f"if {p[0]}; then {p[1]}; fi"),
        children.map(lambda c: f"while false; do {c}; done"),
        children.map(lambda c: f"bash -c '{c}'" if "'" not in c else c),
    )


read_only_commands = st.recursive(st.sampled_from(READ_ONLY_ATOMS), _compose, max_leaves=6)
any_commands = st.recursive(st.sampled_from(READ_ONLY_ATOMS + OTHER_ATOMS), _compose, max_leaves=6)
FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FAST
@given(st.text(max_size=200))
def test_never_raises_on_arbitrary_text(text: str) -> None:
    effect = classify(text)
    assert effect.cls in CLASSES
    assert set(effect.to_json()) == {"class", "paths", "writes", "deletes", "dynamic", "reasons"}
    assert not any("internal error" in reason for reason in effect.reasons)


@FAST
@given(st.text(alphabet="$()`'\"<>|&;{}[]\\ \n#!*?~=-abcrmx0123456789", max_size=60))
def test_never_raises_on_shell_punctuation(text: str) -> None:
    effect = classify(text)
    assert effect.cls in CLASSES
    assert not any("internal error" in reason for reason in effect.reasons)


@FAST
@given(read_only_commands)
def test_read_only_stays_read_only_when_wrapped(command: str) -> None:
    assert classify(command).cls == READ_ONLY, classify(command).reasons
    assert classify(f"( {command} )").cls == READ_ONLY
    assert classify(f"{command} | cat").cls == READ_ONLY


@FAST
@given(any_commands)
def test_a_redirect_to_a_file_makes_any_command_mutating(command: str) -> None:
    effect = classify(f"{command} > some_file")
    assert effect.cls == MUTATING, effect.reasons
    assert "some_file" in effect.writes


@FAST
@given(any_commands)
def test_a_leading_rm_makes_any_command_mutating(command: str) -> None:
    effect = classify(f"rm -f x; {command}")
    assert effect.cls == MUTATING, effect.reasons
    assert "x" in effect.deletes


@FAST
@given(any_commands)
def test_mutating_dominates_and_classification_is_deterministic(command: str) -> None:
    first, second = classify(command), classify(command)
    assert first == second
    if first.writes or first.deletes:
        assert first.cls == MUTATING
