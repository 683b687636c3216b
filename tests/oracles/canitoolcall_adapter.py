"""toolrepair as a canitoolcall engine: the suite's adapter protocol over ``salvage_text``
and ``StreamSalvager``, so its own worker, chunkings and checks judge the salvage engine.

toolrepair reads text, not token ids, so a unit here is one piece of the raw output: each
occurrence of one of the family's markers (the special tokens the suite lists in
``family.json``) is one unit, like a special token an engine never splits, and every other
character is one unit of its own. The suite's ``special`` strategy then splits at the
markers, ``token`` feeds one piece per delta, and its ``char`` strategies split anywhere,
markers included (a text stream can).

The suite judges three things per reply: the calls, ``content`` and ``reasoning_content``.
``Verdict.CALLS`` blanks content and reasoning on both sides (the expected record and every
parse) before the suite's checks run, so only the calls (names, arguments, order, leaks into
arguments, stream equality of the calls) are judged; ``Verdict.FULL`` runs the checks on
everything toolrepair hands back. Each reply is read as a user of its model would configure
toolrepair: the model profile its name picks (the proxy's table), opened where the generation
prompt ends inside reasoning, and ``reasoning_calls="take"``, the engines' "a call implies
``</think>``" (off by default in the library). Reasoning is passed through when ``SalvageResult`` carries a
``reasoning`` field and the stream emits ``ReasoningDelta`` events; before that, reasoning stays
in ``content`` and the full verdict judges it so.
"""

from __future__ import annotations

import dataclasses
import enum
import json
from collections.abc import Collection, Iterable, Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from canitoolcall.adapters.base import Adapter, ReplayInput, Support, ToolSpec
from canitoolcall.adapters.worker import replay
from canitoolcall.checks import case_status, run_checks
from canitoolcall.chunking import DEFAULT_STRATEGIES, ChunkStrategy
from canitoolcall.fixtures import Family, Fixture, load_families, load_fixtures
from canitoolcall.results import CheckResult, Observation, ParsedToolCall, ParseResult, Status

import toolrepair as tr

__all__ = [
    "STRATEGIES",
    "Case",
    "ToolrepairAdapter",
    "Verdict",
    "all_fixtures",
    "baseline_path",
    "families",
    "judge",
    "pieces",
    "scores",
    "write_baseline",
]

# The suite's default replay set (one, special, token, five seeded random groupings) plus
# four character splits that cut inside markers: twelve ways to stream each reply.
STRATEGIES: tuple[ChunkStrategy, ...] = (
    *DEFAULT_STRATEGIES,
    *(ChunkStrategy("char", seed=s) for s in range(4)),
)


class Verdict(enum.Enum):
    CALLS = "calls"
    FULL = "full"


def pieces(text: str, markers: Iterable[str]) -> tuple[str, ...]:
    """``text`` cut into units: every marker occurrence whole (longest first where two
    start at one place), every other character alone. O(len(text) * number of markers)."""
    ordered = sorted({m for m in markers if m}, key=len, reverse=True)
    out: list[str] = []
    i = 0
    while i < len(text):
        for m in ordered:
            if text.startswith(m, i):
                out.append(m)
                i += len(m)
                break
        else:
            out.append(text[i])
            i += 1
    return tuple(out)


def _registry(tools: Sequence[ToolSpec]) -> tr.ToolRegistry:
    """The fixture's offered tools, known by their schemas alone."""
    specs: list[tr.ToolSpec] = []
    for tool in tools:
        fn = tool.get("function", tool)
        if isinstance(fn, Mapping) and isinstance(fn.get("name"), str):
            specs.append(tr.ToolSpec(fn["name"], fn.get("parameters") or {"type": "object", "properties": {}}))
    return tr.ToolRegistry(specs)


_THINK = (("<think>", "</think>"),)


