"""Tool introspection: a function, callable, BaseTool-like object or ToolSpec -> ToolInfo.

Everything the registry needs to know about a tool is read once, here, when the tool is
registered: its offered name, a JSON Schema for its arguments (given, or derived from the
signature and type hints), the signature used for bind checks, and how to call it.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import inspect
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
    special = _SPECIAL_FORMS.get(origin)
    if special is not None:
        return special(args, depth)
    if tp is None or tp is type(None):
        return {"type": "null"}
    scalar = _scalars().get(tp)
    if scalar is not None:
        return dict(scalar)
    shape = _container_shape(origin or tp)
    if shape is not None:
        return shape(args, depth)
    return _class_schema(tp, depth)


def _annotated_schema(args: tuple[Any, ...], depth: int) -> dict[str, Any]:
    """``Annotated[T, "doc"]``: T's schema, the first string annotation as its description."""
    inner = _type_schema(args[0], depth + 1)
    doc = next((a for a in args[1:] if isinstance(a, str)), None)
    return {**inner, "description": doc} if doc else inner


def _literal_schema(args: tuple[Any, ...], depth: int) -> dict[str, Any]:
    return {"enum": list(args)}


def _union_schema(args: tuple[Any, ...], depth: int) -> dict[str, Any]:
    """One branch that takes anything makes the union take anything."""
    branches = [_type_schema(a, depth + 1) for a in args]
    return {} if any(b == {} for b in branches) else {"anyOf": branches}


# typing's special forms, by the origin typing.get_origin reports for them.
_SPECIAL_FORMS: dict[Any, Callable[[tuple[Any, ...], int], dict[str, Any]]] = {
    typing.Annotated: _annotated_schema,
    Literal: _literal_schema,
    typing.Union: _union_schema,
    types.UnionType: _union_schema,
}


# Exact types (not subclasses: an IntEnum is an enum, not an integer).
@functools.cache
def _scalars() -> dict[Any, dict[str, str]]:
    import datetime as _dt  # on first use: not a cost of ``import toolrepair``

    return {
        bool: {"type": "boolean"},
        int: {"type": "integer"},
        float: {"type": "number"},
        str: {"type": "string"},
        bytes: {"type": "string"},
        _dt.datetime: {"type": "string", "format": "date-time"},
        _dt.date: {"type": "string", "format": "date"},
    }


def _array_schema(args: tuple[Any, ...], depth: int) -> dict[str, Any]:
    # list[int], set[int], tuple[int, ...]: every item has the first argument's schema.
    item = _type_schema(args[0], depth + 1) if args else {}
    return {"type": "array", "items": item} if item else {"type": "array"}


def _tuple_schema(args: tuple[Any, ...], depth: int) -> dict[str, Any]:
    """``tuple[int, ...]`` is an array of ints; ``tuple[int, str]`` exactly two items, each
    with its own schema (Draft 2020-12 ``prefixItems``), so a valid second item is not
    judged by the first one's type."""
    if not args or (len(args) == 2 and args[1] is Ellipsis):
        return _array_schema(args[:1], depth)
    prefix = [_type_schema(arg, depth + 1) for arg in args]
    return {"type": "array", "prefixItems": prefix, "minItems": len(args), "maxItems": len(args)}


def _mapping_schema(args: tuple[Any, ...], depth: int) -> dict[str, Any]:
    value = _type_schema(args[1], depth + 1) if len(args) == 2 else {}
    return {"type": "object", "additionalProperties": value} if value else {"type": "object"}


_CONTAINERS: dict[Any, Callable[[tuple[Any, ...], int], dict[str, Any]]] = {
    list: _array_schema,
    set: _array_schema,
    frozenset: _array_schema,
    tuple: _tuple_schema,
    dict: _mapping_schema,
}
# collections.abc classes by name (bare, or the origin of a subscripted one).
_ABC_CONTAINERS: dict[str, Callable[[tuple[Any, ...], int], dict[str, Any]]] = {
    **dict.fromkeys(("Sequence", "MutableSequence", "Set", "MutableSet", "Iterable", "Collection"), _array_schema),
    **dict.fromkeys(("Mapping", "MutableMapping"), _mapping_schema),
}


def _container_shape(container: Any) -> Callable[[tuple[Any, ...], int], dict[str, Any]] | None:
    """The schema maker for a container class (``list``, ``collections.abc.Mapping``...), if it is one."""
    if isinstance(container, type) and container.__module__ == "collections.abc":
        return _ABC_CONTAINERS.get(container.__name__)
    return _CONTAINERS.get(container)


def _class_schema(tp: Any, depth: int) -> dict[str, Any]:
    """A class that is none of the above: a path, an enum, a dataclass, a TypedDict or a model
    with ``model_json_schema`` (pydantic); anything else gives `{}`."""
    if isinstance(tp, type):
        import pathlib  # on first use: with urllib and ipaddress, a share of the import

        if issubclass(tp, pathlib.PurePath):
            return {"type": "string"}
        if issubclass(tp, enum.Enum):
            return {"enum": [m.value for m in tp]}
        if dataclasses.is_dataclass(tp):
            return _dataclass_schema(tp, depth)
        if typing.is_typeddict(tp):
            return _typeddict_schema(tp, depth)
    model_schema = getattr(tp, "model_json_schema", None)
    if not callable(model_schema):
        return {}
    try:
        schema = model_schema()
    except Exception:  # a model whose schema cannot be built is still an object
        return {"type": "object"}
    return dict(schema) if isinstance(schema, Mapping) else {"type": "object"}


