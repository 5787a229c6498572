"""Redaction of credentials, applied where values enter the program, so nothing downstream sees them.

Two nets: key names (password, token, tls.key, basicAuth, …) and value shapes (a URL's userinfo in every
form, secret query parameters and `name=value` pairs, `Bearer`/`Basic` credentials, `--token=…` arguments,
PEM blocks, long base64 blobs, JWTs, GitLab and GitHub tokens, AWS access key ids, and in free text
`name: value` pairs), because Helm values hide secrets under any name. A name masks a value only where that
value is the secret: the `key` of a toleration, a selector requirement, a volume item or a secretKeyRef names a
taint, a label or a data key, and stays (see _named_by); only its shape can mask it. `redact_text` judges one value;
`redact_free_text` judges text made of many (a message, an Event, a Markdown body) token by token.
The nets err on the side of masking: a masked value can still be compared, a leaked one cannot be unleaked.
"""

from __future__ import annotations

import functools
import html
import re
from collections.abc import Sequence
from typing import overload

from reconciler.core.jsonvalue import JSONArray, JSONObject, JSONValue

REDACTED = "<redacted>"
# Matched against the name with dashes read as underscores: `apiKey`, `api_key`, `api-key` and `x-api-key` alike.
_SECRET_KEY = re.compile(
    r"(password|passwd|passphrase|secret|token|credential|api_?key|access_?key|private_?key|service_?key|"
    r"client_?key|ssh_?key|signing_?key|cert|cabundle|auth(?!or(s)?$|ority)|docker_?config|connection_?string|dsn|"
    r"\.pem$|\.key$|\.crt$|\.p12$|\.jks$|^key$|^pass$|^pwd$)",
    re.IGNORECASE,
)
# Names that point at a secret rather than hold one (secretName, tokenSecretRef, certFile, passwordPath, and
# imagePullSecrets, which name Secrets in every form: `[{name: …}]` or KAI's `additionalImagePullSecrets: [name]`).
_REFERENCE = re.compile(
    r"(name|ref|file|path|enabled|namespace|mountpath|provider|type|mode|pullsecrets?)$", re.IGNORECASE
)
# The shape patterns start only where a run of their characters starts (the lookbehinds), and re-emit the
# run's `lead`: the leftmost match is the same as without them, but a long run of scheme or flag characters
# (a base64 blob, a hostname) is scanned once instead of once per position -- quadratic before.
# A URL's userinfo in every form: `user:password@`, a token as the user name (`https://TOKEN@host`, as
# GitHub documents it) and a raw `@` inside the password. The authority ends at the first / ? # \ (or white
# space, a quote) and its userinfo at the LAST `@` in it, as urllib3 splits it: cutting at the first `@`
# would leave the password's tail in what is shown.
_URL_USERINFO = re.compile(
    r"(?<![a-z0-9+.-])(?P<lead>[0-9+.-]*)(?P<scheme>[a-z][a-z0-9+.-]*://)"
    r"(?P<userinfo>[^/?#\\\s\"'<>`]*)@",
    re.IGNORECASE,
)
# `?private_token=…`, `&apikey=…`, `NGC_API_KEY=…`: a name the key-name net calls secret, then its value (to
# the next & or # of a query, white space or a quote). A flag (`--token=`) is _SECRET_ARG's.
_SECRET_PAIR = re.compile(r"(?<![\w.-])(?P<name>[A-Za-z_][\w.-]*)=(?P<value>[^\s&#\"'<>`]+)")
# `password: hunter2`, `"password":"x y"`, `X-Api-Key: abc` (YAML, JSON and headers quoted in free text): a
# name the key-name net calls secret (dashes and underscores ignored), a colon, then its value -- a quoted
# one to its closing quote, a bare one to white space or punctuation.
_SECRET_COLON = re.compile(
    r"(?<![\w.-])(?P<q>[\"']?)(?P<name>[A-Za-z_][\w.-]*)(?P=q)(?P<sep>\s*:[ \t]*)"
    r"(?:\"(?P<dq>[^\"\n]*)\"|'(?P<sq>[^'\n]*)'|(?P<bare>[^\s\"'`,;:{}\[\]<>]+))"
)
_SIGNATURE_PARAMS = frozenset({"sig", "signature", "x-amz-signature"})  # presigned URLs (S3, Azure SAS)
# An Authorization header's credential, as a client or server error may quote it. Only a word shaped like a
# credential (see _credential_shaped): "the bearer token" and "Basic settings" are prose.
_AUTH_HEADER = re.compile(r"(?<![\w-])(?P<scheme>[Bb]earer|Basic)(?P<gap>\s+)(?P<credential>[A-Za-z0-9._~+/-]+=*)")
# A flag's value ends at white space or a quote: `"--token=A","--secret B"` is two secrets, not one long one.
# The value is not itself a secret flag: in `-TOKEN --db-password pw` the second flag's value is the secret.
_SECRET_ARG = re.compile(
    r"(?<![\w.-])(?P<lead>[\w.]*)(?P<flag>--?[\w.-]*(password|passwd|secret|token|key|credential)"
    r"[\w.-]*[=\s]+)(?!--?[\w.-]*(?:password|passwd|secret|token|key|credential)[\w.-]*(?:[=\s]|$))"
    r"(\"[^\"]*\"|'[^']*'|[^\s\"']+)",
    re.IGNORECASE,
)
_SECRET_FLAG = re.compile(r"^--?[\w.-]*(password|passwd|secret|token|key|credential)[\w.-]*$", re.IGNORECASE)
# Any run of dashes: a message may quote a PEM block with one leading sign stripped (NVCA gate names).
_PEM = re.compile(r"(?<!-)-+BEGIN [A-Z0-9 ]+-----")
# Tokens known by their own shape, wherever they stand: a JWT (three base64url parts, the first two JSON
# objects, so `eyJ`), GitLab's and GitHub's tokens by their documented prefixes, AWS access key ids. Each starts
# only at a run start (the lookbehind) and its character classes exclude what follows, so a scan is linear.
_TOKEN_SHAPE = re.compile(
    r"(?<![\w-])(?:eyJ[\w-]{4,}\.eyJ[\w-]{4,}\.[\w-]*"
    r"|(?:glpat|gloas|gldt|glrt|glrtr|glcbt|glptt|glft|glimt|glagent|glsoat|glffc|glffct|gltst|glwt)-[\w-]{20,}"
    r"|(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9])"
    r"|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_\w{30,})"
)
_TOKEN_PREFIXES = ("eyJ", "gl", "AKIA", "ASIA", "gh", "github_pat_")  # what each of those shapes starts with
# In _SECRET_ARG's flag, looked for case-folded: IGNORECASE also matches ſ for s, K (Kelvin) for k, ı for i.
_FLAG_WORDS = ("passw", "secret", "token", "key", "credent")
# `token=Bearer abc…`, `auth: Basic dXNl…`: a secret name whose value is an Authorization header's, scheme and
# credential together (the pair net alone would stop at the scheme and leave the credential after it).
_SECRET_SCHEME_PAIR = re.compile(
    r"(?<![\w.-])(?P<name>[A-Za-z_][\w.-]*)(?P<sep>[ \t]*[=:][ \t]*)"
    r"(?P<scheme>[Bb]earer|Basic)(?P<gap>[ \t]+)[A-Za-z0-9._~+/-]+=*"
)
# base64 tokens: long, mixed case and digits, not a path (image digests say sha256: and are lower-case hex)
_BLOB_LENGTH = 40
_BLOB = re.compile(rf"^(?!/)(?=.*[a-z])(?=.*[A-Z])(?=.*[0-9])[A-Za-z0-9+/_-]{{{_BLOB_LENGTH},}}={{0,2}}$")


