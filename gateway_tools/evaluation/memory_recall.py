"""`gateway eval memory`: LoCoMo evidence recall of the memory injection.

gateway eval memory --data ../shared/data [--conversations 0-4] [--budgets 256,512,1024]
                    [--policy policy.yaml] [--output results.json]

Per conversation, every turn is stored in order as one memory of one user (dated with
its session's date). Then, for each question, the gateway's own retrieval (the
calibrated relevance over dense and keyword signals, `MemoryService.search`) and two
baselines through the same search (dense only, keyword only) rank the memories; the
ranked list is turned into the injected block exactly as the chat pipeline does
(`from_retrieval`, `build_block`) under each token budget. A question's evidence recall
is the fraction of its evidence turns whose text is in the block (a turn whose text
another turn repeats counts when either copy is there: the model sees the same words);
"complete" is whether all of them are. Conversations 3-4, which the relevance model was
not fitted on, are also summarised on their own.
"""

from __future__ import annotations

import asyncio
import json
import re
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

from gateway.embed.protocol import Embedder, Vectors
from gateway.memory.inject import Counter, build_block
from gateway.memory.records import MemoryRecord, MemoryScope
from gateway.memory.relevance import RelevanceScorer
from gateway.memory.retrieval import RankMode, ScopeIndex
from gateway.memory.service import MemoryService, NewMemory
from gateway.memory.session import from_retrieval
from gateway.memory.text import dedup_key
from gateway.policy.memory import MemoryPolicy
from gateway.storage.embedded.memory import open_embedded_memory

LOCOMO_FILE = Path("memory") / "locomo_conv0-4.json"
# LoCoMo's own category numbers (snap-research/LoCoMo).
CATEGORY_NAMES: dict[int, str] = {
    1: "multi-hop",
    2: "temporal",
    3: "open-domain",
    4: "single-hop",
    5: "adversarial",
}
METHODS: tuple[RankMode, ...] = ("fused", "dense", "keyword")
# The relevance model (gateway_tools/training/fit_memory_relevance.py) is fitted on
# conversations 0-2: these are reported on their own as well.
HELD_OUT_CONVERSATIONS = (3, 4)
DEFAULT_BUDGETS = "256,512,1024"
TARGET_MODEL = "gpt-4o-mini"
EMBED_BATCH = 64
TENANT = "locomo-eval"
_SESSION_KEY = re.compile(r"session_(\d+)")
# "D8:6", also the dataset's slips "D:11:26" and "D8:6; D9:17" in one string.
_DIA_ID = re.compile(r"D:?(\d+):(\d+)")
_SESSION_TIME_FORMAT = "%I:%M %p on %d %B, %Y"  # "1:56 pm on 8 May, 2023"


class BudgetExceeded(RuntimeError):
    """An injected block came out larger than its token budget: the injection is broken."""


@dataclass(frozen=True, slots=True)
class Turn:
    dia_id: str
    content: str
    created_at: float


@dataclass(frozen=True, slots=True)
class Question:
    text: str
    category: int
    evidence: tuple[str, ...]  # dia_ids present in the conversation, no repeats


@dataclass(frozen=True, slots=True)
class Conversation:
    index: int
    sample_id: str
    turns: tuple[Turn, ...]
    questions: tuple[Question, ...]
    now: float  # the last session's date + 1 day: when the questions are asked
    skipped_questions: int  # no evidence id that exists in the conversation
    dropped_evidence: int  # evidence ids (of kept questions) not in the conversation


@dataclass(frozen=True, slots=True)
class Cell:
    """One question, one method, one budget."""

    recall: float
    complete: bool
    tokens: int
    injected: int  # memories in the block


@dataclass(frozen=True, slots=True)
class QuestionOutcome:
    conversation: int
    category: int
    evidence: int
    retrieved: dict[str, int]  # method -> memories search returned (0: all below min_score)
    cells: dict[tuple[str, int], Cell]  # (method, budget)


# --- loading -------------------------------------------------------------------------------


def parse_session_time(text: str) -> float:
    """LoCoMo's "1:56 pm on 8 May, 2023" (no zone: read as UTC) -> epoch seconds."""
    moment = datetime.strptime(text.strip(), _SESSION_TIME_FORMAT)
    return moment.replace(tzinfo=UTC).timestamp()


def turn_content(turn: Mapping[str, Any]) -> str:
    content = f"{turn['speaker']}: {turn['text']}"
    caption = turn.get("blip_caption")
    if caption:
        content += f" [shared a photo: {caption}]"
    return content


