"""Scrubbing secrets out of text: built-in formats, environment values, policy patterns.

Every fake secret is built by concatenation, so that no secret-looking literal sits here.
"""

from __future__ import annotations

import re
import string
import subprocess
import sys
from collections.abc import Callable, Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from epistemic_agent.core.redact import Redactor, check_patterns


def mixed(n: int) -> str:
    """n characters of letters and digits, as in a real token."""
    return ("aB3xY7Qz9K" * (n // 10 + 1))[:n]


JWT = "ey" + "JhbGciOiJIUzI1NiJ9." + "ey" + "JzdWIiOiIxMjM0NTY3ODkwIn0." + mixed(43)
PEM_BODY = "MIIEow" + mixed(58) + "\n" + mixed(64) + "\n" + mixed(20) + "==\n"
#: (label, token) for every built-in format.
TOKENS = [
    ("openai-key", "sk-" + mixed(48)),
    ("openai-key", "sk-" + "proj-" + mixed(40) + "_" + mixed(40) + "-" + mixed(20)),
    ("anthropic-key", "sk-" + "ant-" + "api03-" + mixed(90) + "-" + mixed(6)),
    ("aws-access-key-id", "AK" + "IA" + "IOSFODNN7EX4MPLE"),
    ("aws-access-key-id", "AS" + "IA" + "Z2X3C4V5B6N7M8Q9"),
    ("github-token", "gh" + "p_" + mixed(36)),
    ("github-token", "gh" + "o_" + mixed(36)),
    ("github-token", "gh" + "u_" + mixed(36)),
    ("github-token", "gh" + "s_" + mixed(36)),
    ("github-token", "gh" + "r_" + mixed(36)),
    ("github-token", "github" + "_pat_" + mixed(22) + "_" + mixed(59)),
    ("gitlab-token", "gl" + "pat-" + mixed(20)),
    ("slack-token", "xo" + "xb-" + "123456789012-1234567890123-" + mixed(24)),
    ("slack-token", "xo" + "xp-" + "1234-5678-" + mixed(32)),
    ("google-api-key", "AI" + "za" + "Sy" + mixed(33)),
    ("stripe-key", "sk" + "_live_" + mixed(24)),
    ("stripe-key", "rk" + "_live_" + mixed(24)),
    ("stripe-key", "sk" + "_test_" + mixed(24)),
    ("huggingface-token", "hf" + "_" + mixed(34)),
    ("jwt", JWT),
    (
        "private-key",
        "-----BEGIN " + "RSA PRIVATE KEY-----\n" + PEM_BODY + "-----END RSA PRIVATE KEY-----",
    ),
    ("private-key", "-----BEGIN " + "PRIVATE KEY-----\n" + PEM_BODY + "-----END PRIVATE KEY-----"),
    (
        "private-key",
        "-----BEGIN "
        + "OPENSSH PRIVATE KEY-----\n"
        + PEM_BODY
        + "-----END OPENSSH PRIVATE KEY-----",
    ),
]
BUILT_IN_LABELS = sorted({label for label, _ in TOKENS} | {"bearer-token", "url-password"})
ORDINARY = [
    "task-list skeleton risk-free asks whisk-based disk-usage sk-learn",
    "sk-learn-tutorial-for-absolute-beginners-everywhere",  # lower case words, not a key
    "see https://example.com:8443/path?q=1 and ssh://git@github.com/org/repo.git",
    "mail user@example.com; git@github.com:org/repo.git; http://localhost:8000/",
    "the bearer of bad news; Bearer tokens are short-lived; Bearer <token>; Bearer $TOKEN",
    "ghp_ alone, hf_hub_download(), self.hf_model, github_pat_short, glpat-short",
    "AKIA is a prefix; ASIA is a continent; AIza; xoxo; eyJ; rk_live_x; sk_test_",
    "-----BEGIN PUBLIC KEY-----\nMIIBIjANBg\n-----END PUBLIC KEY-----",
    "-----BEGIN CERTIFICATE-----\nMIIDdzCCAl\n-----END CERTIFICATE-----",
    "sha256 " + "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "uuid 123e4567-e89b-12d3-a456-426614174000 and base64 " + mixed(60),
    "x" + "sk-" + mixed(40) + " no boundary before it: " + "AKIA" + "ABCDEFGHIJKLMNOPQ",
    "",
]


@pytest.mark.parametrize(("label", "token"), TOKENS)
def test_each_built_in_format_is_redacted_with_its_label(label: str, token: str) -> None:
    redactor = Redactor({})
    for before, after in [("", ""), ("key: ", "\n"), ('{"k": "', '"}'), ("(", ")")]:
        out, count = redactor.text(f"{before}{token}{after}")
        assert (out, count) == (f"{before}[REDACTED:{label}]{after}", 1)


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_text_comes_back_as_is(text: str) -> None:
    out, count = Redactor({}).text(text)
    assert count == 0
    assert out is text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Authorization: Bearer " + mixed(40), "Authorization: Bearer [REDACTED:bearer-token]"),
        (
            "curl -H 'authorization: bearer " + mixed(20) + "'",
            "curl -H 'authorization: bearer [REDACTED:bearer-token]'",
        ),
        ("BEARER\t" + mixed(16) + ".x", "BEARER\t[REDACTED:bearer-token]"),
        ("Bearer " + JWT, "Bearer [REDACTED:bearer-token]"),
        ("Bearer " + mixed(15), "Bearer " + mixed(15)),  # too short to be a token
    ],
)
def test_bearer_keeps_the_word_and_replaces_the_token(text: str, expected: str) -> None:
    assert Redactor({}).text(text)[0] == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "postgres://admin:" + "s3cr3t!" + "@db:5432/app",
            "postgres://admin:[REDACTED:url-password]@db:5432/app",
        ),
        ("redis://:" + "hunter22" + "@cache", "redis://:[REDACTED:url-password]@cache"),
        (
            "git+https://me:" + "p%40ss" + "@host/x y",
            "git+https://me:[REDACTED:url-password]@host/x y",
        ),
        (
            "https://" + "gh" + "p_" + mixed(36) + ":x-oauth-basic@github.com",
            "https://[REDACTED:github-token]:[REDACTED:url-password]@github.com",
        ),
    ],
)
def test_url_password_only_the_password_goes(text: str, expected: str) -> None:
    assert Redactor({}).text(text)[0] == expected


