"""Downloads and copies over the network: curl, wget, rsync, scp. Reading a URL is not a
workspace effect; saving it is; sending data has a remote effect (unknown)."""

from __future__ import annotations

import posixpath
import re

from ..core import Cmd, Word, handles, words
from ..options import grammar, options

_CURL = grammar(
    "curl",
    "A:b:c:C:d:D:e:E:F:H:K:m:o:P:Q:r:T:t:u:U:w:x:X:Y:y:z:0123456#aBfgGhiIjJklLMnNOpqRsSvVZ",
    """variable: trace-config: haproxy-clientip: ip-tos: ipfs-gateway:
    abstract-unix-socket: alt-svc: aws-sigv4: cacert: capath: cert-type: cert: ciphers:
    config: connect-timeout: connect-to: continue-at: cookie-jar: cookie: create-file-mode:
    crlfile: curves: data-ascii: data-binary: data-raw: data-urlencode: data: delegation:
    dns-interface: dns-ipv4-addr: dns-ipv6-addr: dns-servers: doh-url: dump-header: egd-
    file: engine: etag-compare: etag-save: expect100-timeout: form-string: form: ftp-
    account: ftp-alternative-to-user: ftp-method: ftp-port: ftp-ssl-ccc-mode: happy-
    eyeballs-timeout-ms: header: hostpubmd5: hostpubsha256: hsts: interface: json:
    keepalive-time: key-type: key: krb: libcurl: limit-rate: local-port: login-options:
    mail-auth: mail-from: mail-rcpt: max-filesize: max-redirs: max-time: netrc-file:
    noproxy: oauth2-bearer: output-dir: output: parallel-max: pass: pinnedpubkey: preproxy:
    proto-default: proto-redir: proto: proxy-cacert: proxy-capath: proxy-cert-type: proxy-
    cert: proxy-ciphers: proxy-crlfile: proxy-header: proxy-key-type: proxy-key: proxy-pass:
    proxy-pinnedpubkey: proxy-service-name: proxy-tls13-ciphers: proxy-tlsauthtype: proxy-
    tlspassword: proxy-tlsuser: proxy-user: proxy: pubkey: quote: random-file: range: rate:
    referer: request-target: request: resolve: retry-delay: retry-max-time: retry: sasl-
    authzid: service-name: socks4: socks4a: socks5-gssapi-service: socks5-hostname: socks5:
    speed-limit: speed-time: ssl-sessions: stderr: telnet-option: tftp-blksize: time-cond:
    tls-max: tls13-ciphers: tlsauthtype: tlspassword: tlsuser: trace-ascii: trace: unix-
    socket: upload-file: url-query: url: user-agent: user: write-out: anyauth append basic
    cert-status compressed compressed-ssh create-dirs crlf digest disable disable-eprt
    disable-epsv disallow-username-in-url doh-cert-status doh-insecure fail fail-early fail-
    with-body false-start form-escape ftp-create-dirs ftp-pasv ftp-pret ftp-skip-pasv-ip
    ftp-ssl-ccc ftp-ssl-control get globoff haproxy-protocol head help http2 http2-prior-
    knowledge http3 http3-only ignore-content-length include insecure ipv4 ipv6 junk-
    session-cookies list-only location location-trusted mail-rcpt-allowfails manual metalink
    negotiate netrc netrc-optional next no-alpn no-buffer no-clobber no-keepalive no-npn no-
    progress-meter no-sessionid ntlm ntlm-wb parallel parallel-immediate path-as-is post301
    post302 post303 progress-bar proxy-anyauth proxy-basic proxy-digest proxy-insecure
    proxy-negotiate proxy-ntlm proxy-ssl-allow-beast proxy-ssl-auto-client-cert proxy-tlsv1
    proxytunnel raw remote-header-name remote-name remote-name-all remote-time remove-on-
    error retry-all-errors retry-connrefused sasl-ir show-error silent socks5-basic
    socks5-gssapi socks5-gssapi-nec ssl ssl-allow-beast ssl-auto-client-cert ssl-no-revoke
    ssl-reqd ssl-revoke-best-effort sslv2 sslv3 styled-output suppress-connect-headers tcp-
    fastopen tcp-nodelay tftp-no-options tlsv1 tr-encoding trace-time use-ascii verbose
    version xattr""",
    risky="-o --output -O --remote-name --remote-name-all -D --dump-header -c --cookie-jar "
    "--trace --trace-ascii --stderr --libcurl --etag-save --hsts --alt-svc --ssl-sessions -w "
    "--write-out -K --config",
    note="-o/--output (under --output-dir), -D/--dump-header, -c/--cookie-jar, --trace, "
    "--stderr, --libcurl, --etag-save, --hsts, --alt-svc, --ssl-sessions FILE and "
    "-w '%output{FILE}' are written (- is standard output); -O/-J name the file after the "
    "URL; -d/-F/-T/--json or a method other than GET/HEAD/OPTIONS send data",
)
_CURL_SENDS = words(
    """-d --data --data-raw --data-binary --data-urlencode --data-ascii -F --form
    --form-string -T --upload-file --json -Q --quote --mail-from --mail-rcpt"""
)
_CURL_FILES = tuple(
    words(
        """-D --dump-header -c --cookie-jar --trace --trace-ascii --stderr --libcurl --etag-save
        --hsts --alt-svc --ssl-sessions"""
    )
)
_WRITE_OUT = re.compile(r"%output\{(?:>>)?([^}]*)\}")