# A part of each _SECRET_KEY alternative, with no `i` (IGNORECASE matches ı for it, which casefold keeps): a name
# holding none, case-folded, cannot match, and most names of a large file hold none (the pattern's search costs
# ~20 us on a 26-character name, the look-ups well under one).
_SECRET_KEY_PARTS = (
    "pass",
    "secret",
    "token",
    "credent",
    "key",
    "cert",
    "cabundle",
    "auth",
    "docker",
    "connect",
    "dsn",
    ".pem",
    ".crt",
    ".p12",
    ".jks",
    "pwd",
)


def _any_of(literals: tuple[str, ...]) -> re.Pattern[str]:
    """Whether text holds any of `literals`, as one search: `any(x in text for x in …)` cost a generator a value
    (~1.5 us, a third of a large values file's redaction); the search is the same test, made in C."""
    return re.compile("|".join(map(re.escape, literals)))


_TOKEN_PREFIX = _any_of(_TOKEN_PREFIXES)
_FLAG_WORD = _any_of(_FLAG_WORDS)
_SECRET_KEY_PART = _any_of(_SECRET_KEY_PARTS)


@functools.lru_cache(maxsize=4096)  # a file's key names repeat: every toleration has an `operator`
def is_secret_key(name: str) -> bool:
    folded = name.casefold()
    if not _SECRET_KEY_PART.search(folded):
        return False
    return bool(_SECRET_KEY.search(name.replace("-", "_"))) and not _REFERENCE.search(name)


