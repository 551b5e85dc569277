"""Secrets by the name they are given: a value assigned to a key that names a secret is
redacted whatever its shape, in every syntax it is written in; keys that name no secret, code
that only mentions one, and variable references are left as they are.

Every fake secret is built at run time, so that no secret-looking literal sits here.
"""

from __future__ import annotations

import json
import re
import zipfile
from pathlib import Path

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from epistemic_agent.core.redact import Redactor
from epistemic_agent.core.redact_assign import ANNOTATION
from epistemic_agent.reports.bundle.export import export
from epistemic_agent.session.session import Session

MARKER = "[REDACTED:secret-assignment]"
SECRET = "hun" + "ter2-" + "Xq9"  # a value of no known token format


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"aws_secret_access_key={SECRET}", f"aws_secret_access_key={MARKER}"),
        (f"AWS_SECRET_ACCESS_KEY: {SECRET}", f"AWS_SECRET_ACCESS_KEY: {MARKER}"),
        (f"aws_secret_access_key = {SECRET}", f"aws_secret_access_key = {MARKER}"),  # ini
        ("password: hunter2", f"password: {MARKER}"),
        ("  password: correct horse battery staple", f"  password: {MARKER}"),
        (f"- client_secret: '{SECRET}'", f"- client_secret: '{MARKER}'"),
        (f"client_secret={SECRET}&grant_type=x", f"client_secret={MARKER}&grant_type=x"),
        (f"GITHUB_TOKEN={SECRET}", f"GITHUB_TOKEN={MARKER}"),
        (f"SLACK_BOT_TOKEN={SECRET} make deploy", f"SLACK_BOT_TOKEN={MARKER} make deploy"),
        (f'export DB_PASSWORD="{SECRET} with spaces"', f'export DB_PASSWORD="{MARKER}"'),
        (f'{{"api_key": "{SECRET}", "user": "bob"}}', f'{{"api_key": "{MARKER}", "user": "bob"}}'),
        (f'{{"apiKey":"{SECRET}"}}', f'{{"apiKey":"{MARKER}"}}'),
        ('{"pin_token": 123456, "n": 1}', f'{{"pin_token": {MARKER}, "n": 1}}'),
        (f'"password": "a\\"{SECRET}"', f'"password": "{MARKER}"'),  # an escaped quote inside
        (f"mysql --password={SECRET} -u root", f"mysql --password={MARKER} -u root"),
        (f"gh auth login --token {SECRET} --host x", f"gh auth login --token {MARKER} --host x"),
        (f"tool --api-key '{SECRET} x' run", f"tool --api-key '{MARKER}' run"),
        (
            f'curl -H "Authorization: Basic {SECRET}" https://x',
            f'curl -H "Authorization: {MARKER}" https://x',
        ),
        (f"curl -H 'X-Api-Key: {SECRET}' https://x", f"curl -H 'X-Api-Key: {MARKER}' https://x"),
        (f"PGPASSWORD={SECRET} psql", f"PGPASSWORD={MARKER} psql"),
        (f"MYSQL_PWD={SECRET}", f"MYSQL_PWD={MARKER}"),
        (f"GITLAB_PAT={SECRET}", f"GITLAB_PAT={MARKER}"),
        (f"accessToken = '{SECRET}'", f"accessToken = '{MARKER}'"),
        (f"private_key: {SECRET}", f"private_key: {MARKER}"),
        (f"# password: {SECRET}", f"# password: {MARKER}"),  # commented out, still a secret
        (
            f"connect(user=u, password={SECRET}, host=h)",
            f"connect(user=u, password={MARKER} host=h)",
        ),
        (
            f"db:\n  password: |\n    {SECRET}\n    more\n  host: h",
            f"db:\n  password: {MARKER}\n  host: h",
        ),
        (f"+  password: {SECRET} x", f"+  password: {MARKER}"),  # a line a diff adds
        (f"config.yml:3:  password: {SECRET} x", f"config.yml:3:  password: {MARKER}"),  # grep
        (
            f"[INFO] loaded, password: {SECRET} from env",
            f"[INFO] loaded, password: {MARKER} from env",
        ),
        (f'\tpassword := "{SECRET}"', f'\tpassword := "{MARKER}"'),  # Go
        (f"DB_TOKEN := {SECRET}", f"DB_TOKEN := {MARKER}"),  # Make
        (f"SESSION_KEY={SECRET}", f"SESSION_KEY={MARKER}"),
        (f"secret_key_base: {SECRET}", f"secret_key_base: {MARKER}"),  # Rails
        (f"SECRET_KEY_BASE={SECRET} rails s", f"SECRET_KEY_BASE={MARKER} rails s"),
        (f"<password>{SECRET}</password>", f"<password>{MARKER}</password>"),  # Maven
        (
            f'<add key="x"/><ns:apiKey id="1">{SECRET}</ns:apiKey>',
            f'<add key="x"/><ns:apiKey id="1">{MARKER}</ns:apiKey>',
        ),
    ],
    ids=lambda value: value[:36] if isinstance(value, str) else None,
)
def test_secret_values_go_whatever_their_shape(text: str, expected: str) -> None:
    out, count = Redactor({}).text(text)
    assert (out, count) == (expected, 1)
    assert Redactor({}).text(out) == (out, 0)  # idempotent


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"mysql -u root -p{SECRET} shop", "mysql -u root -p[REDACTED:command-password] shop"),
        (
            f"mysqldump -h db -p{SECRET} shop > x",
            "mysqldump -h db -p[REDACTED:command-password] shop > x",
        ),
        (f"mariadb -p{SECRET}", "mariadb -p[REDACTED:command-password]"),
        (f"sshpass -p {SECRET} ssh host", "sshpass -p [REDACTED:command-password] ssh host"),
    ],
)
def test_a_password_glued_to_its_option_goes(text: str, expected: str) -> None:
    out, count = Redactor({}).text(text)
    assert (out, count) == (expected, 1)
    assert Redactor({}).text(out) == (out, 0)


