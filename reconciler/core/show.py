"""How a value is shown to people: one formatter for plans, Events, findings' messages and every text format.

Floats are printed as Go's `%v` prints a float64 (`strconv.FormatFloat(x, 'g', -1, 64)`), so a predicted
NVCA message matches NVCA's bytes and a quota reads the same in every output; an absent value is `<none>`.
"""

from __future__ import annotations

import math
from decimal import Decimal

import orjson

NONE = "<none>"


def show_value(value: object, *, quote_strings: bool = False) -> str:
    """`<none>`, a float as Go prints it, a string as it is (as JSON with `quote_strings`: a plan shows
    `"True"` apart from `true`), a boolean, mapping or list as JSON writes it (kai-config fields), anything
    else as str() gives it."""
    if value is None:
        return NONE
    if isinstance(value, bool | dict | list):
        return orjson.dumps(value).decode()
    if isinstance(value, float):
        return format_go_float(value)
    if quote_strings and isinstance(value, str):
        return orjson.dumps(value).decode()
    return str(value)


def format_go_float(x: float) -> str:
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "+Inf" if x > 0 else "-Inf"
    if x == 0:
        return "-0" if math.copysign(1.0, x) < 0 else "0"
    # repr() is the shortest round-tripping form, exactly the digits Go's shortest mode picks.
    sign, digits, exponent = Decimal(repr(x)).normalize().as_tuple()
    text = "".join(map(str, digits))
    point = len(text) + int(exponent)  # position of the decimal point relative to the digits
    exp = point - 1
    prefix = "-" if sign else ""
    if exp < -4 or exp >= 6:  # Go switches to %e at these exponents in shortest mode
        mantissa = text[0] + ("." + text[1:] if len(text) > 1 else "")
        return f"{prefix}{mantissa}e{'-' if exp < 0 else '+'}{abs(exp):02d}"
    if point <= 0:
        return f"{prefix}0.{'0' * -point}{text}"
    if point >= len(text):
        return f"{prefix}{text}{'0' * (point - len(text))}"
    return f"{prefix}{text[:point]}.{text[point:]}"


# Free text from outside (a cluster's answers, a policy's message) can be megabytes; every output format
# would copy it whole. 8,192 characters keeps the longest real message whole (NVCA-H-003 quoting NVCA's
# errors is ~1 KB) and stays far under every format's own limits.
MAX_TEXT = 8192


def truncate_text(text: str, limit: int = MAX_TEXT) -> str:
    """`text`, or its first part marked `… [truncated, N bytes]` (N: the UTF-8 bytes cut) within `limit`
    characters; what this returns is returned unchanged again, so a re-read report keeps the same text."""
    if len(text) <= limit:
        return text
    total = len(text.encode("utf-8", "surrogatepass"))
    cut = limit
    while True:  # the marker's length depends on where the cut falls: two rounds settle it
        marker = f"… [truncated, {total - len(text[:cut].encode('utf-8', 'surrogatepass')):,} bytes]"
        if cut + len(marker) <= limit or cut == 0:
            return text[:cut] + marker
        cut = max(0, limit - len(marker))
