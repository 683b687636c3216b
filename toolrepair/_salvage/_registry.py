"""The built-in dialects, in precedence order (where two read the same marker, the earlier
one reads first, and the payload decides)."""

from __future__ import annotations

from . import json_family, token_family, xml_family
from ._base import Dialect
from .bare_json import BARE_JSON
from .function_tag import FUNCTION_TAG
from .tag import AttributeTagDialect

__all__ = ["BUILTIN", "DIALECTS", "OPT_IN", "by_name", "opt_in"]

HERMES = AttributeTagDialect("hermes", open="<tool_call>", close="</tool_call>")
# The same call object (or name attribute) in a `<tool_use>` wrapper.
TOOL_USE = AttributeTagDialect("tool_use", open="<tool_use>", close="</tool_use>")

# Marked dialects first (the families' own precedence inside), the markerless `json` last:
# where a `{` sits inside another dialect's payload, that dialect has consumed it already.
BUILTIN: tuple[Dialect, ...] = (
    HERMES,
    TOOL_USE,
    FUNCTION_TAG,
    *token_family.DIALECTS,
    *xml_family.DIALECTS,
    *json_family.DIALECTS,
    BARE_JSON,
)

DIALECTS: tuple[str, ...] = tuple(d.name for d in BUILTIN)

# Reachable by name only (``dialects=["react"]``), never in the default set: an agent
# framework's own text protocol, which a reply in prose can imitate (``Action: ...``, a tag
# named like a tool). Not in ``BUILTIN``, so the default scan never looks for their markers,
# and their modules load only when one is named (the default path imports nothing more).
OPT_IN: tuple[str, ...] = ("react", "cline")

_BY_NAME = {d.name: d for d in BUILTIN}


def opt_in(name: str) -> Dialect:
    """The opt-in dialect ``name``, its module imported on first use (KeyError: none)."""
    if name == "react":
        from .react import REACT

        return REACT
    if name == "cline":
        from .cline import CLINE

        return CLINE
    raise KeyError(name)


def by_name(name: str) -> Dialect:
    found = _BY_NAME.get(name)
    if found is not None:
        return found
    try:
        return opt_in(name)
    except KeyError:
        raise ValueError(
            f"unknown dialect {name!r}; built-in dialects: {list(DIALECTS)}; opt-in: {list(OPT_IN)}"
        ) from None