def evidence_ids(raw: Iterable[Any]) -> list[str]:
    """Normalised dia_ids in order, without repeats."""
    found: dict[str, None] = {}
    for item in raw:
        for match in _DIA_ID.finditer(str(item)):
            found[f"D{match.group(1)}:{match.group(2)}"] = None
    return list(found)


def _sessions(conversation: Mapping[str, Any]) -> list[tuple[int, float, list[Any]]]:
    sessions: list[tuple[int, float, list[Any]]] = []
    for key, turns in conversation.items():
        match = _SESSION_KEY.fullmatch(key)
        if match is None or not isinstance(turns, list) or not turns:
            continue
        when = parse_session_time(str(conversation[f"{key}_date_time"]))
        sessions.append((int(match.group(1)), when, turns))
    return sorted(sessions, key=lambda session: session[0])


def parse_conversation(raw: Mapping[str, Any], index: int) -> Conversation:
    sessions = _sessions(raw["conversation"])
    if not sessions:
        raise ValueError(f"conversation {index} has no sessions")
    turns = tuple(
        # + the turn's position in seconds: turns of a session keep their order.
        Turn(str(turn["dia_id"]), turn_content(turn), when + position)
        for _, when, session_turns in sessions
        for position, turn in enumerate(session_turns)
    )
    known = {turn.dia_id for turn in turns}
    questions: list[Question] = []
    skipped = dropped = 0
    for qa in raw.get("qa", []):
        listed = evidence_ids(qa.get("evidence") or [])
        evidence = tuple(dia_id for dia_id in listed if dia_id in known)
        if not evidence:
            skipped += 1
            continue
        dropped += len(listed) - len(evidence)
        questions.append(Question(str(qa["question"]), int(qa["category"]), evidence))
    last = max(when for _, when, _ in sessions)
    return Conversation(
        index=index,
        sample_id=str(raw.get("sample_id", index)),
        turns=turns,
        questions=tuple(questions),
        now=last + timedelta(days=1).total_seconds(),
        skipped_questions=skipped,
        dropped_evidence=dropped,
    )


def load_conversations(path: Path, selection: Sequence[int] | None) -> list[Conversation]:
    raw = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(raw, list):
        raise ValueError(f"{path}: expected a list of conversations")
    chosen = range(len(raw)) if selection is None else selection
    for index in chosen:
        if not 0 <= index < len(raw):
            raise ValueError(f"{path} holds conversations 0-{len(raw) - 1}, not {index}")
    return [parse_conversation(raw[index], index) for index in chosen]


def parse_selection(text: str) -> list[int]:
    """ "0-4", "1,3" or "0-1,4" -> conversation indexes in order, without repeats."""
    chosen: dict[int, None] = {}
    for part in text.split(","):
        first, _, last = part.strip().partition("-")
        if not first.isdigit() or (last and not last.isdigit()):
            raise ValueError(f"bad conversation selection {text!r} (e.g. 0-4 or 0,2)")
        for index in range(int(first), int(last or first) + 1):
            chosen[index] = None
    if not chosen:
        raise ValueError(f"bad conversation selection {text!r}")
    return list(chosen)


def parse_budgets(text: str) -> tuple[int, ...]:
    try:
        budgets = tuple(dict.fromkeys(int(part) for part in text.split(",")))
    except ValueError:
        raise ValueError(f"bad budgets {text!r} (e.g. 256,512,1024)") from None
    if not budgets or min(budgets) <= 0:
        raise ValueError(f"budgets must be positive token counts, not {text!r}")
    return budgets


# --- evaluation ----------------------------------------------------------------------------


async def embed_in_batches(embedder: Embedder, texts: Sequence[str], batch: int) -> Vectors:
    parts = [await embedder.embed(list(texts[i : i + batch])) for i in range(0, len(texts), batch)]
    if not parts:
        return np.zeros((0, embedder.dimensions), dtype=np.float32)
    return np.concatenate(parts).astype(np.float32)


async def ingest(
    service: MemoryService, scope: MemoryScope, conversation: Conversation, policy: MemoryPolicy
) -> list[MemoryRecord]:
    """Stores every turn (batches of `EMBED_BATCH`, one embedding call each). Guarded
    turns are quarantined, as the policy's `quarantine` setting would do, not refused."""
    guarded = policy.model_copy(update={"write_guard": "quarantine"})
    records: list[MemoryRecord] = []
    for start in range(0, len(conversation.turns), EMBED_BATCH):
        batch = [
            NewMemory(
                content=turn.content,
                source="locomo",
                created_at=turn.created_at,
                metadata={"dia_id": turn.dia_id},
            )
            for turn in conversation.turns[start : start + EMBED_BATCH]
        ]
        records.extend(await service.add(scope, batch, guarded))
    return records


