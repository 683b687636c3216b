"""The built-in dialects, in precedence order (where two read the same marker, the earlier
one reads first, and the payload decides)."""

from __future__ import annotations

from . import json_family, token_family, xml_family
from ._base import Dialect
from .bare_json import BARE_JSON
from .cline import CLINE
from .function_tag import FUNCTION_TAG
from .react import REACT
from .tag import AttributeTagDialect

__all__ = ["BUILTIN", "DIALECTS", "OPT_IN", "by_name"]

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
# named like a tool). Not in ``BUILTIN``, so the default scan never looks for their markers.
OPT_IN: tuple[Dialect, ...] = (REACT, CLINE)

_BY_NAME = {d.name: d for d in (*BUILTIN, *OPT_IN)}


def by_name(name: str) -> Dialect:
    try:
        return _BY_NAME[name]
    except KeyError:
        raise ValueError(
            f"unknown dialect {name!r}; built-in dialects: {list(DIALECTS)}; opt-in: {[d.name for d in OPT_IN]}"
        ) from None
