"""The server's variables a bundle gives: SHOW GLOBAL VARIABLES (pt-stalk's ``-variables``, any source's
``meta["variables"]``) or, when no member gives them, those a pt-mysql-summary report prints
(``meta["summary_variables"]``, the first report's), each with the member and line it was read at.

Plain Python: no Django.
"""

from __future__ import annotations

from collections.abc import Iterable

from parsers.base import ParsedSource


def server_variables(sources: Iterable[ParsedSource]) -> tuple[dict[str, str], dict[str, tuple[str, int]]]:
    """``(variables, variables_from)``: name -> value, and for values read from a pt-mysql-summary
    report name -> (member, line); ``variables_from`` is empty when ``-variables`` gave them."""
    variables: dict[str, str] = {}
    summary: dict[str, tuple[str, str, int]] = {}
    for source in sources:
        found = source.meta.get("variables")
        if isinstance(found, dict):
            variables.update({str(k): str(v) for k, v in found.items()})
        reported, lines = source.meta.get("summary_variables"), source.meta.get("variable_lines", {})
        if isinstance(reported, dict) and isinstance(lines, dict) and not summary:
            summary = {str(k): (str(v), source.member, int(lines.get(k, 0))) for k, v in reported.items()}
    if variables or not summary:
        return variables, {}
    return (
        {name: value for name, (value, _, _) in summary.items()},
        {name: (member, line) for name, (_, member, line) in summary.items()},
    )
