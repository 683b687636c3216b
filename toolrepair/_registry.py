"""ToolRegistry: the one stateful object. It wraps a framework's own dispatch loop."""

from __future__ import annotations

import contextlib
import inspect
import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from ._bind import split_positional
from ._callshape import call_parts
from ._errors import ToolExecutionError, ToolRepairError, format_expected
from ._limits import Limits, limits_with
from ._names import resolve_policy_names
from ._otel import add_repair_events, end_tool_span, maybe_tracer, tool_span
from ._repair import Entry, ToolIndex, coerce_call
from ._repeats import MAX_TRACKED_CALLS, RepeatCounter, call_key, repeat_message
from ._result import serialize_result
from ._safe_text import exact_str, exception_message
from ._spec import ToolInfo
from ._types import Rejection, RejectReason, Repair, RepairEvent, SalvageResult, ToolCall, ToolOutcome
from ._untrusted import Marks

if TYPE_CHECKING:  # the salvage engine is imported on the first reply salvaged or streamed
    from ._salvage import Dialect, ModelProfile, StreamSalvager

__all__ = ["ToolRegistry"]

Profile = Literal["local", "hosted"]
_DEFAULT_BUDGET: dict[str, int] = {"local": 2, "hosted": 0}


class _Turn:
    """The silent-repair budget of one turn, and the calls it ran (for ``max_repeats``);
    shared by the threads and tasks of that turn."""

    __slots__ = ("_lock", "remaining", "repeats")

    def __init__(self, budget: int) -> None:
        self.remaining = budget
        self.repeats = RepeatCounter()
        self._lock = threading.Lock()

    def take(self) -> bool:
        with self._lock:
            if self.remaining <= 0:
                return False
            self.remaining -= 1
            return True

    def give_back(self) -> None:
        with self._lock:
            self.remaining += 1


@dataclass(frozen=True, slots=True)
class _Admitted:
    """What ``admit`` decided for one call id: the call's key, the verdict (None: it may run)
    and whether the call was dispatched (run, or handed to the framework to run now)."""

    key: bytes
    error: ToolExecutionError | None
    dispatched: bool