@overload
def redact(value: JSONObject) -> JSONObject: ...
@overload
def redact(value: JSONArray) -> JSONArray: ...
@overload
def redact(value: JSONValue) -> JSONValue: ...


def redact(value: JSONValue) -> JSONValue:
    """A copy of `value` with every credential masked: a value under a credential's name (where that value is
    the secret), and a value with a credential's shape. Nothing else changes."""
    return _redact(value, None)


def _redact(value: JSONValue, parent: str | None) -> JSONValue:
    """`parent`: the key `value` (or the list holding it) stands under, which says what a `key` field is."""
    if isinstance(value, dict):
        named_by = _named_by(value, parent)
        if named_by is not None:
            return _redact_named_entry(value, named_by)
        if (parent or "").lower() in _LABEL_MAPS:  # a label's key names a label, never a secret: values by shape
            return {k: _redact(v, k) for k, v in value.items()}
        return {k: (_mask(v) if isinstance(k, str) and is_secret_key(k) else _redact(v, k)) for k, v in value.items()}
    if isinstance(value, list):
        return _redact_list(value, parent)
    if isinstance(value, str):
        return _redact_string(value)
    return value


# Kubernetes shapes whose `key` field is a name -- a taint's, a label's, a Secret's or ConfigMap's data key --
# never the secret itself: a toleration, a label or node selector requirement, a volume's item (KeyToPath), a
# secretKeyRef/configMapKeyRef. The `key` of any other mapping (`tls: {key: …}`) may be the secret.
_TOLERATION = frozenset({"key", "operator", "value", "effect", "tolerationSeconds"})
_REQUIREMENT = frozenset({"key", "operator", "values"})
_KEY_TO_PATH = frozenset({"key", "path", "mode"})
_KEY_SELECTOR = frozenset({"key", "name", "optional"})
_KEY_LISTS = frozenset({"tolerations", "matchexpressions", "matchfields"})
_TOKEN_REQUEST = frozenset({"audience", "expirationSeconds", "path"})  # a projected serviceAccountToken
# Maps of label keys to label values (at most 63 characters, public to anyone who lists the object): a key like
# `example.com/auth` is a label's name. Annotations are not among them: their values are free text.
_LABEL_MAPS = frozenset({"labels", "matchlabels", "nodeselector"})


def _named_by(entry: JSONObject, parent: str | None) -> str | None:
    """The field that names `entry`'s value when `entry` is one of the Kubernetes shapes that say so: an env
    entry `{name: DB_PASSWORD, value: …}`, a pair `{key: …, value: …}`, a toleration, a selector requirement,
    a KeyToPath or a key selector. None for any other mapping."""
    name, key, fields = entry.get("name"), entry.get("key"), entry.keys()
    if isinstance(name, str) and "value" in entry:
        return "name"
    if not isinstance(key, str):
        return None
    context = (parent or "").lower()
    names = (
        ((fields <= _TOLERATION or fields <= _REQUIREMENT) and (len(fields) > 1 or context in _KEY_LISTS))
        or (fields <= _KEY_TO_PATH and "path" in entry)
        or (fields <= _KEY_SELECTOR and context.endswith("keyref"))
    )
    return "key" if names else None


