"""Pairs the gateway knows to be different: the source of a judge's false-accept rate.

A semantic candidate that scored high (at or above the adaptive floor, calibrated),
shares the request's compatibility fingerprint (same model, parameters, system
prompt, material and attachments) and was refused by the entity comparison for a
*hard* mismatch asks another question: its stored answer would not have served. Such
a pair, judged like a shadow verification, tells how often the judge says "same" to a
different pair.

Hard (a different value in a slot the question turns on):

- `number`, `id`, `date`: another amount, code or day ("2 eggs" / "3 eggs");
- `named_entity`: another name (place, person, product, organisation);
- `person`: another owner ("your website" / "my website"), a swap only;
- `unit`: another unit of one dimension ("km" / "miles", "5 kg in lb" / "5 lb in kg");
- `tier`: another plan or size ("free" / "enterprise plan");
- `direction`: a reversed route or conversion ("from A to B" / "from B to A");
- `quoted`: other quoted words ("what does 'ephemeral' mean" / "'ubiquitous'").

Not hard, left out: `language` (the same question in another language: a judge asked
about meaning may rightly say "same"); `time_word` (such requests are mostly not
cacheable, and relative time words have loose synonyms); `negation` and `polarity`
(the parse can miss a negation's scope; a one-pole question against a two-pole one is
an incomplete answer rather than another question); `question` and `term` (another
question word or content word: the softest checks, where paraphrases also land).
Mislabelled pairs could only raise the measured false-accept rate, which makes the
correction stricter, never looser.

Never a source: text low in similarity. Low cosine is no evidence of a different
request (BQ: 70 of 436 duplicates, MRPC: 117 of 145, at raw cosine <= 0.30).
"""

from __future__ import annotations

from collections.abc import Iterable

HARD_MISMATCH_KINDS = frozenset(
    {"number", "id", "date", "named_entity", "person", "unit", "tier", "direction", "quoted"}
)


def is_known_different(mismatch_kinds: Iterable[str]) -> bool:
    """Whether an entity comparison's refusal means another request."""
    return any(kind in HARD_MISMATCH_KINDS for kind in mismatch_kinds)
