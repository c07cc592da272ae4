"""Measure the non-cacheable classifier on labelled public sets.

    python -m gateway_tools.evaluation.classifier_sets ../shared/data

`data_dir` holds `intents/` and `followups/` (see the shared data README; the files are
never copied into this repository). Each evaluation enables only the class it measures,
so that a higher-precedence class (an ID, a write) cannot hide a miss or a false
positive of the class under test; the follow-up set also reports the rate of ANY class on
main queries, which is what caching loses on them.

Rates come with Wilson 95% intervals: the sets are small (20 utterances per CLINC
intent, ~800 dependent SituatedQA questions) and the interval says how far to trust a
difference.

Most MeanCache "follow-up queries" are self-contained questions ("What is bile?") that
mean the same without the main query; the classifier leaves those cacheable on purpose,
so follow-up recall here is bounded far below 1. The number to watch there is the rate
on main queries (single turns that must stay cacheable).
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gateway.classify.classifier import (
    ClassifierSettings,
    NonCacheableClass,
    RequestClassifier,
)

# CLINC150 intents whose requests ACT: money moves, bookings and orders are made or
# cancelled, messages and calls go out, devices, lists, calendars, reminders and the
# assistant's own settings change. Answering them from a cache would skip the action.
ACTION_INTENTS: tuple[str, ...] = (
    "alarm",  # set an alarm
    "book_flight",
    "book_hotel",
    "calendar_update",  # add/remove calendar events
    "cancel_reservation",
    "car_rental",
    "change_accent",  # assistant settings
    "change_ai_name",
    "change_language",
    "change_speed",
    "change_user_name",
    "change_volume",
    "freeze_account",
    "make_call",
    "next_song",
    "order",
    "order_checks",
    "pay_bill",
    "play_music",
    "reminder_update",  # create a reminder
    "reset_settings",
    "restaurant_reservation",
    "schedule_maintenance",
    "share_location",
    "shopping_list_update",
    "smart_home",
    "sync_device",
    "text",
    "timer",
    "todo_list_update",
    "transfer",
    "travel_notification",  # tell the bank about a trip
    "uber",
    "update_playlist",
    "whisper_mode",
)
# Intents about an action where a large share of the utterances (a quarter or more of the
# training split, by reading them) are questions on how to do it or reads ("how do I
# report a lost card", "can I change my insurance", "I forgot my PIN", "is a meeting room
# free"): the classifier is right to leave those cacheable, so these intents count neither
# as actions nor as non-actions; their write rate is reported on its own.
MIXED_INTENTS: tuple[str, ...] = (
    "credit_limit_change",
    "direct_deposit",
    "insurance_change",
    "new_card",
    "pto_request",
    "redeem_rewards",
    "report_fraud",
    "report_lost_card",
    "rollover_401k",
    "cancel",  # "stop", "cancel that": aborts the assistant's current task
    "confirm_reservation",
    "damaged_card",  # "my card is bent" alongside "report it", "order a new one"
    "pin_change",  # half are "I forgot my PIN" / "tell me my PIN": reads
    "schedule_meeting",  # a third are "how do I set up a meeting" / "is a room free"
)
# SNIPS: adding to a playlist, booking, playing and rating act; the others look things up.
SNIPS_ACTION_INTENTS: tuple[str, ...] = ("AddToPlaylist", "BookRestaurant", "PlayMusic", "RateBook")
SNIPS_OTHER_INTENTS: tuple[str, ...] = ("GetWeather", "SearchCreativeWork", "SearchScreeningEvent")

_Z95 = 1.959963984540054


def wilson_interval(successes: int, n: int) -> tuple[float, float]:
    """Wilson score 95% interval for a proportion; (0, 1) when n is 0."""
    if n <= 0:
        return (0.0, 1.0)
    p = successes / n
    z2 = _Z95 * _Z95
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = _Z95 * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


@dataclass(frozen=True, slots=True)
class Rate:
    """`hits` out of `n`, with its Wilson 95% interval."""

    hits: int
    n: int

    @property
    def value(self) -> float:
        return self.hits / self.n if self.n else 0.0

    @property
    def interval(self) -> tuple[float, float]:
        return wilson_interval(self.hits, self.n)

    def __str__(self) -> str:
        low, high = self.interval
        return f"{self.value:.3f} [{low:.3f}, {high:.3f}] ({self.hits}/{self.n})"


@dataclass(frozen=True, slots=True)
class TimeSensitivityResult:
    recall: Rate  # is_dependent questions classified time_sensitive
    false_positive_rate: Rate  # independent questions classified time_sensitive

    def __str__(self) -> str:
        return f"recall {self.recall}; false positives {self.false_positive_rate}"


@dataclass(frozen=True, slots=True)
class WriteIntentResult:
    recall: Rate  # CLINC val utterances of ACTION_INTENTS classified write_intent
    false_positive_rate: Rate  # other in-scope CLINC val utterances classified write_intent
    mixed_rate: Rate  # MIXED_INTENTS classified write_intent (neither side)
    weakest_intents: tuple[tuple[str, Rate], ...]  # action intents with the lowest recall
    noisiest_intents: tuple[tuple[str, Rate], ...]  # other intents with the most writes
    snips_recall: Rate | None  # SNIPS_ACTION_INTENTS (validate files)
    snips_false_positive_rate: Rate | None  # SNIPS_OTHER_INTENTS
    # The same CLINC val measures with the rules alone (policy `write_intent_model: false`).
    rules_only_recall: Rate
    rules_only_false_positive_rate: Rate

    def __str__(self) -> str:
        weakest = ", ".join(f"{name} {rate.value:.2f}" for name, rate in self.weakest_intents)
        noisiest = ", ".join(f"{name} {rate.value:.2f}" for name, rate in self.noisiest_intents)
        return (
            f"CLINC recall {self.recall}; false positives {self.false_positive_rate}; "
            f"mixed intents {self.mixed_rate}; weakest: {weakest}; noisiest: {noisiest}; "
            f"SNIPS recall {self.snips_recall}; SNIPS false positives "
            f"{self.snips_false_positive_rate}; rules alone (no model): CLINC recall "
            f"{self.rules_only_recall}, false positives {self.rules_only_false_positive_rate}"
        )


@dataclass(frozen=True, slots=True)
class FollowupResult:
    recall: Rate  # follow-up queries (main query as the earlier turn) -> unresolved_followup
    any_class_on_followups: Rate  # follow-up queries non-cacheable for any reason
    main_false_positive_rate: Rate  # main queries (single turn) non-cacheable, any class
    main_by_class: tuple[tuple[str, int], ...]  # which classes fired on main queries

    def __str__(self) -> str:
        classes = ", ".join(f"{name} {count}" for name, count in self.main_by_class)
        return (
            f"recall {self.recall}; any class on follow-ups {self.any_class_on_followups}; "
            f"main-query false positives (any class) {self.main_false_positive_rate} "
            f"[{classes}]"
        )


def _only(cls: NonCacheableClass, *, write_model: bool = True) -> ClassifierSettings:
    return ClassifierSettings(enabled=frozenset({cls}), write_model=write_model)


def _fires(
    classifier: RequestClassifier,
    texts: Iterable[str],
    settings: ClassifierSettings,
    *,
    has_earlier_turns: bool = False,
) -> Rate:
    hits = n = 0
    for text in texts:
        n += 1
        verdict = classifier.classify_text(
            text, has_earlier_turns=has_earlier_turns, settings=settings
        )
        hits += not verdict.cacheable
    return Rate(hits, n)


def _jsonl(path: Path) -> Iterator[dict[str, Any]]:
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            if line.strip():
                yield json.loads(line)


def _is_dependent(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in ("yes", "true", "1")
    return bool(value)


def eval_time_sensitivity(
    data_dir: Path | str, classifier: RequestClassifier
) -> TimeSensitivityResult:
    """SituatedQA temporal dev: does the answer change with the date it is asked?"""
    rows = list(_jsonl(Path(data_dir) / "intents" / "situatedqa_temp.dev.jsonl"))
    settings = _only(NonCacheableClass.TIME_SENSITIVE)
    dependent = [r["question"] for r in rows if _is_dependent(r["is_dependent"])]
    independent = [r["question"] for r in rows if not _is_dependent(r["is_dependent"])]
    return TimeSensitivityResult(
        recall=_fires(classifier, dependent, settings),
        false_positive_rate=_fires(classifier, independent, settings),
    )


def _snips_texts(data_dir: Path, intent: str) -> list[str]:
    path = data_dir / "intents" / "snips_2017" / intent / f"validate_{intent}.json"
    if not path.is_file():
        return []
    records = json.loads(path.read_text(encoding="utf-8", errors="replace"))[intent]
    return ["".join(part["text"] for part in record["data"]) for record in records]


def eval_write_intents(data_dir: Path | str, classifier: RequestClassifier) -> WriteIntentResult:
    """CLINC150 val (ACTION_INTENTS vs other in-scope intents) and SNIPS validate."""
    root = Path(data_dir)
    clinc = json.loads((root / "intents" / "clinc150_train_val.json").read_text(encoding="utf-8"))
    settings = _only(NonCacheableClass.WRITE_INTENT)
    by_intent: dict[str, list[str]] = {}
    for text, intent in clinc["val"]:
        by_intent.setdefault(intent, []).append(text)

    def per_intent(settings: ClassifierSettings) -> dict[str, Rate]:
        return {intent: _fires(classifier, texts, settings) for intent, texts in by_intent.items()}

    def split(rates: dict[str, Rate]) -> tuple[Rate, Rate, Rate, dict[str, Rate]]:
        others = {
            i: r for i, r in rates.items() if i not in ACTION_INTENTS and i not in MIXED_INTENTS
        }
        actions = _sum(rates[i] for i in ACTION_INTENTS if i in rates)
        mixed = _sum(rates[i] for i in MIXED_INTENTS if i in rates)
        return actions, _sum(others.values()), mixed, others

    rates = per_intent(settings)
    recall, false_positives, mixed, others = split(rates)
    rules_recall, rules_false_positives, _, _ = split(
        per_intent(_only(NonCacheableClass.WRITE_INTENT, write_model=False))
    )
    weakest = sorted(
        ((i, rates[i]) for i in ACTION_INTENTS if i in rates), key=lambda x: x[1].value
    )
    noisiest = sorted(others.items(), key=lambda x: -x[1].value)

    snips_actions = [t for i in SNIPS_ACTION_INTENTS for t in _snips_texts(root, i)]
    snips_others = [t for i in SNIPS_OTHER_INTENTS for t in _snips_texts(root, i)]
    return WriteIntentResult(
        recall=recall,
        false_positive_rate=false_positives,
        mixed_rate=mixed,
        weakest_intents=tuple(weakest[:5]),
        noisiest_intents=tuple(noisiest[:5]),
        snips_recall=_fires(classifier, snips_actions, settings) if snips_actions else None,
        snips_false_positive_rate=(
            _fires(classifier, snips_others, settings) if snips_others else None
        ),
        rules_only_recall=rules_recall,
        rules_only_false_positive_rate=rules_false_positives,
    )


def _sum(rates: Iterable[Rate]) -> Rate:
    hits = n = 0
    for rate in rates:
        hits += rate.hits
        n += rate.n
    return Rate(hits, n)


def _followup_pairs(data_dir: Path) -> list[tuple[str, str]]:
    """(main, follow-up) pairs from every file, deduplicated (the files overlap)."""
    pairs: dict[tuple[str, str], None] = {}
    for path in sorted((data_dir / "followups").glob("*.json")):
        for row in json.loads(path.read_text(encoding="utf-8")):
            main, follow = row.get("Main Query"), row.get("Follow-Up Query")
            if isinstance(main, str) and isinstance(follow, str):
                pairs[(main.strip(), follow.strip())] = None
    return list(pairs)


def eval_followups(data_dir: Path | str, classifier: RequestClassifier) -> FollowupResult:
    """MeanCache follow-ups: follow-ups should be unresolved, main queries cacheable."""
    pairs = _followup_pairs(Path(data_dir))
    followups = [follow for _, follow in pairs]
    mains = list(dict.fromkeys(main for main, _ in pairs))
    every = ClassifierSettings()
    fired: dict[str, int] = {}
    false_positives = 0
    for main in mains:
        verdict = classifier.classify_text(main, has_earlier_turns=False, settings=every)
        if verdict.reason is not None:
            false_positives += 1
            fired[verdict.reason.value] = fired.get(verdict.reason.value, 0) + 1
    return FollowupResult(
        recall=_fires(
            classifier,
            followups,
            _only(NonCacheableClass.UNRESOLVED_FOLLOWUP),
            has_earlier_turns=True,
        ),
        any_class_on_followups=_fires(classifier, followups, every, has_earlier_turns=True),
        main_false_positive_rate=Rate(false_positives, len(mains)),
        main_by_class=tuple(sorted(fired.items(), key=lambda item: -item[1])),
    )


def main(argv: Sequence[str] | None = None) -> int:
    from gateway.nlp import TextAnalyzer

    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 1 or not Path(args[0]).is_dir():
        print("usage: python -m gateway_tools.evaluation.classifier_sets DATA_DIR", file=sys.stderr)
        return 2
    data_dir = Path(args[0])
    classifier = RequestClassifier(TextAnalyzer.load())
    time_result = eval_time_sensitivity(data_dir, classifier)
    print("time_sensitive (SituatedQA temporal dev)")
    print(f"  recall            {time_result.recall}")
    print(f"  false positives   {time_result.false_positive_rate}")
    write_result = eval_write_intents(data_dir, classifier)
    print("write_intent (CLINC150 val)")
    print(f"  recall            {write_result.recall}")
    print(f"  false positives   {write_result.false_positive_rate}")
    print(f"  mixed intents     {write_result.mixed_rate}")
    for name, rate in write_result.weakest_intents:
        print(f"  weakest action    {name:24s} {rate}")
    for name, rate in write_result.noisiest_intents:
        print(f"  noisiest other    {name:24s} {rate}")
    print("write_intent (SNIPS validate)")
    print(f"  recall            {write_result.snips_recall}")
    print(f"  false positives   {write_result.snips_false_positive_rate}")
    followup_result = eval_followups(data_dir, classifier)
    print("unresolved_followup (MeanCache follow-ups, deduplicated)")
    print(f"  recall            {followup_result.recall}")
    print(f"  any class         {followup_result.any_class_on_followups}")
    print(f"  main queries, any class (false positives) {followup_result.main_false_positive_rate}")
    for name, count in followup_result.main_by_class:
        print(f"    {name:20s} {count}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
