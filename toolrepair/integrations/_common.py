"""What the framework adapters share: lazy imports, stable ids, plain-dict views of SDK objects."""

from __future__ import annotations

import copy
import importlib
import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from types import ModuleType
from typing import Any

from .._errors import ToolExecutionError
from .._ids import stable_id  # one rule for ids derived from what a call was read from
from .._registry import ToolRegistry
from .._salvage import ReasoningDelta
from .._types import Rejection, SalvageResult, ToolCall

__all__ = [
    "REASONING_SEPARATOR",
    "PendingMessages",
    "Reasoned",
    "Vetted",
    "VettedStream",
    "VettedText",
    "as_dict",
    "joined_reasoning",
    "lazy_classes",
    "rejection_error",
    "rejection_errors",
    "rejection_message",
    "require",
    "stable_id",
    "vet",
    "vet_text",
    "withdraw",
]

# Distributions behind each extra, for the message of a failed import.
_EXTRA_PACKAGES = {
    "langchain": "langchain, langchain-core and langgraph",
    "llamaindex": "llama-index-core",
    "mcp": "mcp",
    "openai": "openai",
    "anthropic": "anthropic",
    "litellm": "litellm",
    "pydantic_ai": "pydantic-ai (or pydantic-ai-slim)",
    "openai_agents": "openai-agents",
    "google_adk": "google-adk",
    "smolagents": "smolagents",
    "ray": "ray[data]",
}


def require(module: str, extra: str) -> ModuleType:
    """Import ``module``, or raise an ImportError that says which extra provides it."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(
            f"toolrepair.integrations.{extra} needs {_EXTRA_PACKAGES[extra]} "
            f"(missing module {module!r}): pip install 'toolrepair[{extra}]'"
        ) from exc


def as_dict(obj: Any) -> dict[str, Any]:
    """A deep, plain-dict copy of a pydantic SDK object (fields that were set) or a mapping."""
    if isinstance(obj, Mapping):
        return copy.deepcopy(dict(obj))
    dump = getattr(obj, "model_dump", None)
    if callable(dump):
        # exclude_unset keeps the payload's own shape: no null fields the API never sent.
        data = dump(mode="json", exclude_unset=True, by_alias=True)
        if isinstance(data, dict):
            return data
    raise TypeError(f"expected a mapping or an SDK model, not {type(obj).__name__}")


def rejection_error(rejection: Rejection, registry: ToolRegistry) -> ToolExecutionError:
    """The corrective error for a text call the salvage refused: for a tool never offered, the
    one a native call naming it gets (``Tool 'x' not found. Did you mean …``)."""
    if rejection.reason == "not-offered" and rejection.name:
        repair = registry.repair({"name": rejection.name, "arguments": {}})
        if isinstance(repair.error, ToolExecutionError):
            return repair.error
        return ToolExecutionError(f"Tool {rejection.name!r} not found.", kind="not-found", tool_name=rejection.name)
    which = f"The call to {rejection.name!r}" if rejection.name else "A tool call"
    return ToolExecutionError(
        f"{which} written as text could not be used ({rejection.reason}): write it again "
        "with its arguments as one complete JSON object.",
        kind="arguments",
        tool_name=rejection.name,
    )


def rejection_message(rejection: Rejection, registry: ToolRegistry) -> str:
    """What to tell the model about a text call the salvage refused."""
    return str(rejection_error(rejection, registry))


def rejection_errors(result: SalvageResult, registry: ToolRegistry, id_key: str) -> list[dict[str, Any]]:
    """Text calls the salvage refused, as error entries the application can show the model."""
    return [
        {id_key: None, "name": r.name, "message": rejection_message(r, registry), "reason": r.reason}
        for r in result.rejected
    ]


# -- policy at every edge ------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Vetted:
    """One call as an integration may hand it to a framework.

    ``error`` is None: ``call`` is repaired (offered name, coerced arguments) and passed the
    registry's policy; the framework may run it. Otherwise ``call`` is what the model wrote
    (its id kept) and must never reach an executor: answer it with ``message`` instead.
    """

    call: ToolCall
    error: ToolExecutionError | None

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def message(self) -> str:
        """The corrective message (the refusal, for a denied call); empty when ``ok``."""
        return "" if self.error is None else str(self.error)


@dataclass(frozen=True, slots=True)
class VettedText:
    """A reply's text with its text calls cut out, each call vetted, and the refused candidates."""

    content: str
    calls: tuple[Vetted, ...]
    rejected: tuple[Rejection, ...]
    reasoning: str = ""  # the reply's reasoning regions, once the calls are cut out
    # The text outside calls, reasoning and chat markup (``SalvageResult.content``, stripped),
    # calls or not: ``content`` keeps the text as written when no call was read.
    remainder: str = ""


