"""Go's `%v` for float64 (`strconv.FormatFloat(x, 'g', -1, 64)`), so predicted messages match NVCA's bytes."""

from __future__ import annotations

import math
from decimal import Decimal


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
    point = len(text) + int(exponent)     # position of the decimal point relative to the digits
    exp = point - 1
    prefix = "-" if sign else ""
    if exp < -4 or exp >= 6:             # Go switches to %e at these exponents in shortest mode
        mantissa = text[0] + ("." + text[1:] if len(text) > 1 else "")
        return f"{prefix}{mantissa}e{'-' if exp < 0 else '+'}{abs(exp):02d}"
    if point <= 0:
        return f"{prefix}0.{'0' * -point}{text}"
    if point >= len(text):
        return f"{prefix}{text}{'0' * (point - len(text))}"
    return f"{prefix}{text[:point]}.{text[point:]}"
