"""Kubernetes resource quantities (`500m`, `4Gi`, `1e3`) as exact decimals, as apimachinery parses them."""

from __future__ import annotations

import re
from decimal import Decimal, DecimalException

# Far past any quantity a cluster holds (exabytes are 1e18) and still finite where facts turn it into a float.
_LARGEST = Decimal("1e30")
_SUFFIX = {
    "n": Decimal("1e-9"),
    "u": Decimal("1e-6"),
    "m": Decimal("1e-3"),
    "": Decimal(1),
    "k": Decimal("1e3"),
    "M": Decimal("1e6"),
    "G": Decimal("1e9"),
    "T": Decimal("1e12"),
    "P": Decimal("1e15"),
    "E": Decimal("1e18"),
    "Ki": Decimal(2**10),
    "Mi": Decimal(2**20),
    "Gi": Decimal(2**30),
    "Ti": Decimal(2**40),
    "Pi": Decimal(2**50),
    "Ei": Decimal(2**60),
}
_QUANTITY = re.compile(r"([+-]?(?:\d+\.?\d*|\.\d+))((?:[eE][+-]?\d+)|Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]?)")


def parse_quantity(value: object) -> Decimal:
    """A quantity as the API server stores it (a string, or a number in a hand-written file); ValueError else."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise ValueError(f"{value!r} is not a resource quantity")
    text = str(value).strip()
    match = _QUANTITY.fullmatch(text)
    if match is None:
        raise ValueError(f"{text!r} is not a resource quantity (like 500m, 4Gi, 2)")
    number, suffix = match.groups()
    try:
        base = Decimal(number)
        amount = base * _SUFFIX[suffix] if suffix in _SUFFIX else base * Decimal(f"1{suffix}")
    except DecimalException:  # also Overflow: 1e999999999
        raise ValueError(f"{text!r} is not a resource quantity (like 500m, 4Gi, 2)") from None
    if not amount.is_finite() or abs(amount) > _LARGEST:
        raise ValueError(f"{text!r} is larger than any resource quantity Kubernetes accepts")
    return amount