def _redact_named_entry(entry: JSONObject, named_by: str) -> JSONObject:
    """The naming field shown (unless its text has a credential's shape); `value`/`values` masked when that
    name is a credential's (`DB_PASSWORD`, a taint keyed `api-token`), judged by shape otherwise."""
    name = entry[named_by]
    secret = isinstance(name, str) and is_secret_key(name.replace("_", ""))
    return {
        k: (
            _mask(v) if (secret and k in ("value", "values")) or (k != named_by and is_secret_key(k)) else _redact(v, k)
        )
        for k, v in entry.items()
    }


def redact_at(path: Sequence[str], value: JSONValue) -> JSONValue:
    """`value` as `redact` shows it where it stands in its document, under the names on `path`: how a value read
    back from a `kai-gitops snapshot` file (which redacts kai-config's spec whole) compares with Git's."""
    nested = value
    for name in reversed(path):
        nested = {name: nested}
    shown = redact(nested)
    for name in path:
        assert isinstance(shown, dict)
        shown = shown[name]
    return shown


def redact_free_values(value: JSONValue) -> JSONValue:
    """Every string in `value` judged as free text, keys left alone: for answers whose keys are names (NVCA's
    /healthz components), where the key-name net would mask a component called CertManager."""
    if isinstance(value, dict):
        return {k: redact_free_values(v) for k, v in value.items()}
    if isinstance(value, list):
        return [redact_free_values(v) for v in value]
    return _redact_string(value) if isinstance(value, str) else value


def _redact_string(text: str) -> str:
    """A value judged whole first (a PEM or a blob masks all of it), then word by word: a value may be free
    text (an annotation, an error) with a token inside it."""
    return text if _inert(text) else _judged(text)


def _judged(text: str) -> str:
    whole = redact_text(text)
    if whole == REDACTED or (whole == text and _one_plain_token(text)):
        return whole
    return redact_free_text(whole)


# One _TOKEN with nothing for free text to take apart: no line break or space, no separator, escape, entity,
# colon pair or Authorization scheme, no sentence punctuation at either end. redact_free_text judges such a
# value as its only token and its only line, redact_text again both times, and so gives back what
# redact_text gave (tests/redaction/test_redact_guards.py compares the two). Most strings of a large values file are
# one.
_PLAIN_TOKEN = re.compile(r"[^\s`|()\[\]<>\"',;\\&:]+")
_TOKEN_EDGES = ".:!?*_~="


# A word no net can take anything from: ASCII letters, digits and `./_-`, a letter or digit at both ends, none of
# the literals a shape needs (looked for in any case, the flag words' included), and an upper-case letter only
# when shorter than a blob. Such a word is one plain token that redact_text gives back unchanged, so
# _redact_string returns it without the nets: a large values file's keys and label values are mostly such
# words (tests/redaction/test_redact_guards.py checks it against the nets).
_INERT_WORD = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9./_-]*[A-Za-z0-9])?")
# Looked for in the lower-cased word (IGNORECASE made the search five times slower; the word is ASCII).
_INERT_SPOILER = _any_of(tuple(sorted({x.lower() for x in ("earer", "basic", *_TOKEN_PREFIXES, *_FLAG_WORDS)})))
_UPPER = re.compile("[A-Z]")


def _inert(text: str) -> bool:
    return (
        _INERT_WORD.fullmatch(text) is not None
        and (len(text) < _BLOB_LENGTH or _UPPER.search(text) is None)  # a blob has an upper-case letter
        and _INERT_SPOILER.search(text.lower()) is None
    )


