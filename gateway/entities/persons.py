"""Whose thing is it? Grammatical persons of pronouns.

"How do I add a search box to your website?" and "...to my website?" embed almost the
same, but one asks about the assistant's (or a vendor's) site and the other about the
user's own. Each text records the persons its possessive and object pronouns refer to
("1" my/me/our/us, "2" your, "3" his/her/him: people), plus the person of its first
subject pronoun, which is usually generic in a question: "How do I improve my English?"
and "How do you improve your English?" ask the same thing.

Two texts disagree only on a swap (one names a person the other lacks, and the other
way round) that a swap of their subjects does not explain. Adding or dropping a pronoun
is not a disagreement: "How do I reset a password?" / "...reset my password?", "if a
girl likes me" / "if she likes me".
"""

from __future__ import annotations

import re

from gateway.entities.slots import TextSlots
from gateway.entities.text import joined

# Possessive and object forms only: "you" is both subject and object and "I"/"we" are
# subjects, read by `english_subject` instead.
EN_PERSONS = {
    **dict.fromkeys(("my", "me", "mine", "myself", "our", "ours", "us", "ourselves"), "1"),
    **dict.fromkeys(("your", "yours", "yourself", "yourselves", "ur"), "2"),
    **dict.fromkeys(("he", "him", "his", "himself", "she", "her", "hers", "herself"), "3"),
}
EN_SUBJECTS = {"i": "1", "we": "1", "you": "2", "u": "2"}
_EN_WORD = re.compile(r"[a-z]+")

# Chinese has no case: every personal pronoun counts, 们 (plural) does not matter.
_ZH_PERSONS = (
    ("1", re.compile(r"[我咱俺]")),
    ("2", re.compile(r"[你您]")),
    ("3", re.compile(r"[他她]")),
)
# 其他/其她 and 他人 are not "he"; 自我 is not "I"; 您好/你好 greet.
_ZH_NOT_PERSONS = re.compile(r"其[他她]|他人|自我|你好|您好|迷你|吉他|他乡")


def english_persons(text: str) -> tuple[set[str], str]:
    """(persons, subject) of a normalised, lower-case English text."""
    persons: set[str] = set()
    subject = ""
    for word in _EN_WORD.findall(text):
        person = EN_PERSONS.get(word)
        if person is not None:
            persons.add(person)
        elif not subject and word in EN_SUBJECTS:
            subject = EN_SUBJECTS[word]
    return persons, subject


def chinese_persons(text: str) -> set[str]:
    text = _ZH_NOT_PERSONS.sub(" ", text)
    return {person for person, pattern in _ZH_PERSONS if pattern.search(text)}


def compare_persons(query: TextSlots, candidate: TextSlots) -> tuple[str, str] | None:
    """The persons swapped between two texts, if any."""
    if query.language != candidate.language:
        return None
    persons = candidate.persons
    q_subject, c_subject = query.subject, candidate.subject
    if q_subject and c_subject and q_subject != c_subject:
        # "How do I fix my laptop?" / "How do you fix your laptop?": rename the
        # candidate's persons along the subject swap before comparing.
        swap = {c_subject: q_subject, q_subject: c_subject}
        persons = frozenset(swap.get(p, p) for p in persons)
    query_only, candidate_only = query.persons - persons, persons - query.persons
    if query_only and candidate_only:
        return joined(query_only), joined(candidate_only)
    return None