@pytest.mark.parametrize(
    "text",
    [
        "max_tokens=512 primary_key = id bypass=true compass: north",
        "PWD=/home/someone OLDPWD=/tmp monkey: 1 keyboard: us hotkey: F1",
        "token_count: 5\nsecret_name: db\npassword_hash: none\nkey: value",
        "def check_password(password: str) -> bool:",
        "def login(user: str, token: Optional[str] = None, secret: bytes = b''):",
        "if password == other or token != none:",
        "options => password => x",
        "the password is short; the token expired; pass the key on",
        "password: ${DB_PASSWORD}\ntoken=$GITHUB_TOKEN",
        "password:\ntoken: \n",
        "--token --password",
        f"password: {MARKER}",
        "Authorization: Bearer [REDACTED:bearer-token]",
        "x := 1\nif n := len(a); n > 0 {",
        "<keyboard>us</keyboard><passwordPolicy>strict</passwordPolicy><token></token>",
        "mysql -u root -p db; mysql --port=3306; sshpass -f file ssh host",
        "make the suite pass: run it again, then check the tests pass: all of them",
    ],
)
def test_what_names_no_secret_or_holds_none_is_left(text: str) -> None:
    assert Redactor({}).text(text) == (text, 0)


KEYS = [
    *("aws_secret_access_key", "AWS_SECRET_ACCESS_KEY", "password", "PASSWORD", "Password"),
    *("client_secret", "clientSecret", "GITHUB_TOKEN", "api_key", "apiKey", "X-Api-Key"),
    *("DB_PASS", "db_pwd", "access_token", "accessToken", "private_key", "PGPASSWORD"),
    *("secret", "token", "passphrase", "Authorization", "GITLAB_PAT", "credentials"),
]
#: Each syntax, and the characters its values cannot hold unquoted.
SPACE = " \t\n\r\x0b\x0c"  # what ends an unquoted word (ASCII whitespace only)
WORD = SPACE + ",;)}]\"'`"  # what ends the one word taken after `key:` in mid-line
#: Each syntax, the characters its values cannot hold unquoted, and whether it must start a
#: line (YAML, INI: the whole rest of the line is the value).
SYNTAXES = [
    ("{key}={value}", SPACE + ";&|\"'`<>", False),
    ('{key}="{value}"', '\n"\\', False),
    ("{key}: {value}", "\n\"'", True),
    ("  {key} = {value}", "\n\"'", True),
    ("[INFO] config {key}: {value} loaded", WORD, False),
    ('{{"{key}": {json}}}', "\n", False),
    ("run --{flag} {value} now", SPACE + "\"'-", False),
    ("run --{flag}={value} now", SPACE + ";&|\"'`<>", False),
]


