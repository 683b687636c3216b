"""Tool introspection: a function, callable, BaseTool-like object or ToolSpec -> ToolInfo.

Everything the registry needs to know about a tool is read once, here, when the tool is
registered: its offered name, a JSON Schema for its arguments (given, or derived from the
signature and type hints), the signature used for bind checks, and how to call it.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import enum
import functools
import inspect
import pathlib
import types
import typing
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from ._names import tool_name_of
from ._types import ToolSpec

__all__ = ["ToolInfo", "expected_from_schema", "inspect_tool", "iter_tools", "schema_for_callable"]

CallStyle = Literal["kwargs", "dict", "none"]

# Nesting of containers (an MCP server object yielding tools, lists of lists) we unpack.
_MAX_CONTAINER_DEPTH = 8
# Type-hint recursion (list[list[dict[str, ...]]]) is cut here; deeper levels become `{}`.
_MAX_TYPE_DEPTH = 16


@dataclass(frozen=True, slots=True)
class ToolInfo:
    """What the registry knows about one tool."""

    name: str
    schema: Mapping[str, Any]
    signature: inspect.Signature | None
    target: Callable[..., Any] | None
    call_style: CallStyle
    is_async: bool
    source: Any
    description: str = ""
    async_target: Callable[..., Any] | None = None

    @property
    def expected(self) -> dict[str, list[str]] | None:
        """``{"required": [...], "optional": [...]}``, or None when nothing can be read."""
        if self.signature is not None:
            return expected_from_signature(self.signature)
        if self.target is None or self.call_style == "dict":
            return expected_from_schema(self.schema)
        return None


def expected_from_signature(sig: inspect.Signature) -> dict[str, list[str]]:
    required: list[str] = []
    optional: list[str] = []
    for p in _plain_parameters(sig):
        (required if p.default is inspect.Parameter.empty else optional).append(p.name)
    return {"required": required, "optional": optional}


def expected_from_schema(schema: Mapping[str, Any]) -> dict[str, list[str]]:
    props = schema.get("properties")
    names = list(props) if isinstance(props, Mapping) else []
    req = schema.get("required")
    req_set = {r for r in req if isinstance(r, str)} if isinstance(req, list) else set()
    return {
        "required": [n for n in names if n in req_set] + sorted(req_set.difference(names)),
        "optional": [n for n in names if n not in req_set],
    }


def _plain_parameters(sig: inspect.Signature) -> list[inspect.Parameter]:
    """Parameters a model can name: not self/cls, not *args/**kwargs."""
    out = []
    for i, p in enumerate(sig.parameters.values()):
        if p.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            continue
        if i == 0 and p.name in ("self", "cls"):
            continue
        out.append(p)
    return out


def _maybe_signature(fn: Any) -> inspect.Signature | None:
    try:
        return inspect.signature(fn)
    except (TypeError, ValueError):
        return None


def _is_async_callable(fn: Any) -> bool:
    if inspect.iscoroutinefunction(fn):
        return True
    while isinstance(fn, functools.partial):
        fn = fn.func
        if inspect.iscoroutinefunction(fn):
            return True
    call = getattr(type(fn), "__call__", None)  # noqa: B004 - the method itself, to test for async
    return call is not None and not inspect.isfunction(fn) and inspect.iscoroutinefunction(call)


def _hints(fn: Any) -> dict[str, Any]:
    target = fn
    if not (inspect.isfunction(target) or inspect.ismethod(target)):
        target = getattr(type(fn), "__call__", fn)  # noqa: B004 - hints live on the method
    try:
        return typing.get_type_hints(target, include_extras=True)
    except Exception:  # unresolvable forward references: fall back to no hints, never fail
        return {}


def _type_schema(tp: Any, depth: int = 0) -> dict[str, Any]:
    """A JSON Schema for one type hint; unknown types give `{}` (anything)."""
    if depth > _MAX_TYPE_DEPTH or tp is Any or tp is inspect.Parameter.empty:
        return {}
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin is typing.Annotated:
        inner = _type_schema(args[0], depth + 1)
        doc = next((a for a in args[1:] if isinstance(a, str)), None)
        return {**inner, "description": doc} if doc else inner
    if tp is None or tp is type(None):
        return {"type": "null"}
    if origin is Literal:
        return {"enum": list(args)}
    if origin in (typing.Union, types.UnionType):
        branches = [_type_schema(a, depth + 1) for a in args]
        return {} if any(b == {} for b in branches) else {"anyOf": branches}
    simple = {bool: "boolean", int: "integer", float: "number", str: "string", bytes: "string"}
    if tp in simple:
        return {"type": simple[tp]}
    if tp in (_dt.datetime,):
        return {"type": "string", "format": "date-time"}
    if tp in (_dt.date,):
        return {"type": "string", "format": "date"}
    if isinstance(tp, type) and issubclass(tp, pathlib.PurePath):
        return {"type": "string"}
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return {"enum": [m.value for m in tp]}
    container = origin or tp
    if container in (list, set, frozenset, tuple) or (
        isinstance(container, type) and container.__module__ == "collections.abc"
        and container.__name__ in ("Sequence", "MutableSequence", "Set", "MutableSet", "Iterable",
                                   "Collection")
    ):
        item = _type_schema(args[0], depth + 1) if (args and args[-1] is not Ellipsis) or len(args) == 2 else {}
        return {"type": "array", "items": item} if item else {"type": "array"}
    if container in (dict,) or (
        isinstance(container, type) and container.__module__ == "collections.abc"
        and container.__name__ in ("Mapping", "MutableMapping")
    ):
        value = _type_schema(args[1], depth + 1) if len(args) == 2 else {}
        return {"type": "object", "additionalProperties": value} if value else {"type": "object"}
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        hints = _safe_hints(tp)
        fields = dataclasses.fields(tp)
        props = {f.name: _type_schema(hints.get(f.name, Any), depth + 1) for f in fields}
        req = [f.name for f in fields
               if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING]
        return {"type": "object", "properties": props, "required": req}
    if isinstance(tp, type) and typing.is_typeddict(tp):
        hints = _safe_hints(tp)
        return {"type": "object", "properties": {k: _type_schema(v, depth + 1) for k, v in hints.items()},
                "required": sorted(getattr(tp, "__required_keys__", ()))}
    model_schema = getattr(tp, "model_json_schema", None)
    if callable(model_schema):
        try:
            schema = model_schema()
        except Exception:
            return {"type": "object"}
        return dict(schema) if isinstance(schema, Mapping) else {"type": "object"}
    return {}


def _safe_hints(tp: Any) -> dict[str, Any]:
    try:
        return typing.get_type_hints(tp, include_extras=True)
    except Exception:
        return {}


def _hoist_defs(schema: dict[str, Any]) -> dict[str, Any]:
    """Move pydantic `$defs` nested in properties to the top, where `#/$defs/..` refs point."""
    defs: dict[str, Any] = {}
    for prop in schema.get("properties", {}).values():
        if isinstance(prop, dict) and "$defs" in prop:
            defs.update(prop.pop("$defs"))
    if defs:
        schema["$defs"] = {**defs, **schema.get("$defs", {})}
    return schema


def schema_for_callable(fn: Callable[..., Any], sig: inspect.Signature | None = None) -> dict[str, Any]:
    """A JSON Schema object for ``fn``'s keyword-nameable parameters.

    >>> def f(query: str, limit: int = 5) -> None: ...
    >>> schema_for_callable(f)["required"]
    ['query']
    """
    sig = sig if sig is not None else _maybe_signature(fn)
    if sig is None:
        return {"type": "object"}
    hints = _hints(fn)
    props: dict[str, Any] = {}
    required: list[str] = []
    for p in _plain_parameters(sig):
        hint = hints.get(p.name, p.annotation)
        if isinstance(hint, str):  # an annotation get_type_hints could not resolve
            hint = Any
        prop = _type_schema(hint)
        if p.default is inspect.Parameter.empty:
            required.append(p.name)
        elif p.default is None and prop and "null" not in str(prop.get("type", "")):
            prop = {"anyOf": [prop, {"type": "null"}]} if "anyOf" not in prop else prop
        props[p.name] = prop
    has_kwargs = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in sig.parameters.values())
    schema: dict[str, Any] = {"type": "object", "properties": props, "required": required}
    if not has_kwargs:
        schema["additionalProperties"] = False
    return _hoist_defs(schema)


def _pydantic_schema(obj: Any) -> dict[str, Any] | None:
    """The JSON Schema of a LangChain/LlamaIndex-style `args_schema` / `fn_schema`."""
    # LangChain's `tool_call_schema` is `args_schema` without injected arguments (state,
    # tool_call_id, runtime): the schema the model is shown, so the one calls are checked against.
    for attr in ("tool_call_schema", "args_schema", "fn_schema"):
        model = getattr(obj, attr, None)
        if model is None:
            metadata = getattr(obj, "metadata", None)
            model = getattr(metadata, attr, None)
        if isinstance(model, Mapping):
            return dict(model)
        make = getattr(model, "model_json_schema", None) or getattr(model, "schema", None)
        if callable(make):
            try:
                schema = make()
            except Exception:
                continue
            if isinstance(schema, Mapping):
                return dict(schema)
    return None


def _description(obj: Any) -> str:
    desc = getattr(obj, "description", None)
    if isinstance(desc, str):
        return desc
    doc = inspect.getdoc(obj) if callable(obj) else None
    return doc.split("\n\n")[0] if doc else ""


def is_tool(obj: Any) -> bool:
    """Something toolrepair can register as one tool (not a container of tools)."""
    if isinstance(obj, ToolSpec):
        return True
    if isinstance(obj, (str, bytes, Mapping)):
        return False
    if isinstance(getattr(obj, "name", None), str) and (
        callable(getattr(obj, "run", None)) or callable(getattr(obj, "invoke", None))
        or callable(getattr(obj, "call", None)) or callable(obj)
    ):
        return True
    return callable(obj)


def iter_tools(tools: Iterable[Any], _depth: int = 0) -> Iterator[Any]:
    """Each tool in ``tools``; containers (an MCP server's tool list, nested lists) are unpacked."""
    if isinstance(tools, (ToolSpec, str, bytes, Mapping)) or is_tool(tools):
        yield tools
        return
    for item in tools:
        if is_tool(item) or _depth >= _MAX_CONTAINER_DEPTH:
            yield item
        elif isinstance(item, Iterable) and not isinstance(item, (str, bytes, Mapping)):
            yield from iter_tools(item, _depth + 1)
        else:
            yield item


def inspect_tool(obj: Any) -> ToolInfo:
    """Read a tool once: name, schema, signature, how to call it.

    >>> def web_search(query: str) -> str: ...
    >>> inspect_tool(web_search).expected
    {'required': ['query'], 'optional': []}
    """
    if isinstance(obj, ToolInfo):
        return obj
    if isinstance(obj, ToolSpec):
        fn = obj.fn
        sig = _maybe_signature(fn) if fn is not None else None
        schema = dict(obj.parameters) if obj.parameters else {"type": "object"}
        return ToolInfo(obj.name, schema, sig, fn, "kwargs" if fn is not None else "none",
                        _is_async_callable(fn) if fn is not None else False, obj, obj.description)
    if not is_tool(obj):
        raise TypeError(f"not a tool: {obj!r} (expected a function, callable, BaseTool-like or ToolSpec)")
    llama = _maybe_llama_index_tool(obj)
    if llama is not None:
        return llama
    name = tool_name_of(obj)
    given = _pydantic_schema(obj)
    invoke = getattr(obj, "invoke", None)
    if given is not None and callable(invoke) and not inspect.isfunction(obj):
        # LangChain BaseTool: args_schema is the contract; invoke(dict) runs callbacks and validation.
        inner = getattr(obj, "_run", None)
        sig = None
        if callable(inner):
            raw = _maybe_signature(inner)
            if raw is not None:
                sig = raw.replace(parameters=[p for p in raw.parameters.values()
                                              if p.name not in ("run_manager", "callbacks", "config")])
            if sig is not None and not _plain_parameters(sig):
                # StructuredTool._run(*args, **kwargs) names nothing: the schema says more.
                sig = None
        ainvoke = getattr(obj, "ainvoke", None)
        return ToolInfo(name, given, sig, invoke, "dict", False, obj, _description(obj),
                        async_target=ainvoke if callable(ainvoke) else None)
    run = getattr(obj, "run", None)
    if isinstance(getattr(obj, "name", None), str) and callable(run) and not inspect.isfunction(obj):
        inner = getattr(obj, "_run", None)
        if callable(inner):
            sig = _maybe_signature(inner)
            run_sig = _maybe_signature(run)
            style: CallStyle = "kwargs"
            target: Callable[..., Any] = inner
            if run_sig is not None and len(_plain_parameters(run_sig)) >= 1 and (
                _plain_parameters(run_sig)[0].name == "tool_input"
            ):
                target, style = run, "dict"
        else:
            sig, target, style = _maybe_signature(run), run, "kwargs"
        source: Callable[..., Any] = target if style == "kwargs" or not callable(inner) else inner
        schema = given if given is not None else schema_for_callable(source, sig)
        return ToolInfo(name, schema, sig, target, style, _is_async_callable(target), obj, _description(obj))
    sig = _maybe_signature(obj)
    schema = given if given is not None else schema_for_callable(obj, sig)
    return ToolInfo(name, schema, sig, obj, "kwargs", _is_async_callable(obj), obj, _description(obj))


def _maybe_llama_index_tool(obj: Any) -> ToolInfo | None:
    """A LlamaIndex BaseTool: its name and schema live on ``.metadata``; ``call``/``acall`` take
    keyword arguments and wrap the value in a ToolOutput, which is unwrapped to the raw value."""
    metadata = getattr(obj, "metadata", None)
    name = getattr(metadata, "name", None)
    call = getattr(obj, "call", None)
    if isinstance(getattr(obj, "name", None), str) or not (isinstance(name, str) and name and callable(call)):
        return None
    parameters = getattr(metadata, "get_parameters_dict", None)
    schema: Any = None
    if callable(parameters):
        try:  # what LlamaIndex sends the model: fn_schema without titles
            schema = parameters()
        except Exception:
            schema = None
    if not isinstance(schema, Mapping):
        schema = _pydantic_schema(obj) or {"type": "object"}
    acall = getattr(obj, "acall", None)

    def run(arguments: dict[str, Any]) -> Any:
        return _tool_output_value(call(**arguments))

    async def arun(arguments: dict[str, Any]) -> Any:
        assert callable(acall)
        return _tool_output_value(await acall(**arguments))

    desc = getattr(metadata, "description", None)
    return ToolInfo(name, dict(schema), None, run, "dict", False, obj, desc if isinstance(desc, str) else "",
                    async_target=arun if callable(acall) else None)


def _tool_output_value(output: Any) -> Any:
    if hasattr(output, "raw_output") and hasattr(output, "tool_name"):
        raw = output.raw_output
        return raw if raw is not None else getattr(output, "content", None)
    return output