def _one_plain_token(text: str) -> bool:
    return (
        _PLAIN_TOKEN.fullmatch(text) is not None
        and text[0] not in _TOKEN_EDGES
        and text[-1] not in _TOKEN_EDGES
        and not _has_scheme(text)
    )


def _redact_list(items: JSONArray, parent: str | None) -> JSONArray:
    """Also `args: ["--password", "pw"]`: a bare secret flag masks the item after it."""
    out: JSONArray = []
    for i, item in enumerate(items):
        previous = items[i - 1] if i else None
        flagged = isinstance(previous, str) and bool(_SECRET_FLAG.match(previous))
        out.append(REDACTED if flagged and isinstance(item, str) else _redact(item, parent))
    return out


@functools.lru_cache(maxsize=4096)
def redact_text(text: str) -> str:
    """One value judged whole: a PEM block or a base64 blob masks all of it; the other shapes mask their part.

    Cached: judging a value as free text judges it whole again, as its only token and as its only line (five
    times for `nvidia.com/gpu`), and the values of a large file repeat (a toleration's operator and effect)."""
    if ("BEGIN " in text and _PEM.search(text)) or (len(text) >= _BLOB_LENGTH and _BLOB.match(text)):
        return REDACTED
    # each pattern only where the literal it cannot match without is present (see redact_free_text)
    scheme = _has_scheme(text)
    if scheme:
        text = _SECRET_SCHEME_PAIR.sub(_mask_scheme_pair, text)
    if "://" in text and "@" in text:
        text = _URL_USERINFO.sub(_mask_userinfo, text)  # before the token shapes: a URL's userinfo goes whole
    if _TOKEN_PREFIX.search(text):
        text = _TOKEN_SHAPE.sub(REDACTED, text)
    if "=" in text:
        text = _SECRET_PAIR.sub(_mask_pair, text)
    if _has_scheme(text):
        text = _AUTH_HEADER.sub(_mask_credential, text)
    if "-" not in text or not _FLAG_WORD.search(text.casefold()):  # a flag's dash and word
        return text
    return _SECRET_ARG.sub(lambda m: f"{m.group('lead')}{m.group('flag')}{REDACTED}", text)


def _mask_userinfo(match: re.Match[str]) -> str:
    userinfo, scheme = match.group("userinfo"), match.group("scheme")
    # An SSH login name (`ssh://git@host`) is not a credential; any other userinfo may be a token.
    login = scheme.lower().startswith(("ssh:", "git+ssh:")) and ":" not in userinfo
    if not userinfo or userinfo == REDACTED or login:
        return match.group(0)
    return f"{match.group('lead')}{scheme}{REDACTED}@"


def _mask_colon_pairs(text: str) -> str:
    """`name: value` pairs whose name is secret, their values masked. A scan, not `sub`: after a pair whose name
    is not secret the scan resumes at its value, which may hold one (`note: "token: abc"`)."""
    if ":" not in text:  # the pattern's separator
        return text
    out, pos = [], 0
    while match := _SECRET_COLON.search(text, pos):
        value_start = match.end("sep")
        if _is_secret_colon_pair(match):
            quote = "" if match.group("bare") is not None else text[value_start]
            out.append(text[pos:value_start] + quote + REDACTED + quote)
            pos = match.end()
        else:  # resume inside the value (after its opening quote): it may hold a pair itself
            pos, start = value_start + (0 if match.group("bare") is not None else 1), pos
            out.append(text[start:pos])
    return "".join(out) + text[pos:]


def _is_secret_colon_pair(match: re.Match[str]) -> bool:
    bare = match.group("bare")
    value = bare if bare is not None else match.group("dq") if match.group("dq") is not None else match.group("sq")
    if not value or REDACTED in value or (bare or "").lower() in ("bearer", "basic"):  # a header's scheme
        return False
    return _is_secret_param(match.group("name").replace("-", "").replace("_", "")) and not _quotes_a_named_key(match)