def test_private_key_block_goes_whole_even_cut_short() -> None:
    block = "-----BEGIN " + "EC PRIVATE KEY-----\n" + PEM_BODY + "-----END EC PRIVATE KEY-----"
    out, count = Redactor({}).text("before\n" + block + "\nafter")
    assert (out, count) == ("before\n[REDACTED:private-key]\nafter", 1)
    begin = "-----BEGIN " + "RSA PRIVATE KEY-----\n"
    out, count = Redactor({}).text(begin + PEM_BODY[:100] + "... [cut]\nmore")  # cut mid-line
    assert (out, count) == ("[REDACTED:private-key]... [cut]\nmore", 1)
    escaped = (begin + PEM_BODY).replace("\n", "\\n")  # in JSON, as in a service account key
    out, count = Redactor({}).text('{"private_key": "' + escaped + '", "id": 1}')
    assert (out, count) == ('{"private_key": "[REDACTED:private-key]\\n", "id": 1}', 1)
    headers = "Proc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,AB12\n\n"
    out, count = Redactor({}).text(begin + headers + PEM_BODY + "\nplain words.")
    assert (out, count) == ("[REDACTED:private-key]\n\nplain words.", 1)


ENVIRON = {
    "GITHUB_TOKEN": "gh-env-value-" + mixed(12),
    "AWS_SECRET_ACCESS_KEY": mixed(40),
    "PGPASSWORD": "pg pass " + mixed(8),
    "ANTHROPIC_API_KEY": "anthropic-" + mixed(20),
    "DB_PASSWORD": "db" + "!" + mixed(10),
    "my_service_pat": "pat-" + mixed(16),
    "SHORT_TOKEN": "1234567",  # under 8 characters: left alone
    "HOME": "/home/someone-else",
    "PLAIN": "plain-value-" + mixed(8),
}