def _profile(raw: ReplayInput) -> tr.ModelProfile | None:
    """The model profile a user of this model would pass: the proxy's table of model names for
    the reasoning convention, and whether the chat template opened reasoning (the generation
    prompt ends inside an opened pair; without a prompt, the named profile says), with every
    built-in dialect kept, as the proxy keeps them."""
    from toolrepair.proxy._model import profile_for

    named = profile_for(None, raw.model)
    pairs = (named.reasoning if named is not None else ()) or _THINK
    prompt = raw.generation_prompt
    if prompt is not None:
        opened = any(prompt.rstrip().lower().endswith(o.lower()) for o, _ in pairs)
    else:
        opened = bool(raw.thinking) and named is not None and named.opened
    if named is None and not opened:
        return None
    name = named.name if named is not None else "opened-by-prompt"
    return tr.ModelProfile(name, dialects=tr.DIALECTS, reasoning=pairs, opened=opened)


def _parsed(call: tr.ToolCall, registry: tr.ToolRegistry) -> ParsedToolCall:
    """The call as its tool would receive it: salvaged, then repaired against the offered
    schema (``"5"`` -> 5 for an integer), which is what ``ToolRegistry.run`` does before it
    calls the tool. A call the repair refuses is reported as salvaged, for the suite's
    schema check to judge."""
    repaired = tr.repair_call(call, registry).call
    arguments = repaired.arguments if repaired is not None else call.arguments
    return ParsedToolCall(call.name, json.dumps(arguments, ensure_ascii=False))


class ToolrepairAdapter(Adapter):
    """The suite's adapter contract, with toolrepair's salvage engine as the parser."""

    name = "toolrepair"
    pinned_version = tr.__version__
    supports_text_deltas = True
    tokens_per_step = "many"

    def __init__(self, families: Mapping[str, Family]) -> None:
        self._markers = {slug: tuple(fam.markers) for slug, fam in families.items()}
        self._pieces: dict[str, tuple[str, ...]] = {}
        self._registries: dict[str, tr.ToolRegistry] = {}

    def _registry_for(self, raw: ReplayInput, tools: Sequence[ToolSpec]) -> tr.ToolRegistry:
        got = self._registries.get(raw.fixture_id)
        if got is None:
            got = self._registries[raw.fixture_id] = _registry(tools)
        return got

    def version(self) -> str:
        return tr.__version__

    def supports(self, family: str, model: str) -> Support:
        return Support(True)

    def parser_config(self, raw: ReplayInput) -> dict[str, Any]:
        return {"dialects": "default", "allowed": "the fixture's tools"}

    def _units_of(self, raw: ReplayInput) -> tuple[str, ...]:
        got = self._pieces.get(raw.fixture_id)
        if got is None:
            got = self._pieces[raw.fixture_id] = pieces(raw.text, self._markers.get(raw.family, ()))
        return got

    def units(self, raw: ReplayInput) -> list[int]:
        return list(range(len(self._units_of(raw))))

    def special_token_ids(self, raw: ReplayInput) -> Collection[int] | None:
        markers = set(self._markers.get(raw.family, ()))
        return frozenset(i for i, p in enumerate(self._units_of(raw)) if p in markers)

    def parse(self, raw: ReplayInput, tools: Sequence[ToolSpec]) -> ParseResult:
        registry = self._registry_for(raw, tools)
        try:
            result = tr.salvage_text(raw.text, registry.names, model=_profile(raw), reasoning_calls="take")
        except Exception as e:  # an engine exception is an outcome (adapter contract rule 4)
            return ParseResult(exception=f"{type(e).__name__}: {e}")
        reasoning = getattr(result, "reasoning", None)
        return ParseResult(
            content=result.content or None,
            reasoning_content=reasoning or None,
            tool_calls=tuple(_parsed(c, registry) for c in result.calls),
        )

    def parse_stream(self, raw: ReplayInput, chunks: Sequence[Sequence[int]], tools: Sequence[ToolSpec]) -> ParseResult:
        units = self._units_of(raw)
        return self.parse_stream_text(raw, ["".join(units[i] for i in chunk) for chunk in chunks], tools)

    def parse_stream_text(self, raw: ReplayInput, deltas: Sequence[str], tools: Sequence[ToolSpec]) -> ParseResult:
        content: list[str] = []
        reasoning: list[str] = []
        calls: list[ParsedToolCall] = []
        reasoning_delta = getattr(tr, "ReasoningDelta", None)
        registry = self._registry_for(raw, tools)
        try:
            stream = tr.StreamSalvager(registry.names, model=_profile(raw), reasoning_calls="take")
            for events in (*(stream.feed(d) for d in deltas), stream.close()):
                for event in events:
                    if isinstance(event, tr.ToolCallReady):
                        calls.append(_parsed(event.call, registry))
                    elif reasoning_delta is not None and isinstance(event, reasoning_delta):
                        reasoning.append(event.text)
                    else:
                        content.append(event.text)
        except Exception as e:
            return ParseResult(exception=f"{type(e).__name__}: {e}")
        return ParseResult(
            content="".join(content) or None,
            reasoning_content="".join(reasoning) or None,
            tool_calls=tuple(calls),
        )


