"""The literal looked for before each redaction pattern runs is one the pattern cannot match without.

redact_text and redact_free_text skip a pattern when its literal is absent (a large values file is a few
hundred thousand short strings, and most hold none); a guard that could be false where its pattern matches
would let that credential through, so each pair is checked on text built from the patterns' own pieces.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from hypothesis import example, given, settings
from hypothesis import strategies as st

from reconciler.core import redact

Guard = Callable[[str], bool]
GUARDED: list[tuple[str, re.Pattern[str], Guard]] = [
    ("pem", redact._PEM, lambda t: "BEGIN " in t),
    ("pem block", redact._PEM_BLOCK, lambda t: "BEGIN " in t),
    ("blob", redact._BLOB, lambda t: len(t) >= redact._BLOB_LENGTH),
    ("scheme pair", redact._SECRET_SCHEME_PAIR, redact._has_scheme),
    ("auth header", redact._AUTH_HEADER, redact._has_scheme),
    ("url userinfo", redact._URL_USERINFO, lambda t: "://" in t and "@" in t),
    ("secret pair", redact._SECRET_PAIR, lambda t: "=" in t),
    ("secret arg", redact._SECRET_ARG, lambda t: "-" in t and bool(redact._FLAG_WORD.search(t.casefold()))),
    ("token shape", redact._TOKEN_SHAPE, lambda t: bool(redact._TOKEN_PREFIX.search(t))),
    ("secret colon", redact._SECRET_COLON, lambda t: ":" in t),
]
PIECES = [
    "-",
    "--",
    "-----",
    "BEGIN ",
    "BEGIN",
    "END ",
    "RSA KEY",
    "://",
    "@",
    ":",
    "=",
    " ",
    "\t",
    "\n",
    "Bearer",
    "bearer",
    "Basic",
    "basic",
    "earer",
    "token",
    "password",
    "PASSWD",
    "Secret",
    "KEY",
    "credential",
    "ſecret",
    "credentıal",
    "\u212aey",
    "ASIA",
    "gho_",
    "github_pat_",
    "gldt-",
    "https",
    "a",
    "Z",
    "9",
    "_",
    "/",
    "+",
    ".",
    "'",
    '"',
    "eyJhbGciOi",
    "AKIA",
    "ghp_",
    "glpat-",
    "dXNlcjpwYXNzd29yZA",
    "&quot;",
    "\\",
]


@given(st.lists(st.sampled_from(PIECES), max_size=30).map("".join))
@settings(max_examples=1000, deadline=None)
def test_no_pattern_matches_text_without_its_literal(text: str) -> None:
    for name, pattern, guard in GUARDED:
        for match in pattern.finditer(text):
            assert guard(match.group(0)) and guard(text), (name, text)


def test_short_lines_hold_no_token_long_enough_to_judge() -> None:
    # _mask_tokens skips lines shorter than _MIN_TOKEN: _mask_token leaves every shorter token as it is
    line = "ghp_" + "A" * (redact._MIN_TOKEN - 5)
    token = redact._TOKEN.fullmatch(line)
    assert token is not None and redact._mask_token(token) == line
    assert redact._mask_tokens(line) == line


@given(st.lists(st.sampled_from(PIECES), max_size=30).map("".join))
@settings(max_examples=1000, deadline=None)
def test_a_cached_judgement_is_the_judgement(text: str) -> None:
    assert redact.redact_text(text) == redact.redact_text.__wrapped__(text)
    assert redact.redact_text(text) == redact.redact_text(text)


def test_the_flag_words_case_folded_cover_what_ignorecase_matches() -> None:
    # IGNORECASE matches a few letters casefold() does not give back (ı for i): the words avoid them
    for word in redact._FLAG_WORDS:
        for letter in word:
            for point in range(0x80, 0x2200):
                if re.fullmatch(re.escape(letter), chr(point), re.IGNORECASE):
                    assert letter in chr(point).casefold(), (word, hex(point))


KEY_NAMES = [
    "password",
    "db-passwd",
    "passphrase",
    "clientSecret",
    "api_token",
    "credentials",
    "apiKey",
    "api-key",
    "accessKey",
    "private_key",
    "serviceKey",
    "client-key",
    "sshKey",
    "signingKey",
    "tlsCert",
    "caBundle",
    "authToken",
    "basicAuth",
    "dockerConfigJson",
    "connectionString",
    "connection_string",
    "sentryDsn",
    "server.pem",
    "tls.key",
    "tls.crt",
    "store.p12",
    "trust.jks",
    "key",
    "pass",
    "pwd",
    "PASSWORD",
    "paſſword",
    "\u212aey",
    "credentıals",
    "author",
    "authority",
    "operator",
    "effect",
    "nodeSelector",
]


@given(st.lists(st.sampled_from([*KEY_NAMES, "_", "-", ".", "x", "Name", "Ref", "i", "ı"]), max_size=6).map("".join))
@settings(max_examples=1000, deadline=None)
def test_a_key_name_without_any_part_cannot_be_a_secret_key(name: str) -> None:
    assert redact.is_secret_key(name) == bool(
        redact._SECRET_KEY.search(name.replace("-", "_")) and not redact._REFERENCE.search(name)
    )


def test_the_secret_key_parts_case_folded_cover_what_ignorecase_matches() -> None:
    letters = {c for part in redact._SECRET_KEY_PARTS for c in part}
    any_letter = re.compile("[" + re.escape("".join(sorted(letters))) + "]", re.IGNORECASE)
    for point in range(0x80, 0x30000):
        char = chr(point)
        if any_letter.fullmatch(char):  # then find which
            assert any(
                re.fullmatch(re.escape(letter), char, re.IGNORECASE) and char.casefold() == letter for letter in letters
            ), hex(point)


@given(
    st.lists(
        st.sampled_from(
            [
                *PIECES,
                "nvidia.com/gpu",
                "team-01",
                "Equal",
                "!",
                "?",
                "*",
                "~",
                "|",
                "(",
                ")",
                "[",
                "]",
                "<",
                ">",
                ",",
                ";",
                "`",
                "&",
                "#",
                "&amp;",
                "\u00a0",
                "\u2003",
            ]
        ),
        max_size=20,
    ).map("".join)
)
@example("dXNlcjpwYXNzd29yZA" * 3 + ".")  # a blob with a full stop: the stripped token is the blob
@settings(max_examples=2000, deadline=None)
def test_a_plain_token_is_redacted_as_free_text_redacts_it(text: str) -> None:
    """_redact_string skips redact_free_text for a value that is one plain token; it must give what it gives."""
    whole = redact.redact_text(text)
    expected = whole if whole == redact.REDACTED else redact.redact_free_text(whole)
    assert redact._redact_string(text) == expected


def test_the_values_of_a_toleration_are_plain_tokens() -> None:
    """The fast path is taken where it pays: a large values file's keys, names and enum values."""
    for text in ("nvidia.com/gpu-pool-000001.reserved.example.com", "team-000001-reserved-capacity", "NoSchedule"):
        assert redact._one_plain_token(text)
    for text in ("a b", "token: x", "x.", "Bearer abcdefgh1234", "a&amp;b", "key=value\n"):
        assert not redact._one_plain_token(text)