@pytest.mark.parametrize(
    "name",
    [
        "GITHUB_TOKEN",
        "AWS_SECRET_ACCESS_KEY",
        "PGPASSWORD",
        "ANTHROPIC_API_KEY",
        "DB_PASSWORD",
        "my_service_pat",
    ],
)
def test_values_of_secret_looking_variables_are_redacted(name: str) -> None:
    out, count = Redactor(ENVIRON).text(f"x={ENVIRON[name]};")
    assert (out, count) == (f"x=[REDACTED:env:{name}];", 1)


def test_other_variables_and_short_values_are_left() -> None:
    text = " ".join(ENVIRON[name] for name in ("SHORT_TOKEN", "HOME", "PLAIN"))
    assert Redactor(ENVIRON).text(text) == (text, 0)


def test_names_adds_variables_whatever_they_are_called() -> None:
    out, count = Redactor(ENVIRON, names=["PLAIN"]).text("v " + ENVIRON["PLAIN"])
    assert (out, count) == ("v [REDACTED:env:PLAIN]", 1)
    assert Redactor(ENVIRON, names=["SHORT_TOKEN"]).text("1234567")[1] == 0


def test_longest_value_first_and_one_label_per_value() -> None:
    environ = {"A_TOKEN": "abcdefgh", "B_TOKEN": "abcdefgh-ijkl", "C_TOKEN": "abcdefgh-ijkl"}
    out, count = Redactor(environ).text("abcdefgh-ijkl abcdefgh")
    assert (out, count) == ("[REDACTED:env:B_TOKEN] [REDACTED:env:A_TOKEN]", 2)


def test_an_environment_value_goes_whole_even_inside_a_format() -> None:
    secret = mixed(20) + "!tail"  # a bearer token ends at "!": the value must go whole
    out, _ = Redactor({"API_TOKEN": secret}).text("Authorization: Bearer " + secret)
    assert out == "Authorization: Bearer [REDACTED:env:API_TOKEN]"