@lru_cache(maxsize=1)
def families() -> dict[str, Family]:
    return load_families()


@lru_cache(maxsize=1)
def all_fixtures() -> tuple[Fixture, ...]:
    return tuple(load_fixtures())


@dataclasses.dataclass(frozen=True, slots=True)
class Case:
    """One fixture's verdict: the suite's status over every parse, and its check rows."""

    fixture_id: str
    family: str
    status: Status
    rows: tuple[CheckResult, ...]

    @property
    def passed(self) -> bool:
        return self.status is Status.PASS

    def failures(self) -> list[str]:
        return [f"{r.check}[{r.strategy}]: {r.detail}" for r in self.rows if r.status is not Status.PASS]


def _calls_only(result: Mapping[str, Any]) -> ParseResult:
    return dataclasses.replace(ParseResult.from_dict(result), content=None, reasoning_content=None)


def judge(
    fixture: Fixture,
    adapter: ToolrepairAdapter,
    verdict: Verdict = Verdict.CALLS,
    strategies: Sequence[ChunkStrategy] = STRATEGIES,
) -> Case:
    """Replay ``fixture`` through the suite's own worker and judge it with its own checks.

    Every strategy counts (none is synthetic here: a text stream can split anywhere)."""
    family = families().get(fixture.family)
    reply = replay(adapter, fixture, family, strategies)
    if verdict is Verdict.CALLS:
        nonstream = _calls_only(reply["nonstream"])
        streams = {k: _calls_only(v) for k, v in reply["streams"].items()}
        if fixture.expected is not None:
            expected = dataclasses.replace(fixture.expected, content=None, reasoning_content=None)
            fixture = dataclasses.replace(fixture, expected=expected)
    else:
        nonstream = ParseResult.from_dict(reply["nonstream"])
        streams = {k: ParseResult.from_dict(v) for k, v in reply["streams"].items()}
    obs = Observation(nonstream=nonstream, streams=streams)
    rows = tuple(run_checks(fixture, family, obs))
    return Case(fixture.id, fixture.family, case_status(rows), rows)


def baseline_path(verdict: Verdict) -> Path:
    """The committed pass set for ``verdict``: ``{family: [fixture ids that pass]}``."""
    return Path(__file__).with_name(f"canitoolcall_{verdict.value}_baseline.json")


def scores(verdict: Verdict = Verdict.CALLS, strategies: Sequence[ChunkStrategy] = STRATEGIES) -> dict[str, list[Case]]:
    """Every fixture judged, by family (fixture order within one), streamed ``strategies`` ways."""
    adapter = ToolrepairAdapter(families())
    out: dict[str, list[Case]] = {}
    for fixture in all_fixtures():
        out.setdefault(fixture.family, []).append(judge(fixture, adapter, verdict, strategies))
    return out


def write_baseline(verdict: Verdict) -> Path:
    """Record today's pass set (run by hand after an improvement, never by the tests)."""
    passing = {
        family: sorted(c.fixture_id for c in cases if c.passed) for family, cases in sorted(scores(verdict).items())
    }
    path = baseline_path(verdict)
    path.write_text(json.dumps(passing, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


if __name__ == "__main__":  # from tests/: python -m oracles.canitoolcall_adapter [score] [calls|full]
    import sys

    args = sys.argv[1:]
    score = bool(args) and args[0] == "score"
    chosen = Verdict(args[int(score)] if len(args) > int(score) else "calls")
    if not score:
        print(write_baseline(chosen))
    else:
        by_family = scores(chosen)
        for family, cases in sorted(by_family.items()):
            print(f"{family}: {sum(c.passed for c in cases)}/{len(cases)}")
        total = [c for cases in by_family.values() for c in cases]
        print(f"total: {sum(c.passed for c in total)}/{len(total)}")