# Words made of what an inert word may hold, and of every literal a net needs, in several cases.
INERT_PIECES = [
    "a",
    "Z",
    "9",
    ".",
    "/",
    "_",
    "-",
    "nvidia.com/gpu",
    "team-01",
    "Equal",
    "abcdefghij0123456789",
    "dXNlcjpwYXNzd29yZA",
    "glpat-",
    "GL",
    "ghp_",
    "gH",
    "github_pat_",
    "eyJhbGciOi",
    "EYJ",
    "AKIA",
    "asia",
    "Bearer",
    "EARER",
    "basic",
    "PassW",
    "SECRET",
    "Token",
    "kEy",
    "credent",
]


# Plain words the nets mask, each one a shape needs a literal for.
SHAPED_WORDS = [
    "ghp_" + "a1" * 18,
    "github_pat_" + "a1" * 16,
    "glpat-abcdefghij0123456789",
    "AKIA" + "ABCDEFGHIJ012345",
    "eyJhbGciOi.eyJzdWIiOi.sig",
    "dXNlcjpwYXNzd29yZA" * 3,
]


@given(st.lists(st.sampled_from(INERT_PIECES), min_size=1, max_size=12).map("".join))
@example("nvidia.com/gpu-pool-000001.reserved.example.com")
@example("a" * 39 + "B")
@example("a1" * 30)
@settings(max_examples=3000, deadline=None)
def test_a_word_taken_as_inert_is_one_the_nets_give_back_unchanged(text: str) -> None:
    """_redact_string returns an inert word without judging it: judged, it must come back as it was."""
    for word in (text, *(f"{text}/{shaped}" for shaped in SHAPED_WORDS)):
        if redact._inert(word):
            assert redact._judged(word) == word