@handles("curl")
def _curl(c: Cmd) -> None:
    o = options(c, _CURL)
    methods = {(w.value or "?").upper() for w in o.get("-X", "--request")}
    if o.has(*_CURL_SENDS) or methods - {"GET", "HEAD", "OPTIONS"}:
        c.unknown("sends data to a server: its remote effect is unknown")
    if o.has("-K", "--config"):
        c.unknown("reads options from a config file: effect unknown")
    folder = o.last("--output-dir")
    outputs = [w for w in o.get("-o", "--output") if w.value != "-"]
    c.write([w if w is folder else _under(folder, w) for w in outputs])
    c.write([w for w in o.get(*_CURL_FILES) if w.value not in ("-", "%")])
    for template in o.get("-w", "--write-out"):
        if template.value is None or template.value.startswith("@"):
            c.unknown("takes a --write-out template that may name files: effect unknown")
        else:
            c.write([Word(name, name) for name in _WRITE_OUT.findall(template.value)])
    if o.has("-O", "--remote-name", "--remote-name-all", "-J", "--remote-header-name"):
        c.change("saves the download under a name taken from the URL")


def _under(folder: Word | None, word: Word) -> Word:
    """-o FILE under --output-dir DIR."""
    if folder is None or (word.value or "").startswith("/"):
        return word
    if folder.value is None or word.value is None:
        return Word(word.raw, None)
    return Word(word.raw, posixpath.join(folder.value, word.value), folder.tilde)


_WGET = grammar(
    "wget wget2",
    "a:A:bB:cD:e:EFhHi:I:kKl:LmNn::o:O:pP:qQ:rR:St:T:U:vVw:xX:46",
    """output-document: output-file: append-output: directory-prefix: input-file: tries:
    timeout: user-agent: execute: wait: quota: level: accept: reject: domains: header:
    post-data: post-file: method: body-data: body-file: user: password: save-cookies:
    load-cookies: warc-file: rejected-log: hsts-file: base: include-directories:
    exclude-directories: spider config: ca-directory: referer: limit-rate: bind-address:""",
    risky="-O --output-document -o --output-file -a --append-output --save-cookies "
    "--warc-file --rejected-log --hsts-file -e --execute -P --directory-prefix",
    note="saves the download (under a name from the URL, under -P DIR, or -O FILE; -O - is "
    "standard output); -o/-a/--save-cookies/--warc-file/--rejected-log/--hsts-file are "
    "written; -e runs a wgetrc command; --spider downloads nothing",
)