REASONING_SEPARATOR = "\n\n"  # between the server's reasoning and the one read from the text


def joined_reasoning(upstream: Any, salvaged: str) -> str:
    """A message's reasoning once the reasoning read from its text is cut out of it: the
    reasoning the server sent apart first (when it is a non-empty str), then the one read from
    the text, a blank line between; neither is lost.

    >>> joined_reasoning("UP", "read"), joined_reasoning(None, "read")
    ('UP\\n\\nread', 'read')
    """
    if isinstance(upstream, str) and upstream:
        return f"{upstream}{REASONING_SEPARATOR}{salvaged}" if salvaged else upstream
    return salvaged


@dataclass(frozen=True, slots=True)
class Reasoned:
    """Reasoning a stream read from the text (``VettedStream(..., reasoning=True)``)."""

    text: str


def _loose_arguments(arguments: Any) -> dict[str, Any]:
    # Only a record of what the model wrote (for the framework's history); never run.
    if isinstance(arguments, Mapping):
        return dict(arguments)
    if isinstance(arguments, str):
        try:
            value = json.loads(arguments)
        except (ValueError, RecursionError):
            return {}
        return value if isinstance(value, dict) else {}
    return {}


def vet(registry: ToolRegistry, call: ToolCall | tuple[Any, Any, Any], *, dispatch: bool = False) -> Vetted:
    """Repair one call and apply the registry's policy (allow, deny, ``before_call``).

    Both happen in ``ToolRegistry.repair``, the one place policy lives; this only keeps the
    call's id and the model's own spelling when the answer is a refusal. ``call`` is a
    ``ToolCall`` (a salvaged one keeps its dialect) or ``(name, raw arguments, id)``.

    ``dispatch``: the framework runs the call now, and nothing checks it again before it runs
    (a dispatch hook, or a reply vetted where no such hook exists). Then the next call with its
    id is a new one, counted for ``max_repeats`` again; without it, the same id, name and
    arguments checked again (vetted, then run) are counted once (``ToolRegistry.admit``).
    """
    if isinstance(call, ToolCall):
        repair = registry.repair(call)
        written = call
    else:
        raw_name, arguments, raw_id = call
        name = raw_name if isinstance(raw_name, str) else ""
        ident = raw_id if isinstance(raw_id, str) else None
        repair = registry.repair({"name": name, "arguments": arguments, "id": ident})
        written = ToolCall(name, _loose_arguments(arguments), ident)
    if repair.call is None:
        assert repair.error is not None
        return Vetted(written, repair.error)
    repeated = registry.admit(repair.call, dispatch=dispatch)  # the framework runs it: count it as a run
    if repeated is not None:
        return Vetted(written, repeated)
    return Vetted(repair.call, None)


def withdraw(registry: ToolRegistry, calls: Iterable[Vetted]) -> None:
    """None of ``calls`` runs after all (a framework that refuses a reply whole when one of its
    calls is refused): the ones vetted to run give their ``max_repeats`` count back, so the
    model sending them again is not told they ran."""
    for vetted in calls:
        if vetted.error is None:
            registry._withdraw(vetted.call)


