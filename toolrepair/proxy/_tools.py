"""The tools one request offers: its allowlist, schemas and tool_choice, read from the body."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from .._registry import ToolRegistry
from .._salvage import ModelProfile
from .._types import ToolSpec
from ._errors import ProxyError
from ._model import EVERY_DIALECT

__all__ = ["EMPTY_SCHEMA", "Choice", "RequestTools", "bad_request", "offered_tools", "request_object", "request_tools"]

_EMPTY_SCHEMA: Mapping[str, Any] = {"type": "object", "properties": {}}
EMPTY_SCHEMA = _EMPTY_SCHEMA  # what a tool without a schema is repaired against, on every route

Choice = Literal["auto", "none", "required", "named"]


@dataclass(frozen=True, slots=True)
class RequestTools:
    """What a request lets the proxy repair against.

    ``registry`` is None when nothing may be repaired or salvaged (no tools, ``tool_choice``
    ``"none"``). ``required`` is true for ``tool_choice`` ``"required"`` or a named function
    (then the registry offers that function alone).
    """

    registry: ToolRegistry | None
    required: bool = False


def _bad(message: str, param: str) -> ProxyError:
    return ProxyError(400, message, kind="invalid_request_error", param=param)


def request_object(content: bytes) -> dict[str, Any]:
    """A request body as a JSON object, or a 400 ``ProxyError`` saying why it is not one (not
    UTF-8, not JSON, nested deeper than the parser's stack, not an object). Every route that
    reads a request body reads it here: a body the proxy cannot read is a 400, never a 500.

    >>> request_object(b'{"model": "m"}')
    {'model': 'm'}
    """
    try:
        value = json.loads(content)
    except RecursionError:
        raise _bad("Request body is nested too deep to read.", "body") from None
    except UnicodeDecodeError:
        raise _bad("Request body is not UTF-8 JSON.", "body") from None
    except ValueError as exc:
        raise _bad(f"Request body is not a JSON object ({exc}).", "body") from None
    if not isinstance(value, dict):
        raise _bad(f"Request body is not a JSON object (a JSON {type(value).__name__}).", "body")
    return value


bad_request = _bad  # a 400 naming the request field at fault, on every route


def _spec(tool: Any, i: int) -> ToolSpec | None:
    if not isinstance(tool, Mapping):
        raise _bad(f"tools[{i}] must be an object", f"tools[{i}]")
    if tool.get("type", "function") != "function":
        return None  # custom (free-form) tools have no schema to repair against
    fn = tool.get("function")
    if not isinstance(fn, Mapping) or not isinstance(fn.get("name"), str) or not fn["name"]:
        raise _bad(f"tools[{i}].function.name must be a non-empty string", f"tools[{i}].function.name")
    parameters = fn.get("parameters", _EMPTY_SCHEMA)
    if not isinstance(parameters, Mapping):
        raise _bad(f"tools[{i}].function.parameters must be a JSON Schema object", f"tools[{i}].function.parameters")
    description = fn.get("description")
    return ToolSpec(fn["name"], parameters, description if isinstance(description, str) else "")


def _choice(body: Mapping[str, Any]) -> tuple[Choice, str | None]:
    choice = body.get("tool_choice", "auto")
    if choice in ("auto", "none", "required", None):
        return choice or "auto", None
    if isinstance(choice, Mapping):
        fn = choice.get("function")
        if isinstance(fn, Mapping) and isinstance(fn.get("name"), str):
            return "named", fn["name"]
    raise _bad(
        "tool_choice must be 'auto', 'none', 'required' or {'type': 'function', 'function': {'name': ...}}",
        "tool_choice",
    )


def request_tools(
    body: Mapping[str, Any], profile: Literal["local", "hosted"], model: ModelProfile | None = None
) -> RequestTools:
    """The request's tools as a registry (a fresh one: a registry records its repairs).

    O(total size of the tools' schemas): each schema is compiled once per request.

    >>> rt = request_tools({"tools": [{"type": "function", "function": {"name": "web_search"}}]}, "local")
    >>> rt.registry.names, rt.required
    (['web_search'], False)
    """
    tools = body.get("tools")
    if tools is None:
        return RequestTools(None)
    if not isinstance(tools, list):
        raise _bad("tools must be an array", "tools")
    choice, named = _choice(body)
    specs = [spec for i, tool in enumerate(tools) if (spec := _spec(tool, i)) is not None]
    return offered_tools(specs, choice, named, profile, model)


def offered_tools(
    specs: list[ToolSpec],
    choice: Choice,
    named: str | None,
    profile: Literal["local", "hosted"],
    model: ModelProfile | None = None,
) -> RequestTools:
    """The registry for tools read from any request shape, narrowed by its tool choice: the
    one rule every route applies (``named`` must be among ``specs``). Under a ``model``
    profile the registry takes its reasoning convention and keeps every dialect (``_model``)."""
    if named is not None:
        specs = [spec for spec in specs if spec.name == named]
        if not specs:
            raise _bad(f"tool_choice names {named!r}, which is not in tools", "tool_choice")
    if not specs or choice == "none":
        return RequestTools(None)
    try:
        registry = ToolRegistry(specs, profile=profile, model=model, dialects=None if model is None else EVERY_DIALECT)
    except ValueError as exc:  # two tools with one name, a schema that does not compile
        raise _bad(f"tools: {exc}", "tools") from None
    except RecursionError:  # a schema nested deeper than its compiler's stack
        raise _bad("tools: a tool's parameters schema is nested too deep to read.", "tools") from None
    return RequestTools(registry, required=choice in ("required", "named"))