@handles("wget", "wget2")
def _wget(c: Cmd) -> None:
    o = options(c, _WGET)
    if o.has("--post-data", "--post-file", "--method", "--body-data", "--body-file"):
        c.unknown("sends data to a server: its remote effect is unknown")
    c.write(o.get("-o", "--output-file", "-a", "--append-output"), "logs to")
    c.write(o.get("--save-cookies", "--rejected-log", "--hsts-file"))
    c.write([Word(w.raw, None) for w in o.get("--warc-file")])
    if o.has("-e", "--execute", "--config"):
        c.unknown("runs wgetrc commands it is given: effect unknown")
    documents = o.get("-O", "--output-document")
    if documents:
        c.write([w for w in documents if w.value != "-"])
    elif not o.sure("--spider"):
        c.change("saves the download under a name taken from the URL")


_RSYNC = grammar(
    "rsync",
    "0468aAbcCdDEFgHhiIJkKlLmnNoOpPqrRsStuUvWxXyze:f:T:B:M:@:",
    """rsh: rsync-path: filter: exclude: include: exclude-from: include-from: files-from:
    log-file: log-file-format: out-format: temp-dir: partial-dir: compare-dest: copy-dest:
    link-dest: backup-dir: suffix: chmod: chown: usermap: groupmap: timeout: contimeout: port:
    sockopts: password-file: bwlimit: max-size: min-size: max-delete: block-size:
    checksum-choice: cc: compress-choice: zc: compress-level: zl: skip-compress: info: debug:
    stderr: write-batch: only-write-batch: read-batch: protocol: iconv: address:
    modify-window: stop-after: stop-at: remote-option: outbuf: early-input: copy-as:
    max-alloc: checksum-seed: config: dparam: dry-run list-only remove-source-files""",
    risky="-e --rsh --log-file --write-batch --only-write-batch",
    note="the last operand is written (a remote one changes another host); --log-file, "
    "--write-batch and --only-write-batch are written even with -n; -e/--rsh runs a command; "
    "--remove-source-files deletes the sources; one operand or --list-only lists",
    abbrev=False,
)
_REMOTE = re.compile(r"[^/]*:")


@handles("rsync")
def _rsync(c: Cmd) -> None:
    o = options(c, _RSYNC)
    c.write(o.get("--log-file", "--write-batch", "--only-write-batch"))
    if o.has("-e", "--rsh"):
        c.unknown("runs the remote shell command it is given: effect unknown")
    split = any(w.split for w in o.pos)
    if o.sure("-n", "--dry-run", "--list-only") or (len(o.pos) < 2 and not split):
        return
    _copy_to(c, o.pos[-1], o.pos[:-1])
    if o.has("--remove-source-files"):
        c.delete([w for w in o.pos[:-1] if not _REMOTE.match(w.value or "")], "moves away")


def _copy_to(c: Cmd, dest: Word, sources: list[Word]) -> None:
    if dest.value is not None and _REMOTE.match(dest.value):
        c.change("copies to a remote host", dynamic=False)
    else:
        c.write([dest if sources or not dest.split else Word(dest.raw, None)])


_SCP = grammar(
    "scp",
    "12346ABCTdfOpqRrstvD:F:J:P:S:X:c:i:l:o:",
    risky="-S -o -F -J",
    note="the last operand is written; -S runs a program and -o/-F/-J configure ssh (a "
    "ProxyCommand runs a command)",
    complete=True,
    abbrev=False,
)


@handles("scp")
def _scp(c: Cmd) -> None:
    o = options(c, _SCP)
    if o.has("-S", "-o", "-F", "-J"):
        c.unknown("runs ssh with a program or options it is given: effect unknown")
    if len(o.pos) >= 2 or any(w.split for w in o.pos):
        _copy_to(c, o.pos[-1], o.pos[:-1])
