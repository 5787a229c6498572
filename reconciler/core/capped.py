"""An HTTP body read with a bound on what it inflates to: the cluster reader's answers and an OPA server's."""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Mapping
from typing import Protocol

CHUNK = 256 * 1024   # how much of a (compressed) body is read at a time


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
    body = read_capped(response.stream(CHUNK, decode_content=False), response.headers.get("Content-Encoding", ""),
                       max_bytes)
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
