"""Input read and parsed within bounds: an HTTP body by what it inflates to (the cluster reader's answers and an
OPA server's), an input file by its bytes (reports, plans), and JSON by how deep it nests.

Every reader of a file or an answer goes through here, so that none holds more than its cap, none waits on a
FIFO nobody writes, and none hands the code above a value nested deeper than it can walk.
"""

from __future__ import annotations

import os
import re
import stat
import sys
import zlib
from collections.abc import Iterable, Iterator, Mapping
from typing import Protocol

import orjson

from reconciler.core.errors import UserError
from reconciler.core.files import held_descriptor
from reconciler.core.jsonvalue import JSONValue

CHUNK = 256 * 1024  # how much of a (compressed) body is read at a time
# Containers one inside another. The code that reads parsed values walks them recursively (redaction, the
# formats, the differ), as Python's stack allows about a thousand frames; orjson alone stops only at 1,024, the
# standard json module not at all before RecursionError. The deepest input of the project (a CRD's schema inside
# a List, or inside an audit Event) nests about 35 levels; the YAML readers hold the same limit.
MAX_JSON_DEPTH = 100


class AnswerTooLarge(Exception):
    """An answer past its byte limit (after decompression); reading stopped there."""

    def __init__(self, status: int) -> None:
        super().__init__(status)
        self.status = status


class StreamedResponse(Protocol):
    """What both readers hold: a urllib3 response whose body has not been read yet."""

    @property
    def status(self) -> int: ...
    @property
    def headers(self) -> Mapping[str, str]: ...
    def stream(self, amt: int | None = ..., decode_content: bool | None = ...) -> Iterable[bytes]: ...


def read_response(response: StreamedResponse, max_bytes: int) -> bytes:
    """The body of `response`, decompressed, at most `max_bytes`; raises AnswerTooLarge past it (the caller
    closes the connection: the rest is never read)."""
    body = read_capped(
        response.stream(CHUNK, decode_content=False), response.headers.get("Content-Encoding", ""), max_bytes
    )
    if body is None:
        raise AnswerTooLarge(response.status)
    return body


def read_capped(chunks: Iterable[bytes], encoding: str, max_bytes: int) -> bytes | None:
    """The body, decompressed (gzip, which is all we ask for, or identity), or None past `max_bytes`.

    Decompressed here, a bounded slice at a time, not by urllib3: what a compressed chunk inflates to is
    never held whole, so a gzip bomb costs `max_bytes`, not its expansion."""
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS) if encoding.strip().lower() in ("gzip", "x-gzip") else None
    parts: list[bytes] = []
    size = 0
    for chunk in chunks:
        while chunk:
            if inflater is None:
                data, chunk = chunk, b""
            else:
                data = inflater.decompress(chunk, max_bytes - size + 1)
                chunk = inflater.unconsumed_tail
            size += len(data)
            if size > max_bytes:
                return None
            parts.append(data)
    if inflater is not None:
        parts.append(inflater.flush())
    return b"".join(parts)


def read_input(file: str, max_bytes: int, what: str) -> bytes:
    """The bytes of the input `file` names ('-': stdin), at most `max_bytes`; a UserError naming the file past
    them, or when it cannot be read.

    A regular file is read to the cap; so is a stream this process already holds (`-`, `/dev/stdin`, the
    `/dev/fd/63` of a shell's `<(command)`), whatever it is (a pipe, a terminal). A FIFO or a device named by
    its path is refused before it is opened: opening a FIFO nobody writes blocks for ever, and a device such as
    `/dev/zero` never ends."""
    try:
        if file == "-":  # sys.stdin, not descriptor 0: what a test runner (or an embedding program) gives
            return _capped_stream(sys.stdin.buffer, file, max_bytes, what)
        held = held_descriptor(file)
        if held is None:
            _refuse_special(os.stat(file).st_mode, file, what)  # stat first: opening some devices acts
            # O_NONBLOCK: swapped for a FIFO since the stat, the open still returns; fstat then refuses it
            fd = os.open(file, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
            try:
                _refuse_special(os.fstat(fd).st_mode, file, what)
            except UserError:
                os.close(fd)
                raise
        else:
            fd = os.dup(held)
        with os.fdopen(fd, "rb", buffering=0) as stream:
            return _capped_stream(stream, file, max_bytes, what)
    except OSError as exc:
        raise UserError(f"cannot read the {what}: {exc.strerror or exc}", where=file) from None


class _Readable(Protocol):
    def read(self, size: int = ..., /) -> bytes | None: ...


def _capped_stream(stream: _Readable, file: str, max_bytes: int, what: str) -> bytes:
    body = read_capped(iter(lambda: stream.read(CHUNK) or b"", b""), "", max_bytes)
    if body is None:
        raise UserError(
            f"{what} is over the {max_bytes:,} byte limit; reading stopped there",
            where=file,
            hint=f"pass the {what} a kai-gitops run wrote, not another file or stream",
        )
    return body


def _refuse_special(mode: int, file: str, what: str) -> None:
    if stat.S_ISFIFO(mode) or stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        kind = "a FIFO" if stat.S_ISFIFO(mode) else "a device"
        raise UserError(
            f"{what} is {kind}, not a file", where=file, hint="pass a regular file, or `-` to read it from stdin"
        )


class TooDeep(Exception):
    """JSON nested deeper than MAX_JSON_DEPTH; `offset` is where the first container past it starts."""

    def __init__(self, offset: int) -> None:
        super().__init__(offset)
        self.offset = offset


def load_json(raw: bytes, max_depth: int = MAX_JSON_DEPTH) -> JSONValue:
    """`raw` parsed (orjson: its errors are JSONDecodeError, a ValueError with `lineno` and `colno`); TooDeep
    when it nests deeper than `max_depth`, found before it is parsed."""
    offset = too_deep_at(raw, max_depth)
    if offset is not None:
        raise TooDeep(offset)
    value: JSONValue = orjson.loads(raw)
    return value


def line_at(raw: bytes, offset: int) -> int:
    return raw.count(b"\n", 0, offset) + 1


# A JSON string (escapes included), or one bracket: what decides the nesting.
_STRING = rb'"[^"\\]*(?:\\.[^"\\]*)*"'
_STRINGS = re.compile(_STRING, re.DOTALL)
_TOKENS = re.compile(_STRING + rb"|[\[\]{}]", re.DOTALL)
_INNERMOST = re.compile(rb"\[\]|\{\}")
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")


def too_deep_at(raw: bytes, max_depth: int = MAX_JSON_DEPTH) -> int | None:
    """The offset of the first container nested deeper than `max_depth`, or None.

    At C speed for the common case: strings are cut out, the brackets kept, and innermost pairs removed once per
    level (real input nests a dozen levels: a dozen passes); only text that fails that is walked token by token
    to find where. Text that is not JSON passes where its brackets never nest too deep; its parser refuses it."""
    if raw.count(b"[") + raw.count(b"{") <= max_depth:
        return None
    brackets = _STRINGS.sub(b"", raw).translate(None, _NOT_BRACKETS)
    for _ in range(max_depth):
        if not brackets:
            return None
        brackets = _INNERMOST.sub(b"", brackets)
    return _first_too_deep(_TOKENS.finditer(raw), max_depth) if brackets else None


def _first_too_deep(tokens: Iterator[re.Match[bytes]], max_depth: int) -> int | None:
    depth = 0
    for token in tokens:
        kind = token.group()
        if kind in (b"[", b"{"):
            depth += 1
            if depth > max_depth:
                return token.start()
        elif kind in (b"]", b"}"):
            depth -= 1
    return None
