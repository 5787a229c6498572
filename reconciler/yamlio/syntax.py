"""YAML syntax errors as a person fixes them: what is wrong, where the mistake is, and what to do.

The parser's own text names its state ("while scanning a simple key … could not find expected ':'") and
marks where it noticed, often the line after the mistake. The common errors are matched on that text and
placed where the mistake is: an unclosed quote or bracket at its opening, a key without ':' on its own
line. Anything not matched keeps the parser's words, on one line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class SyntaxProblem:
    message: str  # without the "invalid YAML: " the caller puts first
    hint: str
    line: int | None  # 1-based; None when the parser gave no position
    column: int | None


@dataclass(frozen=True)
class _Parsed:
    """The parser's error: its problem and context text, and both marks (0-based line, column)."""

    problem: str
    context: str
    at: tuple[int, int] | None
    opened: tuple[int, int] | None  # the context mark: where the construct being parsed began
    text: str

    def line_text(self, mark: tuple[int, int]) -> str:
        lines = self.text.splitlines()
        return lines[mark[0]] if mark[0] < len(lines) else ""


def describe(exc: Exception, text: str) -> SyntaxProblem:
    parsed = _Parsed(
        str(getattr(exc, "problem", None) or ""),
        str(getattr(exc, "context", None) or ""),
        _mark(getattr(exc, "problem_mark", None)),
        _mark(getattr(exc, "context_mark", None)),
        text,
    )
    if type(exc).__name__ == "ReaderError":
        return _control_character(exc, text)
    for pattern, explain in _EXPLAINED:
        found = pattern.search(parsed.problem)
        if found:
            problem = explain(parsed, found)
            if problem is not None:
                return problem
    return _parser_words(exc, parsed)


def _mark(mark: object) -> tuple[int, int] | None:
    line, column = getattr(mark, "line", None), getattr(mark, "column", None)
    return (line, column) if isinstance(line, int) and isinstance(column, int) else None


def _at(mark: tuple[int, int] | None, message: str, hint: str) -> SyntaxProblem:
    if mark is None:
        return SyntaxProblem(message, hint, None, None)
    return SyntaxProblem(message, hint, mark[0] + 1, mark[1] + 1)


def _line_of(mark: tuple[int, int] | None) -> str:
    return f"line {mark[0] + 1}" if mark else "above"


def _tab(p: _Parsed, _found: re.Match[str]) -> SyntaxProblem:
    if p.at is not None and not p.line_text(p.at)[: p.at[1]].strip():
        return _at(p.at, "tabs are not allowed for indentation", "indent with spaces")
    return _at(p.at, "a tab cannot separate YAML tokens here", "use spaces instead of the tab")


def _cannot_start(p: _Parsed, found: re.Match[str]) -> SyntaxProblem:
    char = found.group(1)
    return _at(p.at, f"'{char}' cannot start a plain YAML value", f'quote the value, e.g. "{char}…"')


def _mapping_value(p: _Parsed, _found: re.Match[str]) -> SyntaxProblem:
    before = p.line_text(p.at)[: p.at[1]] if p.at else ""
    if ": " in before or before.rstrip().endswith(":"):
        return _at(
            p.at, "a value contains ': ', which YAML reads as the start of another key", "put the value in quotes"
        )
    return _at(
        p.at,
        "this key is indented deeper than the key above it, which already has a value",
        "line it up with its sibling keys",
    )


def _no_colon(p: _Parsed, _found: re.Match[str]) -> SyntaxProblem:
    return _at(
        p.opened or p.at,
        "this line has no ':' but sits among the keys of a mapping",
        "write it as 'key: value', or indent it deeper if it continues the value above",
    )


def _block_end(p: _Parsed, found: re.Match[str]) -> SyntaxProblem:
    token = found.group(1)
    start = _line_of(p.opened)
    if "block collection" in p.context and token == "?":
        return _at(
            p.at,
            f"a mapping key where the list starting at {start} expects '- ' items",
            "start it with '- ', or indent it like the key that holds the list",
        )
    if token == "-":
        return _at(
            p.at,
            f"a list item where the mapping starting at {start} expects a key",
            "indent the list under the key it belongs to",
        )
    line = p.line_text(p.at) if p.at else ""
    if token == "<scalar>" and p.at and line[: p.at[1]].strip():
        return _at(p.at, "unexpected text after the value", "quote the whole value")
    return _at(
        p.at,
        f"this line is indented differently from the keys of the mapping starting at {start}",
        "indent it exactly like the keys it belongs with",
    )