def _dataclass_schema(tp: type[Any], depth: int) -> dict[str, Any]:
    hints = _safe_hints(tp)
    fields = dataclasses.fields(tp)
    props = {f.name: _type_schema(hints.get(f.name, Any), depth + 1) for f in fields}
    req = [f.name for f in fields if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING]
    return {"type": "object", "properties": props, "required": req}


def _typeddict_schema(tp: type[Any], depth: int) -> dict[str, Any]:
    hints = _safe_hints(tp)
    return {
        "type": "object",
        "properties": {k: _type_schema(v, depth + 1) for k, v in hints.items()},
        "required": sorted(getattr(tp, "__required_keys__", ())),
    }


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
        callable(getattr(obj, "run", None))
        or callable(getattr(obj, "invoke", None))
        or callable(getattr(obj, "call", None))
        or callable(obj)
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
        return _spec_info(obj)
    if not is_tool(obj):
        raise TypeError(f"not a tool: {obj!r} (expected a function, callable, BaseTool-like or ToolSpec)")
    llama = _maybe_llama_index_tool(obj)
    if llama is not None:
        return llama
    name = tool_name_of(obj)
    given = _pydantic_schema(obj)
    if given is not None and callable(getattr(obj, "invoke", None)) and not inspect.isfunction(obj):
        return _langchain_info(obj, name, given)
    named = isinstance(getattr(obj, "name", None), str)
    if named and callable(getattr(obj, "run", None)) and not inspect.isfunction(obj):
        return _run_method_info(obj, name, given)
    sig = _maybe_signature(obj)
    schema = given if given is not None else schema_for_callable(obj, sig)
    return ToolInfo(name, schema, sig, obj, "kwargs", _is_async_callable(obj), obj, _description(obj))


def _spec_info(spec: ToolSpec) -> ToolInfo:
    fn = spec.fn
    schema = dict(spec.parameters) if spec.parameters else {"type": "object"}
    if fn is None:
        return ToolInfo(spec.name, schema, None, None, "none", False, spec, spec.description)
    return ToolInfo(
        spec.name, schema, _maybe_signature(fn), fn, "kwargs", _is_async_callable(fn), spec, spec.description
    )


def _langchain_info(obj: Any, name: str, given: dict[str, Any]) -> ToolInfo:
    """A LangChain BaseTool: args_schema is the contract; invoke(dict) runs callbacks and
    validation. The signature of ``_run`` (without LangChain's own parameters) serves bind
    checks where it names the arguments."""
    inner = getattr(obj, "_run", None)
    sig = _maybe_signature(inner) if callable(inner) else None
    if sig is not None:
        sig = sig.replace(
            parameters=[p for p in sig.parameters.values() if p.name not in ("run_manager", "callbacks", "config")]
        )
        if not _plain_parameters(sig):
            sig = None  # StructuredTool._run(*args, **kwargs) names nothing: the schema says more.
    ainvoke = getattr(obj, "ainvoke", None)
    return ToolInfo(
        name,
        given,
        sig,
        obj.invoke,
        "dict",
        False,
        obj,
        _description(obj),
        async_target=ainvoke if callable(ainvoke) else None,
    )


def _run_method_info(obj: Any, name: str, given: dict[str, Any] | None) -> ToolInfo:
    """A named object with ``run`` (smolagents-, older LangChain-style): ``_run(**kwargs)`` when
    it has one, unless ``run`` takes the whole input as ``tool_input``."""
    run = obj.run
    inner = getattr(obj, "_run", None)
    style: CallStyle = "kwargs"
    if callable(inner):
        sig = _maybe_signature(inner)
        run_sig = _maybe_signature(run)
        target: Callable[..., Any] = inner
        if run_sig is not None and [p.name for p in _plain_parameters(run_sig)][:1] == ["tool_input"]:
            target, style = run, "dict"
    else:
        sig, target = _maybe_signature(run), run
    source: Callable[..., Any] = target if style == "kwargs" or not callable(inner) else inner
    schema = given if given is not None else schema_for_callable(source, sig)
    return ToolInfo(name, schema, sig, target, style, _is_async_callable(target), obj, _description(obj))


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
    return ToolInfo(
        name,
        dict(schema),
        None,
        run,
        "dict",
        False,
        obj,
        desc if isinstance(desc, str) else "",
        async_target=arun if callable(acall) else None,
    )


def _tool_output_value(output: Any) -> Any:
    if hasattr(output, "raw_output") and hasattr(output, "tool_name"):
        raw = output.raw_output
        return raw if raw is not None else getattr(output, "content", None)
    return output