class ToolRegistry:
    """Tools by name, with repair, policy, salvage and dispatch around them.

    ``allow`` and ``deny`` entries are resolved like call names when the registry is built
    (``resolve_policy_names``); ``strict`` (default: env ``TOOLREPAIR_STRICT_TOOLS``) makes an
    entry that matches no tool a ``ToolResolutionError`` instead of a warning. Policy is
    checked on the resolved name, whichever entry point the call comes through.

    ``max_repeats`` (default 3; None: no bound): the same call -- its resolved name and its
    arguments after decoding and coercion, as sorted-key JSON (``_repeats.call_key``) -- runs
    at most that many times within a turn (``with registry.turn():``), or, outside a turn,
    within this registry's conversation. The next one does not run: ``execute``/``aexecute``
    raise, and ``run``/``arun`` return (``ok=False``), a ``ToolExecutionError`` of kind
    ``repeat`` whose message is ``Call 'web_search' with the same arguments has already run 3
    times; its result will not change. Use the earlier result or change the arguments.``, and a
    ``RepairEvent`` of kind ``repeat`` is recorded. A call counts when it is dispatched, whether
    the tool then succeeds or raises; refused calls (unknown, denied, bad arguments) do not.

    >>> def web_search(query: str) -> str:
    ...     return f"results for {query}"
    >>> ToolRegistry([web_search]).execute("WebSearch", {"query": "cats"})
    'results for cats'
    """

    def __init__(
        self,
        tools: Iterable[Any],
        *,
        profile: Profile = "local",
        max_repairs: int | None = None,
        allow: Collection[str] | None = None,
        deny: Collection[str] | None = None,
        before_call: Callable[[ToolCall], bool | None] | None = None,
        on_repair: Callable[[RepairEvent], None] | None = None,
        dialects: Sequence[str | Dialect] | None = None,
        max_result_chars: int | None = None,
        max_input_chars: int | None = None,
        limits: Limits | None = None,
        trace_content: bool = False,
        max_repeats: int | None = 3,
        strict: bool | None = None,
        model: ModelProfile | str | None = None,
    ) -> None:
        if profile not in _DEFAULT_BUDGET:
            raise ValueError(f"profile must be 'local' or 'hosted', not {profile!r}")
        if max_repairs is not None and max_repairs < 0:
            raise ValueError("max_repairs must be >= 0")
        if max_repeats is not None and (type(max_repeats) is not int or max_repeats < 1):
            raise ValueError(f"max_repeats must be an int >= 1 or None, not {max_repeats!r}")
        # The same call (name and canonical arguments, `call_key`) runs at most this often per
        # turn, or outside a turn per this registry's conversation; None: no bound.
        self.max_repeats = max_repeats
        self._conversation = RepeatCounter()
        # Verdicts by call id, with the call's key and whether it was dispatched: a call an
        # integration vets and then runs is counted once (see `_count_run`).
        self._admitted: OrderedDict[str, _Admitted] = OrderedDict()
        self._admitted_lock = threading.Lock()
        # Every bound the registry applies (salvage, streaming, argument decoding);
        # `max_input_chars=` overrides the field of the same name.
        self.limits = limits_with(limits, max_input_chars=max_input_chars)
        self._index = ToolIndex(tools)
        self.profile: Profile = profile
        self.max_repairs = _DEFAULT_BUDGET[profile] if max_repairs is None else max_repairs
        # Policy entries are resolved once, like names: `deny=["DeleteFile"]` denies `delete_file`;
        # an entry matching no tool is a warning, or with `strict` (env TOOLREPAIR_STRICT_TOOLS
        # when None) a ToolResolutionError, as in resolve_tool_names.
        table = self._index.table
        self.allow = resolve_policy_names(allow, table, kind="allow", strict=strict)
        self.deny = resolve_policy_names(deny, table, kind="deny", strict=strict) or frozenset()
        self.before_call = before_call
        self.on_repair = on_repair
        self.dialects = dialects
        # The model's profile (dialects and reasoning convention) for salvage and streams;
        # distinct from `profile`, the trust setting.
        if isinstance(model, str):
            from ._salvage import model_profile

            model = model_profile(model)
        self.model: ModelProfile | None = model
        self.max_result_chars = max_result_chars
        # With opentelemetry-api installed, run/arun trace each call; arguments and results go
        # into the span only when this is True (they may hold what users would not log).
        self.trace_content = trace_content
        self.max_input_chars = self.limits.max_input_chars  # salvage refuses longer text (`input-too-large`)
        # Digests of texts salvage must refuse (tool results, marked documents), and of their
        # prefixes for the stream (`Marks`).
        self._untrusted = Marks()
        self._events: list[RepairEvent] = []
        self._lock = threading.Lock()
        self._turn: ContextVar[_Turn | None] = ContextVar(f"toolrepair_turn_{id(self)}", default=None)
        # Every turn open now, in any thread: a worker thread does not inherit the context
        # variable (ThreadPoolExecutor, threading.Thread, run_in_executor), so it finds its turn here.
        self._open_turns: list[_Turn] = []

    # -- introspection -------------------------------------------------------------------
    @property
    def names(self) -> list[str]:
        """The offered tool names, in registration order."""
        return list(self._index.names)

    @property
    def events(self) -> list[RepairEvent]:
        """Every silent repair so far, in order (a copy)."""
        with self._lock:
            return list(self._events)

    def info(self, name: str) -> ToolInfo:
        return self._index.info(name)

    def __contains__(self, name: object) -> bool:
        return name in self._index

    def __len__(self) -> int:
        return len(self._index)

    @contextlib.contextmanager
    def turn(self) -> Iterator[None]:
        """One model turn: silent repairs inside it share one budget of ``max_repairs``.

        The budget holds for the work the turn starts: tasks see it through the context, and
        threads that carry no turn of their own (``ThreadPoolExecutor``, ``threading.Thread``,
        ``run_in_executor``) spend the budget of the turn open on this registry. While several
        turns are open at once such a thread cannot tell which one started it, and its calls
        get no silent repair (the corrective message instead); to attribute them, run the
        work in the turn's context: ``pool.submit(contextvars.copy_context().run, registry.run, call)``.
        """
        state = _Turn(self.max_repairs)
        token = self._turn.set(state)
        with self._lock:
            self._open_turns.append(state)
        try:
            yield
        finally:
            with self._lock:
                self._open_turns.remove(state)
            self._turn.reset(token)

    def _current_turn(self) -> _Turn | None:
        """This context's turn; else the one turn open (a thread it started); else, with
        several open, an empty budget (fail closed); None when no turn is open."""
        turn = self._turn.get()
        if turn is not None or not self._open_turns:
            return turn
        with self._lock:
            if len(self._open_turns) == 1:
                return self._open_turns[0]
            if not self._open_turns:
                return None
        return _Turn(0)

    # -- repair --------------------------------------------------------------------------
    def _record(self, events: Sequence[RepairEvent], dialect: str = "native") -> None:
        """The one place repairs are recorded: the log of events, ``on_repair``, and (with
        OpenTelemetry) one ``toolrepair.repair`` event each on the current span."""
        if not events:
            return
        add_repair_events(events, dialect, self.trace_content)
        with self._lock:
            self._events.extend(events)
        if self.on_repair is not None:
            for event in events:
                self.on_repair(event)

    def _policy_error(self, call: ToolCall) -> ToolExecutionError | None:
        # Policy sees the resolved name: `DeleteFile` and `functions.delete_file` are `delete_file`.
        if (self.allow is not None and call.name not in self.allow) or call.name in self.deny:
            return ToolExecutionError(f"Tool {call.name!r} is not allowed.", kind="denied", tool_name=call.name)
        if self.before_call is not None and self.before_call(call) is False:
            return ToolExecutionError(f"Tool {call.name!r} was refused by policy.", kind="denied", tool_name=call.name)
        return None

    def repair(self, call: ToolCall | Mapping[str, Any]) -> Repair:
        """Resolve the name, decode and coerce the arguments, apply policy; never runs the tool."""
        turn = self._current_turn()
        if turn is None:  # outside `turn()` every call has a budget of its own
            repair, _ = coerce_call(self._index, call, allow_silent=self.max_repairs > 0, limits=self.limits)
        else:
            reserved = turn.take()
            repair, silent = coerce_call(self._index, call, allow_silent=reserved, limits=self.limits)
            if reserved and not silent:
                turn.give_back()
        if repair.call is not None:
            denied = self._policy_error(repair.call)
            if denied is not None:
                return Repair(None, denied, ())
        self._record(repair.events, repair.call.dialect if repair.call is not None else "native")
        return repair

    # -- dispatch ------------------------------------------------------------------------
    def _prepare(self, name: str | ToolCall | Mapping[str, Any], arguments: Any) -> tuple[Repair, Entry]:
        call = name if isinstance(name, (ToolCall, Mapping)) else {"name": name, "arguments": arguments}
        repair = self.repair(call)
        if repair.error is not None:
            raise repair.error
        assert repair.call is not None
        entry = self._index.entry(repair.call.name)
        info = entry.info
        if info.target is None:
            raise ToolExecutionError(
                f"Tool {info.name!r} has no implementation to run.", kind="no-implementation", tool_name=info.name
            )
        if entry.needs_bind:
            assert info.signature is not None
            positional, rest = split_positional(info.signature, repair.call.arguments)
            try:
                info.signature.bind(*positional, **rest)
            except TypeError as exc:
                raise ToolExecutionError(
                    f"{exc}. {format_expected(info.name, entry.expected)}",
                    kind="bind",
                    tool_name=info.name,
                    expected_parameters=entry.expected,
                ) from None
        if self.max_repeats is not None:
            self._count_run(repair.call, dispatch=True)
        return repair, entry

    def _count_run(self, call: ToolCall, *, dispatch: bool) -> None:
        """Count the run ``call`` is about to make; raise the ``repeat`` answer instead when the
        same call ran ``max_repeats`` times in this turn (outside one: this conversation). A
        worker thread that cannot tell which of several open turns started it counts in a turn
        of its own, as it gets a budget of its own (see ``turn``). O(size of the arguments).

        A call id admitted before, with the same key and not yet dispatched, is that call
        checked again (vetted, then run): its verdict again, not counted. Once dispatched, the
        id names a call that ran: the next one to carry it is a new call, counted afresh (a
        model writing the same text call turn after turn gets the same derived id each turn)."""
        assert self.max_repeats is not None
        key = call_key(call.name, call.arguments)
        if call.id is not None:
            with self._admitted_lock:
                seen = self._admitted.get(call.id)
                if seen is not None and seen.key == key and not seen.dispatched:
                    if dispatch:
                        self._admitted[call.id] = _Admitted(key, seen.error, True)
                    if seen.error is not None:
                        raise seen.error
                    return
        turn = self._current_turn()
        counter = self._conversation if turn is None else turn.repeats
        runs = counter.admit(key, self.max_repeats)
        error = None
        if runs is not None:
            message = repeat_message(call.name, runs)
            self._record((RepairEvent("repeat", message, call.name, runs, None),), call.dialect)
            error = ToolExecutionError(message, kind="repeat", tool_name=call.name)
        if call.id is not None:
            with self._admitted_lock:
                self._admitted[call.id] = _Admitted(key, error, dispatch)
                self._admitted.move_to_end(call.id)
                while len(self._admitted) > MAX_TRACKED_CALLS:
                    self._admitted.popitem(last=False)
        if error is not None:
            raise error

    def admit(self, call: ToolCall, *, dispatch: bool = False) -> ToolExecutionError | None:
        """Count ``call`` (repaired) as about to run, for an integration whose framework runs
        it: None when it may, else the ``repeat`` answer to send instead (see ``max_repeats``).
        Checking the same call (id, name and arguments) again before it is dispatched gives the
        same verdict, so vetting a call and then running it through ``run`` counts it once.
        ``dispatch=True`` says the framework runs it now, with no later check: the next call
        carrying its id is a new call. O(size of the arguments)."""
        if self.max_repeats is None:
            return None
        try:
            self._count_run(call, dispatch=dispatch)
        except ToolExecutionError as error:
            return error
        return None

    def _withdraw(self, call: ToolCall) -> None:
        """Give back the count of ``call``, admitted to run but not run after all (a reply its
        framework refuses whole when one of its calls is refused). O(size of the arguments)."""
        if self.max_repeats is None:
            return
        if call.id is not None:
            with self._admitted_lock:
                seen = self._admitted.pop(call.id, None)
            if seen is not None and seen.error is not None:
                return  # refused: it was never counted
        turn = self._current_turn()
        (self._conversation if turn is None else turn.repeats).release(call_key(call.name, call.arguments))

    @staticmethod
    def _invoke(entry: Entry, target: Callable[..., Any], arguments: dict[str, Any]) -> Any:
        info = entry.info
        if info.call_style == "dict":
            return target(arguments)
        if entry.positional_only and info.signature is not None:
            positional, rest = split_positional(info.signature, arguments)
            return target(*positional, **rest)
        return target(**arguments)

    def execute(self, name: str | ToolCall | Mapping[str, Any], arguments: Any = None) -> Any:
        """Run one call and return the tool's raw value; raise ``ToolExecutionError`` otherwise.

        An async tool is run to completion here; inside a running event loop use ``aexecute``.
        """
        repair, entry = self._prepare(name, arguments)
        assert repair.call is not None and entry.info.target is not None
        try:
            value = self._invoke(entry, entry.info.target, repair.call.arguments)
        except ToolRepairError:
            raise
        except Exception as exc:
            raise _tool_error(entry.info.name, exc) from exc
        if inspect.isawaitable(value):
            value = self._await_sync(entry.info, value)
        return value

    @staticmethod
    def _await_sync(info: ToolInfo, awaitable: Any) -> Any:
        import asyncio  # only for an async tool called synchronously: not worth its import time otherwise

        try:
            asyncio.get_running_loop()
        except RuntimeError:
            pass
        else:
            close = getattr(awaitable, "close", None)
            if callable(close):
                close()
            raise ToolRepairError(
                f"Tool {info.name!r} is async and an event loop is running in this thread: "
                "use `await registry.aexecute(...)` or `await registry.arun(...)`."
            )

        async def _wait() -> Any:
            return await awaitable

        try:
            return asyncio.run(_wait())
        except ToolRepairError:
            raise
        except Exception as exc:
            raise _tool_error(info.name, exc) from exc

    async def aexecute(self, name: str | ToolCall | Mapping[str, Any], arguments: Any = None) -> Any:
        """The async twin of ``execute``: async tools are awaited, sync tools run as they are."""
        repair, entry = self._prepare(name, arguments)
        assert repair.call is not None and entry.info.target is not None
        target = entry.info.async_target or entry.info.target
        try:
            value = self._invoke(entry, target, repair.call.arguments)
            if inspect.isawaitable(value):
                value = await value
        except ToolRepairError:
            raise
        except Exception as exc:
            raise _tool_error(entry.info.name, exc) from exc
        return value

    def _outcome(
        self,
        call: ToolCall | Mapping[str, Any],
        repair: Repair | None,
        value: Any = None,
        error: ToolExecutionError | None = None,
    ) -> ToolOutcome:
        final = (
            repair.call
            if repair is not None and repair.call is not None
            else (call if isinstance(call, ToolCall) else _to_call(call))
        )
        events = repair.events if repair is not None else ()
        # An outcome's content (a tool's value or its error message) is attacker-controllable:
        # fed back into `salvage` by mistake it must not become a call.
        if error is not None:
            message = exception_message(error)  # a tool may raise ToolExecutionError itself
            self.mark_untrusted(message)
            return ToolOutcome(final, False, None, message, error, events)
        content = serialize_result(value, max_chars=self.max_result_chars)
        self.mark_untrusted(content)
        return ToolOutcome(final, True, value, content, None, events)

    def run(self, call: ToolCall | Mapping[str, Any]) -> ToolOutcome:
        """Run one call; tool failures come back as an outcome (``ok=False``), never raised.

        With ``opentelemetry-api`` installed the run is an ``execute_tool {name}`` span.
        """
        tracer = maybe_tracer()
        if tracer is None:
            return self._run(call)
        with self._span(tracer, call) as span:
            outcome = self._run(call)
            end_tool_span(span, outcome, self.trace_content)
            return outcome

    def _span(self, tracer: Any, call: ToolCall | Mapping[str, Any]) -> contextlib.AbstractContextManager[Any]:
        # The call as asked; the span takes the resolved name when the run ends.
        asked = call if isinstance(call, ToolCall) else _to_call(call)
        return tool_span(tracer, asked.name, asked.id, asked.arguments, self.trace_content)

    def _run(self, call: ToolCall | Mapping[str, Any]) -> ToolOutcome:
        try:
            repair, entry = self._prepare(call, None)
        except ToolExecutionError as exc:
            return self._outcome(call, None, error=exc)
        assert repair.call is not None and entry.info.target is not None
        try:
            value = self._invoke(entry, entry.info.target, repair.call.arguments)
            if inspect.isawaitable(value):
                value = self._await_sync(entry.info, value)
        except ToolExecutionError as exc:
            return self._outcome(call, repair, error=exc)
        except ToolRepairError:
            raise
        except Exception as exc:
            return self._outcome(call, repair, error=_tool_error(entry.info.name, exc))
        return self._outcome(call, repair, value)

    async def arun(self, call: ToolCall | Mapping[str, Any]) -> ToolOutcome:
        """The async twin of ``run``."""
        tracer = maybe_tracer()
        if tracer is None:
            return await self._arun(call)
        with self._span(tracer, call) as span:
            outcome = await self._arun(call)
            end_tool_span(span, outcome, self.trace_content)
            return outcome

    async def _arun(self, call: ToolCall | Mapping[str, Any]) -> ToolOutcome:
        try:
            repair, entry = self._prepare(call, None)
        except ToolExecutionError as exc:
            return self._outcome(call, None, error=exc)
        assert repair.call is not None and entry.info.target is not None
        target = entry.info.async_target or entry.info.target
        try:
            value = self._invoke(entry, target, repair.call.arguments)
            if inspect.isawaitable(value):
                value = await value
        except ToolExecutionError as exc:
            return self._outcome(call, repair, error=exc)
        except ToolRepairError:
            raise
        except Exception as exc:
            return self._outcome(call, repair, error=_tool_error(entry.info.name, exc))
        return self._outcome(call, repair, value)

    # -- text ----------------------------------------------------------------------------
    def mark_untrusted(self, text: str) -> None:
        """Remember ``text`` as untrusted (a tool result, a retrieved document): ``salvage`` will
        refuse it. Only digests are kept, at most ``MAX_UNTRUSTED``, oldest forgotten first.

        >>> registry = ToolRegistry([])
        >>> registry.mark_untrusted('<tool_call>{"name": "x"}</tool_call>')
        >>> registry.salvage('<tool_call>{"name": "x"}</tool_call>').rejected[0].reason
        'untrusted'
        """
        self._untrusted.mark(exact_str(text))  # TypeError for bytes; a str subclass's methods never run

    def _is_untrusted(self, text: str) -> bool:
        return self._untrusted.holds(text)

    def salvage(self, text: str, *, trusted: bool = True) -> SalvageResult:
        """Tool calls written as text, against this registry's names; nothing under ``hosted``.

        Text passed with ``trusted=False``, marked with ``mark_untrusted`` or returned as a
        ``run``/``arun`` outcome's ``content`` salvages to no calls and one ``untrusted``
        rejection; text longer than ``max_input_chars`` to one ``input-too-large`` rejection.
        """
        return self._salvaged(text, trusted=trusted)

    def _salvaged(self, text: str, *, trusted: bool = True, answered: bool = False) -> SalvageResult:
        """``salvage``; ``answered``: the content leaves out each rejected candidate too (cut
        by its span), for the integrations that answer every refused candidate as a refused
        call. A reply refused whole (``untrusted``, ``input-too-large``) stays the content."""
        text = exact_str(text)
        if self.profile == "hosted":
            return SalvageResult((), text, ())
        if not trusted or self._is_untrusted(text):
            return SalvageResult((), text, (Rejection("", (0, len(text)), "", RejectReason.UNTRUSTED, None),))
        from ._salvage._engine import config_of, salvage_reply

        config = config_of(self.dialects, model=self.model)
        return salvage_reply(text, self._index.names, config, self.limits, answered=answered)

    def calls(
        self, text: str | None, native: Sequence[ToolCall | Mapping[str, Any]] | None = None
    ) -> list[ToolCall | Mapping[str, Any]]:
        """The native calls (unchanged) when there are any, else the calls salvaged from ``text``.

        Either kind can be passed to ``run``/``arun``, which repairs it.
        """
        if native:
            return list(native)
        if not text:
            return []
        return list(self.salvage(text).calls)

    def stream(self, *, trusted: bool = True) -> StreamSalvager:
        """A StreamSalvager bound to this registry's names (salvaging nothing under ``hosted``
        or with ``trusted=False``: the text then passes through as text), releasing its events
        as ``StreamSalvager`` does with this registry's ``model``: with a profile, each call
        the moment it closes. A reply marked untrusted (``mark_untrusted``, a run outcome's
        ``content``) is refused as ``salvage`` refuses it: while a marked text begins as the
        reply does, the events from its first call on wait, and a reply that is one comes
        back as text at ``close()``."""
        from ._salvage import StreamSalvager
        from ._trusted_stream import TrustedStream

        if self.profile == "hosted" or not trusted:
            return StreamSalvager(self._index.names, dialects=())
        return TrustedStream(
            self._untrusted, self._index.names, dialects=self.dialects, model=self.model, limits=self.limits
        )


def _tool_error(name: str, exc: Exception) -> ToolExecutionError:
    """A tool's own failure: its message unchanged (or, when ``__str__`` fails, a message naming
    the exception's type), the exception as the cause."""
    error = ToolExecutionError(exception_message(exc), kind="tool-error", tool_name=name)
    error.__cause__ = exc
    return error


def _to_call(call: Mapping[str, Any]) -> ToolCall:
    name, args, ident, _, _ = call_parts(call)
    if isinstance(args, str):
        # Only a record of what was asked (for ToolOutcome.call); the repair decodes for real.
        with contextlib.suppress(ValueError, RecursionError):
            args = json.loads(args)
    if not isinstance(args, dict):
        args = {}
    return ToolCall(name, args, ident)