def test_words_the_nets_change_are_not_inert() -> None:
    for text in SHAPED_WORDS:
        assert redact._judged(text) != text, text
        assert not redact._inert(text), text
    for text in ("nvidia.com/gpu-pool-000001.reserved.example.com", "team-000001-reserved-capacity", "NoSchedule"):
        assert redact._inert(text)


# Every pattern of the module, by what it does for an inert word (see _inert). A new net must be added here, and
# whatever literal it cannot match without added to _INERT_SPOILER: an inert word is never shown to the nets.
NETS_AN_INERT_WORD_CANNOT_MATCH = {
    "_URL_USERINFO": "needs ://",
    "_SECRET_PAIR": "needs =",
    "_SECRET_COLON": "needs :",
    "_AUTH_HEADER": "needs earer or Basic",
    "_SECRET_ARG": "needs = or white space after a flag word",
    "_PEM": "needs a space",
    "_PEM_BLOCK": "needs a space",
    "_TOKEN_SHAPE": "needs a token prefix",
    "_SECRET_SCHEME_PAIR": "needs earer or Basic",
    "_BLOB": "needs an upper-case letter at _BLOB_LENGTH or more",
}
NOT_NETS = {
    "_SECRET_KEY": "key names",
    "_REFERENCE": "key names",
    "_SECRET_FLAG": "the item before a list item",
    "_SECRET_KEY_PART": "key names",
    "_TOKEN_PREFIX": "a guard of _TOKEN_SHAPE",
    "_FLAG_WORD": "a guard of _SECRET_ARG",
    "_PLAIN_TOKEN": "a guard",
    "_INERT_WORD": "the inert word itself",
    "_INERT_SPOILER": "the inert word itself",
    "_UPPER": "the inert word itself",
    "_FLOW_NAME": "inside a colon pair",
    "_FLOW_PARENT": "inside a colon pair",
    "_TOKEN": "splits free text",
    "_ENTITY": "splits free text",
    "_ESCAPE": "splits free text",
    "_USERINFO": "URLs given as endpoints, not values",
}


def test_every_pattern_of_the_module_is_known_to_the_inert_word() -> None:
    patterns = {name for name, value in vars(redact).items() if isinstance(value, re.Pattern)}
    assert patterns == set(NETS_AN_INERT_WORD_CANNOT_MATCH) | set(NOT_NETS), (
        "a pattern was added or removed: say what an inert word does to it here, and add the literal it needs to "
        "_INERT_SPOILER if an inert word could hold it"
    )


def test_the_inert_word_excludes_what_the_nets_need() -> None:
    # the literals the shapes start with, and the flag words of _SECRET_ARG's alternation, are spoilers
    for prefix in redact._TOKEN_PREFIXES:
        assert redact._INERT_SPOILER.search(prefix.lower())
    words = re.search(r"\((password[^)]*)\)", redact._SECRET_ARG.pattern)
    assert words is not None
    for word in words.group(1).split("|"):
        assert redact._INERT_SPOILER.search(word), word
    for scheme in ("bearer", "basic"):
        assert redact._INERT_SPOILER.search(scheme)
    for needed in ("://", "=", ":", " ", "\t", "\n", "&", "\\", "@", "BEGIN "):
        assert not redact._INERT_WORD.fullmatch(f"a{needed}b"), needed