def test_no_environ_means_os_environ(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EPISTEMIC_TEST_TOKEN", "from-os-environ-" + mixed(8))
    out, count = Redactor().text("from-os-environ-" + mixed(8))
    assert (out, count) == ("[REDACTED:env:EPISTEMIC_TEST_TOKEN]", 1)


def test_policy_patterns_are_numbered_from_one() -> None:
    redactor = Redactor({}, patterns=[r"corp-[0-9]{6}", r"internal\.example\.net"])
    out, count = redactor.text("id corp-123456 at internal.example.net")
    assert (out, count) == ("id [REDACTED:policy:1] at [REDACTED:policy:2]", 2)


def test_policy_pattern_with_a_secret_group_replaces_only_it() -> None:
    redactor = Redactor({}, patterns=[r"(?i)password\s*[=:]\s*(?P<secret>\S+)"])
    out, count = redactor.text("user=bob Password: hunter2 other")
    assert (out, count) == ("user=bob Password: [REDACTED:policy:1] other", 1)


def test_policy_patterns_never_touch_a_marker() -> None:
    redactor = Redactor({"X_TOKEN": "REDACTED"}, patterns=[r"REDACTED", r"[a-z]+-key", r"\]"])
    out, count = redactor.text("REDACTED " + "sk-" + mixed(40) + " ]")
    assert out == "[REDACTED:env:X_TOKEN] [REDACTED:openai-key] [REDACTED:policy:3]"
    assert count == 3
    assert redactor.text(out) == (out, 0)


def test_a_bad_pattern_fails_on_first_use_not_on_construction() -> None:
    redactor = Redactor({}, patterns=["ab(c"])
    with pytest.raises(re.error):
        redactor.text("abc")


def test_bytes_keep_every_byte_around_a_secret() -> None:
    token = ("gh" + "p_" + mixed(36)).encode()
    data = b"\xff\xfe\x00 " + token + b"\x80\x81\n\xc3"
    out, count = Redactor({}).data(data)
    assert (out, count) == (b"\xff\xfe\x00 [REDACTED:github-token]\x80\x81\n\xc3", 1)
    assert Redactor({}).data(out) == (out, 0)
    clean = b"\xff\x00 nothing here \x80"
    assert Redactor({}).data(clean)[0] is clean


def test_bytes_environment_value_and_utf8() -> None:
    redactor = Redactor({"APP_SECRET": "pässwörd-" + mixed(4)})
    data = b"\xfe" + ("pässwörd-" + mixed(4)).encode() + b"\xfe"
    assert redactor.data(data) == (b"\xfe[REDACTED:env:APP_SECRET]\xfe", 1)


def test_value_scrubs_nested_strings_and_leaves_keys_and_the_rest() -> None:
    token = "gh" + "p_" + mixed(36)
    obj = {
        "cmd": "echo " + token,
        token: "the key is left alone",
        "nested": [1, 2.5, None, ("a", token), {"deep": ["Bearer " + mixed(20)]}],
        "bytes": b"not a str",
    }
    out, count = Redactor({}).value(obj)
    assert count == 3
    assert out == {
        "cmd": "echo [REDACTED:github-token]",
        token: "the key is left alone",
        "nested": [
            1,
            2.5,
            None,
            ("a", "[REDACTED:github-token]"),
            {"deep": ["Bearer [REDACTED:bearer-token]"]},
        ],
        "bytes": b"not a str",
    }
    assert obj["cmd"] == "echo " + token  # the input is not changed


def test_value_without_secrets_is_the_same_object() -> None:
    obj = {"a": ["x", ("y", 1)], "b": {"c": "d"}}
    out, count = Redactor({}).value(obj)
    assert out is obj
    assert count == 0
    marker = object()
    assert Redactor({}).value(marker) == (marker, 0)


def imported_by(module: str) -> set[str]:
    """The modules a fresh interpreter loads to import `module`."""
    code = f"import sys; old = set(sys.modules); import {module}; print(*set(sys.modules) - old)"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(run.stdout.split())


def test_import_costs_nothing_but_re_and_typing() -> None:
    extra = imported_by("epistemic_agent.core.redact") - imported_by("re") - imported_by("typing")
    ours = {"epistemic_agent", "epistemic_agent.core", "epistemic_agent.core.version"}
    ours.add("epistemic_agent.core.frontdoor")  # the package's door: `sys` alone
    ours.add("epistemic_agent.core.redact")
    ours.add("epistemic_agent.core.redact_assign")
    assert extra <= {"__future__", *ours}


# -- check_patterns ---------------------------------------------------------------------------


def test_check_patterns_accepts_good_patterns() -> None:
    assert check_patterns([]) == []
    assert check_patterns([r"corp-\d{6}", r"token=(?P<secret>\w+)"]) == []


@pytest.mark.parametrize(
    ("patterns", "problems"),
    [
        ("corp-.*", ["patterns must be a list of regular expressions, not str"]),
        ({"a": "b"}, ["patterns must be a list of regular expressions, not dict"]),
        (["ok", 3], ["pattern 2: must be a string, not int"]),
        (["ok", "ab(c"], ["pattern 2 ('ab(c'): missing ), unterminated subpattern at position 2"]),
        (["a*"], ["pattern 1 ('a*'): matches the empty string"]),
        (
            [r"\b", "(?=x)|y"],
            [
                r"pattern 1 ('\\b'): matches the empty string",
                "pattern 2 ('(?=x)|y'): matches the empty string",
            ],
        ),
        (
            [None, "[z-a]"],
            [
                "pattern 1: must be a string, not NoneType",
                "pattern 2 ('[z-a]'): bad character range z-a at position 1",
            ],
        ),
    ],
)
def test_check_patterns_says_what_is_wrong(patterns: object, problems: list[str]) -> None:
    assert check_patterns(patterns) == problems


# -- properties -------------------------------------------------------------------------------

#: Pieces that make formats, markers and their context meet in random text.
FRAGMENTS = (
    *("sk-", "Bearer ", "bearer\t", "://", "https://u:", "@", ":", "[", "]", "-", "_", " "),
    *("[REDACTED:", "REDACTED", "env:APP_TOKEN", "openai-key]", "policy:1]", "\n", "eyJ"),
    *("-----BEGIN " + "RSA PRIVATE KEY-----", "-----END RSA PRIVATE KEY-----", "password="),
    "gh" + "p_",
    "A1b2C3d4E5f6G7h8I9j0",
)
noise = st.lists(st.text(max_size=6) | st.sampled_from(FRAGMENTS), max_size=14).map("".join)
#: A token's body: what follows its prefix ("Z9": a digit and a capital, as in a real one).
body = st.text(string.ascii_letters + string.digits, min_size=40, max_size=60).map("Z9".__add__)
#: How each built-in format makes a token of a body.
MAKERS: list[Callable[[str], str]] = [
    lambda b: "sk-" + b,
    lambda b: "sk-" + "ant-" + b,
    lambda b: "AK" + "IA" + b.upper()[:16],
    lambda b: "gh" + "p_" + b[:36],
    lambda b: "github" + "_pat_" + b,
    lambda b: "gl" + "pat-" + b[:20],
    lambda b: "xo" + "xb-" + b,
    lambda b: "AI" + "za" + b[:35],
    lambda b: "sk" + "_live_" + b,
    lambda b: "hf" + "_" + b[:34],
    lambda b: "ey" + "J" + b[:12] + "." + b[12:26] + "." + b[26:],
    lambda b: "-----BEGIN " + "DSA PRIVATE KEY-----\n" + b + "\n-----END DSA PRIVATE KEY-----",
]


def readable(out: str, env_names: Sequence[str] = (), policies: int = 0) -> list[str]:
    """The stretches of text between markers: what is left of the original."""
    labels = [*BUILT_IN_LABELS, *(f"env:{name}" for name in env_names)]
    labels += [f"policy:{i}" for i in range(1, policies + 1)]
    return re.split("|".join(re.escape(f"[REDACTED:{label}]") for label in labels), out)


@given(text=noise, secret=st.text(min_size=8, max_size=30))
def test_scrubbing_is_idempotent(text: str, secret: str) -> None:
    environ = {"APP_TOKEN": secret, "X_SECRET": "REDACTED"}
    redactor = Redactor(environ, patterns=[r"password=(?P<secret>\S*)", "REDACTED"])
    once, _ = redactor.text(text)
    assert redactor.text(once) == (once, 0)
    data, _ = redactor.data(b"\xff" + text.encode() + b"\x80")
    assert redactor.data(data) == (data, 0)


@given(before=noise, after=noise, secret=st.text(min_size=8, max_size=30))
def test_a_planted_environment_secret_never_survives(before: str, after: str, secret: str) -> None:
    out, count = Redactor({"APP_TOKEN": secret}).text(before + secret + after)
    assert count >= 1
    assert not any(secret in rest for rest in readable(out, ["APP_TOKEN"]))


@given(
    before=noise,
    after=noise,
    body=body,
    make=st.sampled_from(MAKERS),
    space=st.sampled_from([" ", "\n", '"', "(", "\t", "'", "="]),
)
def test_a_planted_token_never_survives(
    before: str, after: str, body: str, make: Callable[[str], str], space: str
) -> None:
    token = make(body)
    out, count = Redactor({}).text(before + space + token + space + after)
    assert count >= 1
    assert not any(token in rest for rest in readable(out))
