"""One idiom for every extension point (output formats, report targets, commands): a typed table of entries,
each naming its code as `package.module` or `package.module:attribute`, imported the first time it is used.

A run imports only what it uses, so `kai-gitops --help` imports no command and `-o text` no SARIF schema. The
string cannot be checked by mypy, so each table also imports its modules under `TYPE_CHECKING` and binds
what it names to the entry's protocol (mypy checks each function against it), and `tests/project/test_registries.py`
holds those bindings equal to the table's strings and loads every entry, checking its type at run time too
(the only check for the click commands, whose decorated types mypy cannot follow around the cli package).
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module
from typing import Generic, TypeVar, cast

T = TypeVar("T")


@dataclass(frozen=True)
class LazyRef(Generic[T]):
    """`package.module` (the module itself) or `package.module:attribute`, of type `T` once loaded."""

    target: str

    @property
    def module(self) -> str:
        return self.target.partition(":")[0]

    def load(self) -> T:
        module, _, attribute = self.target.partition(":")
        loaded: object = import_module(module)
        if attribute:
            loaded = getattr(loaded, attribute)
        return cast(T, loaded)  # the table's TYPE_CHECKING bindings and tests/project/test_registries.py check the type