def vet_text(
    registry: ToolRegistry,
    text: str,
    prefix: str,
    *,
    answer_rejected: bool = False,
    dispatch: bool = False,
    id_seed: str = "",
) -> VettedText:
    """Salvage ``text`` against the registry and vet each call, with ids ``prefix…`` derived
    from the text (the same reply always gives the same ids). ``content`` is the salvaged
    content as the core builds it (its whitespace rule), not stripped: the same reply streamed
    through ``StreamSalvager`` gives the same text, so a framework's whole and streamed answers agree.

    ``answer_rejected``: each refused candidate (a tool never offered, arguments that cannot be
    read) is a refused call too, in text order, its text cut from ``content``, so that the
    framework answers it with its corrective message like any refused call and the next model
    turn can fix it; ``rejected`` is then empty. Without it the candidates stay text.
    ``dispatch`` as for ``vet``. ``id_seed`` goes into the ids with the text: where the
    framework wants ids unique in its conversation (openai-agents runs a call id once), the
    position in it, so the same text in a later turn gets ids of its own.
    """
    # Answered, each refused candidate leaves the content by its span in the text (its
    # `Rejection.text` is a bounded excerpt, and the same words may stand elsewhere).
    result = registry._salvaged(text, answered=answer_rejected)
    seeded = id_seed + "\x00" + text if id_seed else text  # no seed: the ids as ever
    calls = [
        vet(registry, replace(c, id=stable_id(prefix, seeded, i)), dispatch=dispatch)
        for i, c in enumerate(result.calls)
    ]
    if not (answer_rejected and result.rejected):
        remainder = result.content
        return VettedText(remainder if calls else text, tuple(calls), result.rejected, result.reasoning, remainder)
    for k, rejection in enumerate(result.rejected):
        written = ToolCall(
            rejection.name or "",
            {},
            stable_id(prefix, seeded, len(result.calls) + k),
            dialect=rejection.dialect,
            span=rejection.span,
        )
        calls.append(Vetted(written, rejection_error(rejection, registry)))
    calls.sort(key=lambda v: v.call.span[0] if v.call.span is not None else 0)
    return VettedText(result.content, tuple(calls), (), result.reasoning, result.content)


def lazy_classes(module: str, factories: Mapping[str, Callable[[], type]]) -> Callable[[str], Any]:
    """A module ``__getattr__`` that builds each named class on first use and keeps it.

    Classes that subclass a framework's own class are built this way, so that importing the
    integration module never imports the framework.
    """
    built: dict[str, type] = {}

    def __getattr__(name: str) -> Any:
        factory = factories.get(name)
        if factory is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        if name not in built:
            built[name] = factory()
        return built[name]

    return __getattr__


class PendingMessages:
    """Corrective messages kept by tool-call id until the framework dispatches that call.
    Bounded: a message never asked for is forgotten, oldest first. Thread-safe."""

    LIMIT = 1024

    def __init__(self) -> None:
        self._items: OrderedDict[str, str] = OrderedDict()
        self._lock = threading.Lock()

    def put(self, ident: str, message: str) -> None:
        with self._lock:
            self._items[ident] = message
            while len(self._items) > self.LIMIT:
                self._items.popitem(last=False)

    def pop(self, ident: Any) -> str | None:
        with self._lock:
            return self._items.pop(ident, None) if isinstance(ident, str) else None


class VettedStream:
    """``registry.stream()`` with every call it reads vetted (repair and policy, as ``vet``) and
    given a stable id: ``feed``/``close`` return visible text (``str``) and ``Vetted`` calls, in
    order. Text held by the salvager is held here too; nothing else is buffered.
    ``feed_reasoned``/``close_reasoned`` give the reasoning read from the text as ``Reasoned``
    items, for an integration with a place for it; ``feed``/``close`` as text.

    ``screen_only``: the calls are only hidden (the finished reply is vetted on its own), so
    they are left out, not vetted: a call is counted for ``max_repeats`` once, not per view.
    ``dispatch`` as for ``vet``."""

    def __init__(
        self, registry: ToolRegistry, prefix: str, *, screen_only: bool = False, dispatch: bool = False
    ) -> None:
        self._registry = registry
        self._salvager = registry.stream()
        self._prefix = prefix
        self._count = 0
        self._screen_only = screen_only
        self._dispatch = dispatch

    def _vet(self, events: list[Any]) -> list[str | Vetted | Reasoned]:
        out: list[str | Vetted | Reasoned] = []
        for event in events:
            call = getattr(event, "call", None)
            if call is None:
                out.append(Reasoned(event.text) if isinstance(event, ReasoningDelta) else event.text)
                continue
            if self._screen_only:
                continue
            key = json.dumps([call.name, call.arguments, call.span], ensure_ascii=False, default=str)
            ident = stable_id(self._prefix, key, self._count)
            out.append(vet(self._registry, replace(call, id=ident), dispatch=self._dispatch))
            self._count += 1
        return out

    def feed_reasoned(self, delta: str) -> list[str | Vetted | Reasoned]:
        return self._vet(self._salvager.feed(delta))

    def close_reasoned(self) -> list[str | Vetted | Reasoned]:
        return self._vet(self._salvager.close())

    def feed(self, delta: str) -> list[str | Vetted]:
        return _as_text(self.feed_reasoned(delta))

    def close(self) -> list[str | Vetted]:
        return _as_text(self.close_reasoned())


def _as_text(items: list[str | Vetted | Reasoned]) -> list[str | Vetted]:
    return [item.text if isinstance(item, Reasoned) else item for item in items]