def check_budget(tokens: int, budget: int) -> None:
    if tokens > budget:
        raise BudgetExceeded(f"an injected block took {tokens} tokens, over its budget {budget}")


@dataclass(frozen=True, slots=True)
class EvalContext:
    """What every question of one conversation is evaluated with."""

    service: MemoryService
    scope: MemoryScope
    index: ScopeIndex
    keys: Mapping[str, str]  # dia_id -> dedup key of its memory's text
    counter: Counter
    budgets: tuple[int, ...]
    policy: MemoryPolicy
    conversation: int
    now: float


async def evaluate_question(
    context: EvalContext, question: Question, query_vector: Vectors
) -> QuestionOutcome:
    """Searches with each method, builds each budget's block, checks its evidence."""
    wanted = [context.keys[dia_id] for dia_id in question.evidence]
    retrieved: dict[str, int] = {}
    cells: dict[tuple[str, int], Cell] = {}
    for method in METHODS:
        ranked = await context.service.search(
            context.scope,
            question.text,
            context.policy.retrieve_top_k,
            context.policy,
            query_vector=query_vector,
            mode=method,
            index=context.index,
            now=context.now,
        )
        retrieved[method] = len(ranked)
        # As the gateway injects without a session: the best `inject_top_n` that fit.
        candidates = [from_retrieval(scored) for scored in ranked][
            : context.policy.session.inject_top_n
        ]
        for budget in context.budgets:
            block = build_block(candidates, context.counter, budget)
            check_budget(block.tokens, budget)
            included = {candidate.key for candidate in block.included}
            found = sum(1 for key in wanted if key in included)
            cells[(method, budget)] = Cell(
                recall=found / len(wanted),
                complete=found == len(wanted),
                tokens=block.tokens,
                injected=len(block.included),
            )
    return QuestionOutcome(
        conversation=context.conversation,
        category=question.category,
        evidence=len(question.evidence),
        retrieved=retrieved,
        cells=cells,
    )


async def evaluate_conversation(
    service: MemoryService,
    embedder: Embedder,
    conversation: Conversation,
    counter: Counter,
    budgets: tuple[int, ...],
    policy: MemoryPolicy,
) -> tuple[list[QuestionOutcome], int]:
    """The outcomes of the conversation's questions, and how many turns were quarantined."""
    scope = MemoryScope(TENANT, f"conversation-{conversation.index}")
    stored = await ingest(service, scope, conversation, policy)
    records = await service.store.in_scope(scope)
    context = EvalContext(
        service=service,
        scope=scope,
        index=await service.scope_index(scope),
        keys={str(record.metadata["dia_id"]): dedup_key(record.content) for record in records},
        counter=counter,
        budgets=budgets,
        policy=policy,
        conversation=conversation.index,
        now=conversation.now,
    )
    vectors = await embed_in_batches(
        embedder, [question.text for question in conversation.questions], EMBED_BATCH
    )
    outcomes = [
        await evaluate_question(context, question, vector)
        for question, vector in zip(conversation.questions, vectors, strict=True)
    ]
    quarantined = sum(1 for record in stored if record.quarantine is not None)
    return outcomes, quarantined


def _fixed_clock(now: float) -> Callable[[], float]:
    return lambda: now


async def evaluate_memory(
    conversations: Sequence[Conversation],
    embedder: Embedder,
    counter: Counter,
    budgets: tuple[int, ...],
    policy: MemoryPolicy,
    relevance_model: RelevanceScorer | None = None,  # None: the packaged model
) -> tuple[list[QuestionOutcome], int]:
    """Every conversation in one throwaway embedded store (one user each)."""
    outcomes: list[QuestionOutcome] = []
    quarantined = 0
    with tempfile.TemporaryDirectory(prefix="gateway-memory-eval-") as folder:
        store, sessions, database = await open_embedded_memory(Path(folder))
        try:
            for conversation in conversations:
                clock = _fixed_clock(conversation.now)
                service = MemoryService(
                    store, sessions, embedder, clock=clock, relevance_model=relevance_model
                )
                found, guarded = await evaluate_conversation(
                    service, embedder, conversation, counter, budgets, policy
                )
                outcomes.extend(found)
                quarantined += guarded
        finally:
            await database.close()
    return outcomes, quarantined


