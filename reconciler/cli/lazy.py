"""The command table behind `kai-gitops`: command names known up front, their modules imported on first use.

`LazyCommands` is the group's `commands` mapping, so click's own lookups (running a command, "Did you mean",
`list_commands`/`get_command`) work unchanged; `LazyGroup` lists the commands in `--help` from the table's
one-line help, so the top-level help imports no command module.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, MutableMapping
from dataclasses import dataclass

import click

from reconciler.core.lazy import LazyRef


@dataclass(frozen=True)
class LazyCommand:
    """An entry of the command table, in the idiom of every extension point (`reconciler/core/lazy.py`)."""

    command: LazyRef[click.Command]  # the click command, imported when it runs or shows its help
    summary: str  # the first paragraph of the command's help: what `kai-gitops --help` shortens

    def load(self) -> click.Command:
        return self.command.load()


class LazyCommands(MutableMapping[str, click.Command]):
    """Command name -> command, each imported the first time it is looked up."""

    def __init__(self, table: Mapping[str, LazyCommand]) -> None:
        self._table = dict(table)
        self._loaded: dict[str, click.Command] = {}

    def __getitem__(self, name: str) -> click.Command:
        if name not in self._loaded:
            self._loaded[name] = self._table[name].load()
        return self._loaded[name]

    def __setitem__(self, name: str, command: click.Command) -> None:
        self._loaded[name] = command

    def __delitem__(self, name: str) -> None:
        if name not in self._table and name not in self._loaded:
            raise KeyError(name)
        self._table.pop(name, None)
        self._loaded.pop(name, None)

    def __iter__(self) -> Iterator[str]:
        return iter(self._names())

    def __len__(self) -> int:
        return len(self._names())

    def __contains__(self, name: object) -> bool:
        return name in self._table or name in self._loaded

    def hidden(self, name: str) -> bool:
        return name in self._loaded and self._loaded[name].hidden

    def short_help(self, name: str, limit: int) -> str:
        """The command's line in the group's help, as click shortens it, without importing the command."""
        if name in self._loaded:
            return self._loaded[name].get_short_help_str(limit)
        return click.Command(name, help=self._table[name].summary).get_short_help_str(limit)

    def _names(self) -> dict[str, None]:
        return dict.fromkeys([*self._table, *self._loaded])


class LazyGroup(click.Group):
    """A group over `LazyCommands`: its help lists the commands as click would, from the table."""

    commands: LazyCommands

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        shown = [name for name in self.list_commands(ctx) if not self.commands.hidden(name)]
        if shown:
            limit = formatter.width - 6 - max(len(name) for name in shown)  # click's own spacing
            with formatter.section("Commands"):
                formatter.write_dl([(name, self.commands.short_help(name, limit)) for name in shown])