def _flow(p: _Parsed, found: re.Match[str]) -> SyntaxProblem:
    close = found.group(1)
    kind = "list" if close == "]" else "mapping"
    opening = "[" if close == "]" else "{"
    if p.opened and p.at and (p.at[0] > p.opened[0] or found.group(2) == "<stream end>"):
        return _at(
            p.opened,
            f"the '{opening}' opened here is not closed",
            f"close it with '{close}', or quote a value inside that contains ',', ':' or brackets",
        )
    return _at(
        p.at,
        f"expected ',' or '{close}' in this {opening}…{close} {kind}",
        "quote a value that contains ':', ',' or brackets",
    )


def _unclosed_quote(p: _Parsed, _found: re.Match[str]) -> SyntaxProblem | None:
    if "quoted scalar" not in p.context:
        return None
    quote = p.line_text(p.opened)[p.opened[1] : p.opened[1] + 1] if p.opened else "'"
    inside = "''" if quote == "'" else '\\"'
    return _at(
        p.opened or p.at,
        f"the {quote} opened here is never closed",
        f"add the closing {quote}; a {quote} inside the value is written {inside}",
    )


def _undefined_alias(p: _Parsed, found: re.Match[str]) -> SyntaxProblem:
    name = found.group(1)
    return _at(
        p.at,
        f"alias '*{name}' refers to no anchor '&{name}' before it",
        f"define '&{name}' earlier in this file, or quote the value if '*' is meant literally",
    )


def _entry_here(p: _Parsed, _found: re.Match[str]) -> SyntaxProblem:
    return _at(
        p.at,
        "a list item cannot start on the same line as its key",
        "put '- item' on the next line, indented under the key",
    )


def _escape(p: _Parsed, found: re.Match[str]) -> SyntaxProblem:
    return _at(
        p.at,
        f"'\\{found.group(1)}' is not an escape in a double-quoted string",
        "use single quotes, or write '\\\\' for a backslash",
    )


def _block_header(p: _Parsed, _found: re.Match[str]) -> SyntaxProblem:
    return _at(
        p.at,
        "only '-', '+' or a digit may follow the '|' or '>' of a block value",
        "start the text on the next line, indented",
    )


def _name_missing(p: _Parsed, _found: re.Match[str]) -> SyntaxProblem | None:
    if "alias" not in p.context and "anchor" not in p.context:
        return None
    sign = "*" if "alias" in p.context else "&"
    return _at(
        p.opened or p.at, f"'{sign}' must be followed by a name", f"quote the value if '{sign}' is meant literally"
    )


def _no_content(p: _Parsed, found: re.Match[str]) -> SyntaxProblem | None:
    if found.group(1) == "<document end>":  # ruamel's own bug on a repeated `...`: its words, as reported
        return None
    what = "the end of the file" if found.group(1) == "<stream end>" else f"'{found.group(1)}'"
    return _at(p.at, f"a value is missing here (found {what})", "complete the value, or quote it")


def _control_character(exc: Exception, text: str) -> SyntaxProblem:
    position = getattr(exc, "position", None)
    char = getattr(exc, "character", None)
    if not isinstance(position, int):
        return SyntaxProblem("a character YAML does not allow", "delete it", None, None)
    line = text.count("\n", 0, position)
    column = position - (text.rfind("\n", 0, position) + 1)
    code = f"U+{char:04X}" if isinstance(char, int) else "a character"
    return _at(
        (line, column),
        f"control character {code} is not allowed in YAML",
        "delete it, or write it as an escape inside double quotes",
    )


def _parser_words(exc: Exception, p: _Parsed) -> SyntaxProblem:
    # ruamel's own bugs raise bare AssertionError/NotImplementedError, some with no message at all
    problem = p.problem or next(iter(str(exc).splitlines()), "") or f"the YAML parser failed ({type(exc).__name__})"
    message = problem + (f" ({p.context})" if p.context else "")
    return _at(p.at or p.opened, message, "fix the YAML syntax")


_EXPLAINED = (
    (re.compile(r"found character '\\t' that cannot start any token"), _tab),
    (re.compile(r"found character '(.)' that cannot start any token"), _cannot_start),
    (re.compile(r"^mapping values are not allowed here"), _mapping_value),
    (re.compile(r"could not find expected ':'"), _no_colon),
    (re.compile(r"expected <block end>, but found '([^']*)'"), _block_end),
    (re.compile(r"expected ',' or '([\]}])', but got '([^']*)'"), _flow),
    (re.compile(r"found unexpected end of stream"), _unclosed_quote),
    (re.compile(r"found undefined alias '([^']*)'"), _undefined_alias),
    (re.compile(r"^sequence entries are not allowed here"), _entry_here),
    (re.compile(r"found unknown escape character '(.)'"), _escape),
    (re.compile(r"expected chomping or indentation indicators"), _block_header),
    (re.compile(r"expected alphabetic or numeric character"), _name_missing),
    (re.compile(r"expected the node content, but found '([^']*)'"), _no_content),
)