# --- summary -------------------------------------------------------------------------------


def _mean(values: Sequence[float]) -> float:
    return float(sum(values) / len(values)) if values else 0.0


def summarise_group(outcomes: Sequence[QuestionOutcome], budgets: Sequence[int]) -> dict[str, Any]:
    """Mean evidence recall and share of complete questions, as percentages."""
    recall: dict[str, dict[str, float]] = {}
    complete: dict[str, dict[str, float]] = {}
    for method in METHODS:
        recall[method] = {}
        complete[method] = {}
        for budget in budgets:
            cells = [outcome.cells[(method, budget)] for outcome in outcomes]
            recall[method][str(budget)] = round(100 * _mean([c.recall for c in cells]), 2)
            complete[method][str(budget)] = round(
                100 * _mean([1.0 if c.complete else 0.0 for c in cells]), 2
            )
    return {"questions": len(outcomes), "recall_pct": recall, "complete_pct": complete}


def summarise(outcomes: Sequence[QuestionOutcome], budgets: Sequence[int]) -> dict[str, Any]:
    by_category: dict[str, Any] = {}
    for category in sorted({outcome.category for outcome in outcomes}):
        group = [outcome for outcome in outcomes if outcome.category == category]
        by_category[str(category)] = {
            "category": category,
            "name": CATEGORY_NAMES.get(category, "unknown"),
            **summarise_group(group, budgets),
        }
    tokens: dict[str, dict[str, float]] = {}
    max_tokens: dict[str, dict[str, int]] = {}
    empty: dict[str, dict[str, int]] = {}
    for method in METHODS:
        tokens[method], max_tokens[method], empty[method] = {}, {}, {}
        for budget in budgets:
            cells = [outcome.cells[(method, budget)] for outcome in outcomes]
            tokens[method][str(budget)] = round(_mean([c.tokens for c in cells]), 1)
            max_tokens[method][str(budget)] = max((c.tokens for c in cells), default=0)
            empty[method][str(budget)] = sum(1 for c in cells if c.injected == 0)
    held_out = [o for o in outcomes if o.conversation in HELD_OUT_CONVERSATIONS]
    return {
        "by_category": by_category,
        "all": summarise_group(outcomes, budgets),
        "held_out": summarise_group(held_out, budgets) if held_out else None,
        "mean_tokens": tokens,
        "max_tokens": max_tokens,
        "empty_blocks": empty,
        "nothing_retrieved": {
            method: sum(1 for outcome in outcomes if outcome.retrieved[method] == 0)
            for method in METHODS
        },
        "mean_retrieved": {
            method: round(_mean([outcome.retrieved[method] for outcome in outcomes]), 2)
            for method in METHODS
        },
    }


def _table(summary: Mapping[str, Any], budgets: Sequence[int], field: str) -> list[str]:
    header = ["category", "n"] + [f"{budget} {method}" for budget in budgets for method in METHODS]
    lines = [
        "| " + " | ".join(header) + " |",
        "|---|---:|" + "---:|" * (len(budgets) * len(METHODS)),
    ]
    rows = [
        (f"{group['category']} {group['name']}", group) for group in summary["by_category"].values()
    ]
    rows.append(("all", summary["all"]))
    if summary.get("held_out"):
        rows.append(("held out 3-4", summary["held_out"]))
    for label, group in rows:
        values = [
            f"{group[field][method][str(budget)]:.1f}%" for budget in budgets for method in METHODS
        ]
        lines.append(f"| {label} | {group['questions']} | " + " | ".join(values) + " |")
    return lines


def _per_method(values: Mapping[str, Mapping[str, Any]], budgets: Sequence[int]) -> str:
    return "; ".join(
        f"{method} " + " / ".join(str(values[method][str(budget)]) for budget in budgets)
        for method in METHODS
    )


def format_report(summary: Mapping[str, Any], budgets: Sequence[int]) -> str:
    budget_list = "/".join(str(budget) for budget in budgets)
    lines = ["", "### mean evidence recall (% of evidence turns in the injected block)"]
    lines += _table(summary, budgets, "recall_pct")
    lines += ["", "### questions with all their evidence injected (%)"]
    lines += _table(summary, budgets, "complete_pct")
    lines += [
        "",
        f"mean tokens injected (budget {budget_list}): "
        + _per_method(summary["mean_tokens"], budgets),
        f"max tokens injected (budget {budget_list}): "
        + _per_method(summary["max_tokens"], budgets),
        f"questions with an empty block (budget {budget_list}): "
        + _per_method(summary["empty_blocks"], budgets),
        "questions with nothing retrieved (all below min_score): "
        + "; ".join(f"{m} {v}" for m, v in summary["nothing_retrieved"].items()),
        f"mean memories retrieved (top_k {summary['config']['retrieve_top_k']}, "
        f"inject at most {summary['config']['inject_top_n']}, after min_score): "
        + "; ".join(f"{m} {v}" for m, v in summary["mean_retrieved"].items()),
    ]
    return "\n".join(lines)


