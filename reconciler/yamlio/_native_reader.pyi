# The native YAML reader (_native_reader.c): see reconciler/yamlio/libyaml.py.
from collections.abc import Callable

from reconciler.core.jsonvalue import JSONScalar, JSONValue
from reconciler.core.refs import YamlPath

def read(
    text: bytes,
    max_nodes: int,
    max_depth: int,
    not_strings: frozenset[str],
    number_starts: bytes,
    plain_scalar: Callable[[str], JSONScalar],
    block_end: Callable[[int, int, int], int],
    /,
) -> tuple[list[tuple[JSONValue, dict[YamlPath, tuple[int, int]]]], dict[int, int]] | None: ...