# A field name in flow style or JSON (`"operator":`, `effect:`), and the name a `{` stands under (`"tolerations":[`).
_FLOW_NAME = re.compile(r"[\"']?([A-Za-z_][\w.-]*)[\"']?\s*:")
_FLOW_PARENT = re.compile(r"([A-Za-z_][\w.-]*)[\"']?\s*:\s*\[?\s*$")
_FLOW_REACH = 512  # how far around a `key` the enclosing object is looked for: a bound keeps the scan linear


def _quotes_a_named_key(match: re.Match[str]) -> bool:
    """`{"key":"nvidia.com/gpu","operator":"Exists"}` quoted in a message or a command: the `key` of an object
    whose fields are one of the Kubernetes shapes where it is a name (see _named_by), judged as redact does."""
    if match.group("name") != "key":
        return False
    text, start = match.string, match.start()
    opening = text.rfind("{", max(0, start - _FLOW_REACH), start)
    closing = text.find("}", start, start + _FLOW_REACH)
    if opening < 0 or closing < 0 or "}" in text[opening:start]:
        return False
    fields: JSONObject = {name.group(1): "" for name in _FLOW_NAME.finditer(text, opening + 1, closing)}
    parent = _FLOW_PARENT.search(text[max(0, opening - 64) : opening])
    return _named_by(fields | {"key": ""}, parent.group(1) if parent else None) == "key"


def _mask_credential(match: re.Match[str]) -> str:
    credential = match.group("credential")
    if not _credential_shaped(credential):
        return match.group(0)
    return f"{match.group('scheme')}{match.group('gap')}{REDACTED}"


def _credential_shaped(word: str) -> bool:
    """A token or base64, not a word: 8 characters or more, with a digit or symbol, or an upper-case letter
    after the first (`dXNlcjpwYXNz` is base64 of user:pass; `Token` and `settings` are words)."""
    return len(word) >= 8 and (not word.isalpha() or any(c.isupper() for c in word[1:]))


def _mask_scheme_pair(match: re.Match[str]) -> str:
    if not _is_secret_param(match.group("name").replace("-", "").replace("_", "")):
        return match.group(0)
    return f"{match.group('name')}{match.group('sep')}{match.group('scheme')}{match.group('gap')}{REDACTED}"


def _mask_pair(match: re.Match[str]) -> str:
    name, value = match.group("name"), match.group("value")
    if value == REDACTED or not _is_secret_param(name):
        return match.group(0)
    return f"{name}={REDACTED}"


_PEM_BLOCK = re.compile(r"(?<!-)-+BEGIN [A-Z0-9 ]+-----.*?(-----END [A-Z0-9 ]+-----|\Z)", re.DOTALL)
# Runs of text between separators; a backslash escape stays inside the run it escapes.
_TOKEN = re.compile(r"(?:\\.|&#?\w+;|[^\s`|()\[\]<>\"',;\\])+")
_ENTITY = re.compile(r"&#?\w+;")
_ESCAPE = re.compile(r"\\(.)")  # a Markdown backslash escape
_MIN_TOKEN = 12


def redact_free_text(text: str) -> str:
    """Text made of many values (a message, an Event, a Markdown body): PEM blocks, then each token on its
    own (a blob inside a sentence), then each line. A token is judged as a reader will see it, Markdown
    backslash escapes and HTML entities undone, because escaping splits or wraps a value (`abc\\_DEF`,
    `&quot;TOKEN&quot;`) in ways the value-shape patterns would not recognise."""
    # The literal each pattern cannot match without (`BEGIN `, a scheme, a colon) is looked for first: a large
    # values file is a few hundred thousand short strings, and most hold none of them.
    if "BEGIN " in text:
        text = _PEM_BLOCK.sub(REDACTED, text)
    # A `name: value` pair (YAML, JSON, a header) is free text's own shape: one value never holds one.
    # Tokens first: the line-level `--flag=value` pattern takes everything up to the next space, so in
    # `"--token=A","--secret B"` it would swallow `--secret` and leave B; token by token, A goes first.
    # A `name=Bearer credential` pair spans two tokens: masked whole before the text is cut into them.
    lines = [
        _mask_tokens(_SECRET_SCHEME_PAIR.sub(_mask_scheme_pair, line) if _has_scheme(line) else line)
        for line in text.split("\n")
    ]
    return "\n".join(_mask_colon_pairs(redact_text(line)) if line.strip() else line for line in lines)