# --- command -------------------------------------------------------------------------------


async def _run(
    path: Path,
    selection: Sequence[int] | None,
    budgets: tuple[int, ...],
    policy: MemoryPolicy,
    embedder: Embedder | None,
    relevance_model: RelevanceScorer | None = None,
) -> dict[str, Any]:
    from gateway.memory.tokens import Tokenizers

    started = time.perf_counter()
    conversations = load_conversations(path, selection)
    if embedder is None:
        from gateway.components import load_local_embedder

        embedder = await load_local_embedder()
    loaded = time.perf_counter()
    counter = Tokenizers().for_model(TARGET_MODEL)
    outcomes, quarantined = await evaluate_memory(
        conversations, embedder, counter, budgets, policy, relevance_model
    )
    finished = time.perf_counter()
    summary = summarise(outcomes, budgets)
    return {
        "config": {
            "data": str(path),
            "conversations": [conversation.index for conversation in conversations],
            "budgets": list(budgets),
            "methods": list(METHODS),
            "retrieve_top_k": policy.retrieve_top_k,
            "inject_top_n": policy.session.inject_top_n,
            "embedder": embedder.name,
            "token_encoding": getattr(counter, "encoding_name", TARGET_MODEL),
            "ranking": policy.ranking.model_dump(),
            "categories": {str(number): name for number, name in CATEGORY_NAMES.items()},
        },
        "data": {
            "turns": sum(len(conversation.turns) for conversation in conversations),
            "questions": len(outcomes),
            "skipped_questions": sum(c.skipped_questions for c in conversations),
            "dropped_evidence_ids": sum(c.dropped_evidence for c in conversations),
            "quarantined_turns": quarantined,
        },
        **summary,
        "seconds": {
            "load": round(loaded - started, 2),
            "evaluate": round(finished - loaded, 2),
            "wall": round(finished - started, 2),
        },
    }


def run_memory_eval(
    data_dir: Path | None,
    *,
    conversations: str | None = None,
    budgets: str = DEFAULT_BUDGETS,
    policy_path: str | None = None,
    output: str | None = None,
    command_line: str = "gateway eval memory",
    embedder: Embedder | None = None,
    relevance_model: RelevanceScorer | None = None,
) -> int:
    print(f"$ {command_line}")
    path = data_dir / LOCOMO_FILE if data_dir is not None else None
    if path is None or not path.is_file():
        print(f"gateway eval memory: --data must name the shared data folder (with {LOCOMO_FILE})")
        return 2
    try:
        selection = parse_selection(conversations) if conversations else None
        chosen_budgets = parse_budgets(budgets)
        policy = _load_policy(policy_path)
    except ValueError as exc:
        print(f"gateway eval memory: {exc}")
        return 2
    results = asyncio.run(_run(path, selection, chosen_budgets, policy, embedder, relevance_model))
    results["config"]["command"] = command_line
    results["config"]["policy"] = policy_path or "built-in defaults"
    data = results["data"]
    print(
        f"conversations {results['config']['conversations']}: {data['turns']} turns, "
        f"{data['questions']} questions ({data['skipped_questions']} skipped without "
        f"evidence, {data['dropped_evidence_ids']} unknown evidence ids dropped, "
        f"{data['quarantined_turns']} turns quarantined); embedder {results['config']['embedder']}"
        f", tokens {results['config']['token_encoding']}, policy {results['config']['policy']}"
    )
    print(format_report(results, chosen_budgets))
    seconds = results["seconds"]
    print(
        f"wall time {seconds['wall']:.1f} s (loading {seconds['load']:.1f} s, "
        f"evaluation {seconds['evaluate']:.1f} s)"
    )
    if output:
        Path(output).write_text(json.dumps(results, indent=2, ensure_ascii=False))
    return 0


def _load_policy(path: str | None) -> MemoryPolicy:
    if path is None:
        return MemoryPolicy()
    from gateway.policy.loader import PolicyError, load_policy_file

    try:
        return load_policy_file(Path(path)).memory
    except PolicyError as exc:
        raise ValueError(str(exc)) from None
