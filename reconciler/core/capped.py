"""An HTTP body read with a bound on what it inflates to: the cluster reader's answers and an OPA server's."""

from __future__ import annotations

import zlib
from collections.abc import Iterable


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