def _has_scheme(text: str) -> bool:
    """Whether `text` may hold an Authorization scheme (`Bearer`, `Basic`): the patterns that take one need it."""
    return "earer" in text or "Basic" in text


def _mask_tokens(line: str) -> str:
    # a token is part of the line: in a line shorter than _MIN_TOKEN every token is too short to be judged
    return _TOKEN.sub(_mask_token, line) if len(line) >= _MIN_TOKEN else line


def excerpt(text: str, limit: int) -> str:
    """Free text from elsewhere (an error, an answer) as one short line: white space collapsed, redacted,
    then cut to `limit` characters -- in that order, because a token cut in half is no longer recognised."""
    return redact_free_text(" ".join(text.split()))[:limit]


def _mask_token(match: re.Match[str]) -> str:
    raw = match.group(0)
    if len(raw) < _MIN_TOKEN or raw == REDACTED:
        return raw
    masked = redact_text(raw)
    if masked != raw:  # the shape masks its own part (a URL keeps its host)
        return masked
    unescaped = _ESCAPE.sub(r"\1", raw) if "\\" in raw else raw
    for piece in _ENTITY.split(unescaped) if "&" in unescaped else (unescaped,):  # an entity separates values
        plain = html.unescape(piece)
        for candidate in (plain, plain.strip(".:!?*_~=")):  # a sentence's full stop is not part of a token
            if candidate != raw and len(candidate) >= _MIN_TOKEN and redact_text(candidate) != candidate:
                return REDACTED
    return raw


# The endpoint's userinfo up to the LAST `@` of the authority, as urllib3 (and so the client) splits it.
_USERINFO = re.compile(r"^(?P<scheme>[a-z][a-z0-9+.-]*://)[^/?#\\]*@", re.IGNORECASE)


def url_without_userinfo(url: str) -> str:
    """`https://user:password@host:6443/p` as `https://host:6443/p`: the endpoint without its credential.

    For a URL that is an identity (the API server a plan is bound to) rather than text to show: masking
    would keep a marker that changes when the credential does, stripping keeps the endpoint itself."""
    return _USERINFO.sub(lambda m: m.group("scheme"), url, count=1)


def url_without_secrets(url: str) -> str:
    """The URL without its userinfo and without the query parameters that carry a credential
    (`?private_token=…`, a presigned signature): what may be written down (a clone cache's config) or used as a
    key; the other parameters stay, in their order."""
    endpoint = url_without_userinfo(url)
    base, mark, rest = endpoint.partition("?")
    if not mark:
        return endpoint
    query, hash_mark, fragment = rest.partition("#")
    kept = [pair for pair in query.split("&") if pair and not _is_secret_param(pair.partition("=")[0])]
    return base + ("?" + "&".join(kept) if kept else "") + hash_mark + fragment


def _is_secret_param(name: str) -> bool:
    return is_secret_key(name) or name.lower() in _SIGNATURE_PARAMS


def _mask(value: JSONValue) -> JSONValue:
    """Everything under a credential's name masked, but for the fields that point at a secret rather than hold
    one (`secretName`, `path`, `defaultMode`, a volume item's `key`): `secret: {secretName: …, items: …}` and
    `imagePullSecrets: [{name: …}]` are references, and a service account token projection a request."""
    if isinstance(value, dict):
        if value and value.keys() <= _TOKEN_REQUEST:
            return _redact(value, None)
        pointing = _KEY_TO_PATH if "path" in value and value.keys() <= _KEY_TO_PATH else frozenset()
        return {k: (_redact(v, k) if k in pointing or _REFERENCE.search(k) else _mask(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [_mask(v) for v in value]
    return value if value in (None, "", False, True) else REDACTED
