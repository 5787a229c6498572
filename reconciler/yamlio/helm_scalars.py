"""How Helm (go-yaml v2, then JSON) reads plain scalars and keys: shared by both YAML readers of yamlio.document."""

from __future__ import annotations

# go-yaml v2 resolve table: plain scalars that Helm reads as booleans (besides true/false).
HELM_TRUE = frozenset({"y", "Y", "yes", "Yes", "YES", "on", "On", "ON"})
HELM_FALSE = frozenset({"n", "N", "no", "No", "NO", "off", "Off", "OFF"})


def helm_plain_string(text: str) -> str | bool:
    """A plain (unquoted) string as Helm reads it: y/yes/on… are booleans."""
    if text in HELM_TRUE:
        return True
    if text in HELM_FALSE:
        return False
    return text


def go_integer(value: int) -> int | float:
    """Go decodes values numbers as int64 or float64: anything wider only survives as a float."""
    return value if -(2**63) <= value < 2**63 else float(value)


def helm_key(key: object) -> str:
    """Helm's values are JSON objects: every key becomes a string (`1:` → "1", `on:` → "true", `~:` → "null")."""
    if isinstance(key, bool):
        return "true" if key else "false"
    return "null" if key is None else str(key)