@given(
    key=st.sampled_from(KEYS),
    syntax=st.sampled_from(SYNTAXES),
    value=st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=4),
    before=st.sampled_from(["", "x=1\n", "# config\n", "echo ok; "]),
)
def test_an_assigned_secret_never_survives(
    key: str, syntax: tuple[str, str, bool], value: str, before: str
) -> None:
    template, forbidden, line_start = syntax
    value = value.strip(" \t,;")  # (a value starting with = > or ~ reads as an operator)
    assume(len(value) >= 4 and not set(value) & set(forbidden) and "$" not in value[:1])
    assume(not value.startswith(("[REDACTED:", "|", ">", "=", "~")) and "\r" not in value)
    assume(not line_start or before.endswith("\n") or not before)
    assume(line_start or ANNOTATION.fullmatch(value) is None)  # `token: str` is a type
    flag = re.sub(r"[^a-z0-9]+", "-", re.sub(r"(?<=[a-z])(?=[A-Z])", "-", key).lower())
    line = template.format(key=key, value=value, json=json.dumps(value), flag=flag)
    text = before + line
    assume(value not in text.replace(value, "", 1))  # the value is nowhere else
    out, count = Redactor({}).text(text)
    assert count >= 1, text
    rest = out.replace(MARKER, "\n")
    assert value not in rest and json.dumps(value)[1:-1] not in rest, (text, out)


# -- end to end: the record and the bundle ----------------------------------------------------


LOOK = "see which credentials the deploy job is configured with"
CHANGE = "write the service configuration the deploy step expects"


def test_assigned_secrets_never_reach_the_record_or_the_bundle(tmp_path: Path) -> None:
    values = [f"{SECRET}-{n}" for n in range(6)]
    creds = (
        f"aws_secret_access_key={values[0]}\npassword: {values[1]}\n"
        f'{{"api_key": "{values[2]}"}}\nexport DEPLOY_TOKEN={values[3]}\n'
    )
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "creds.env").write_text(creds)
    with Session(ws) as session:
        assert session.bash("cat creds.env", "collect-info", LOOK).ok
        assert session.bash(f"echo --password {values[4]} >&2", "collect-info", LOOK).ok
        assert session.write_file("service.yml", f"db:\n  password: {values[5]}\n", CHANGE).ok
        assert session.read_file("service.yml", LOOK).ok
    assert (ws / "service.yml").read_text().endswith(f"{values[5]}\n")  # real on disk
    recorded = b"".join(p.read_bytes() for p in (ws / ".epistemic").rglob("*") if p.is_file())
    recorded += (ws / "RATIONALE.md").read_bytes()
    assert MARKER.encode() in recorded
    bundle = tmp_path / "audit.zip"
    export(ws, bundle, force=False)
    with zipfile.ZipFile(bundle) as archive:
        packed = b"".join(archive.read(name) for name in archive.namelist())
    for value in values:
        assert value.encode() not in recorded, value
        assert value.encode() not in packed, value
    assert b"secret-assignment" in packed
