"""The knowledge snapshot and the four request sets of `gateway eval knowledge-reuse`.

A fictional SaaS ("Lumen Boards"): three tiers (Free, Pro, Enterprise) with different
prices and limits, three product versions (v1, v2, v3) that behave differently, and
named customers with contract terms. Each fact is one knowledge item (its own document,
so that it can be replaced through the API). A question asks one topic under one
condition (a tier, a version or a customer); its id is `topic:condition`.

The sets, in the order they are asked:
- first_seen: each topic once, for its first condition (any cache answer is false);
- paraphrase: other phrasings of those questions, same condition (reuse wanted; a reuse
  of another question's answer is false);
- other_condition: the same topics for the other conditions (every reuse is false);
- after_change: the first_seen questions again, worded as before and as a paraphrase,
  after the item each depends on was replaced (a reuse of a pre-change answer is false).
"""

from __future__ import annotations

from dataclasses import dataclass

TIERS = ("Free", "Pro", "Enterprise")
VERSIONS = ("v1", "v2", "v3")
CUSTOMERS = ("Harbor Logistics", "Quill Media", "Birch Health", "Orion Foods", "Juniper Bank")


@dataclass(frozen=True, slots=True)
class Topic:
    name: str
    conditions: tuple[str, ...]
    fact: str  # with {c} (the condition) and {v} (its value)
    values: tuple[str, ...]  # one per condition
    changed: str  # the first condition's value after the change
    # With {c}: the first is the first_seen wording, the second a close rewording of it,
    # the others freer paraphrases.
    phrasings: tuple[str, ...]


_TIER_TOPICS = (
    Topic(
        "price",
        TIERS,
        "The {c} tier of Lumen Boards costs {v} per user per month.",
        ("$0", "$12", "$45"),
        "$15",
        (
            "How much does the {c} tier of Lumen Boards cost per user?",
            "How much does the {c} tier of Lumen Boards cost for each user?",
            "What is the monthly price per user of the Lumen Boards {c} tier?",
            "What does one user on the {c} tier of Lumen Boards cost each month?",
            "Lumen Boards {c} tier: how much per user per month?",
        ),
    ),
    Topic(
        "projects",
        TIERS,
        "On the {c} tier of Lumen Boards a workspace may hold at most {v} projects.",
        ("3", "50", "unlimited"),
        "100",
        (
            "How many projects can a workspace have on the {c} tier of Lumen Boards?",
            "How many projects can one workspace have on the {c} tier of Lumen Boards?",
            "What is the project limit of the Lumen Boards {c} tier?",
            "On the {c} tier of Lumen Boards, how many projects may a workspace hold?",
            "Lumen Boards {c} tier: what is the maximum number of projects?",
        ),
    ),
    Topic(
        "storage",
        TIERS,
        "Each workspace on the {c} tier of Lumen Boards gets {v} of file storage.",
        ("2 GB", "100 GB", "5 TB"),
        "250 GB",
        (
            "How much file storage does the {c} tier of Lumen Boards include?",
            "How much file storage is included in the {c} tier of Lumen Boards?",
            "What storage allowance comes with the Lumen Boards {c} tier?",
            "How many gigabytes of storage does a {c} tier workspace get in Lumen Boards?",
            "Lumen Boards {c} tier: how much storage is included?",
        ),
    ),
    Topic(
        "seats",
        TIERS,
        "The {c} tier of Lumen Boards allows up to {v} members per workspace.",
        ("5", "250", "10,000"),
        "500",
        (
            "How many members can join a workspace on the {c} tier of Lumen Boards?",
            "How many members can a workspace on the {c} tier of Lumen Boards have?",
            "What is the member limit of a Lumen Boards {c} tier workspace?",
            "How many people can a {c} tier workspace of Lumen Boards have?",
            "Lumen Boards {c} tier: what is the maximum number of members?",
        ),
    ),
    Topic(
        "support",
        TIERS,
        "Support for the {c} tier of Lumen Boards is {v}.",
        ("community forum only", "email with a one-day response", "phone around the clock"),
        "chat with a four-hour response",
        (
            "What kind of support does the {c} tier of Lumen Boards get?",
            "What support does the {c} tier of Lumen Boards get?",
            "Which support channel is available on the Lumen Boards {c} tier?",
            "How do {c} tier customers of Lumen Boards reach support?",
            "Lumen Boards {c} tier: what support is included?",
        ),
    ),
    Topic(
        "api_rate",
        TIERS,
        "The Lumen Boards API allows {v} requests per minute on the {c} tier.",
        ("60", "600", "6,000"),
        "1,200",
        (
            "What is the API rate limit on the {c} tier of Lumen Boards?",
            "What is the rate limit of the API on the {c} tier of Lumen Boards?",
            "How many API requests per minute does the Lumen Boards {c} tier allow?",
            "How fast may I call the Lumen Boards API on the {c} tier?",
            "Lumen Boards {c} tier: how many API calls per minute?",
        ),
    ),
    Topic(
        "sso",
        TIERS,
        "Single sign-on on the {c} tier of Lumen Boards: {v}.",
        ("not available", "Google sign-in only", "SAML and SCIM provisioning"),
        "Google and Microsoft sign-in",
        (
            "Does the {c} tier of Lumen Boards support single sign-on?",
            "Does the Lumen Boards {c} tier support single sign-on?",
            "Is SSO available on the Lumen Boards {c} tier?",
            "Can I use single sign-on with the {c} tier of Lumen Boards?",
            "Lumen Boards {c} tier: is there SSO?",
        ),
    ),
    Topic(
        "audit_log",
        TIERS,
        "The {c} tier of Lumen Boards keeps audit logs for {v}.",
        ("7 days", "90 days", "7 years"),
        "1 year",
        (
            "How long are audit logs kept on the {c} tier of Lumen Boards?",
            "How long does the {c} tier of Lumen Boards keep audit logs?",
            "What is the audit log retention of the Lumen Boards {c} tier?",
            "For how long does the {c} tier of Lumen Boards retain audit logs?",
            "Lumen Boards {c} tier: how long is the audit log history?",
        ),
    ),
    Topic(
        "guests",
        TIERS,
        "A workspace on the {c} tier of Lumen Boards may invite {v} guests.",
        ("no", "20", "unlimited"),
        "50",
        (
            "How many guests can a workspace invite on the {c} tier of Lumen Boards?",
            "How many guests may a workspace invite on the {c} tier of Lumen Boards?",
            "What is the guest limit of the Lumen Boards {c} tier?",
            "How many outside guests may a {c} tier workspace of Lumen Boards invite?",
            "Lumen Boards {c} tier: how many guests are allowed?",
        ),
    ),
    Topic(
        "trial",
        TIERS,
        "The free trial of the {c} tier of Lumen Boards lasts {v}.",
        ("forever, as the tier is free", "14 days", "30 days"),
        "21 days",
        (
            "How long is the free trial of the {c} tier of Lumen Boards?",
            "How long does the free trial of the {c} tier of Lumen Boards last?",
            "What is the trial period of the Lumen Boards {c} tier?",
            "For how many days can I try the {c} tier of Lumen Boards for free?",
            "Lumen Boards {c} tier: how long does the trial last?",
        ),
    ),
)

_VERSION_TOPICS = (
    Topic(
        "export",
        VERSIONS,
        "Lumen Boards {c} exports boards as {v}.",
        ("CSV files", "JSON and CSV files", "JSON, CSV and PDF files"),
        "XML files",
        (
            "Which export formats does Lumen Boards {c} support?",
            "Which export formats are supported by Lumen Boards {c}?",
            "In what format does Lumen Boards {c} export a board?",
            "What file types can I export boards to in Lumen Boards {c}?",
            "Lumen Boards {c}: how are boards exported?",
        ),
    ),
    Topic(
        "offline",
        VERSIONS,
        "Offline mode in Lumen Boards {c}: {v}.",
        ("not supported", "read-only", "full editing, synced on reconnect"),
        "read-only for seven days",
        (
            "Does Lumen Boards {c} work offline?",
            "Does Lumen Boards {c} work when offline?",
            "Can I use Lumen Boards {c} without an internet connection?",
            "What does offline mode do in Lumen Boards {c}?",
            "Lumen Boards {c}: is there an offline mode?",
        ),
    ),
    Topic(
        "webhooks",
        VERSIONS,
        "Lumen Boards {c} retries a failed webhook {v}.",
        ("never", "3 times over an hour", "10 times over a day with back-off"),
        "5 times over two hours",
        (
            "How does Lumen Boards {c} retry failed webhooks?",
            "How are failed webhooks retried by Lumen Boards {c}?",
            "How many times does Lumen Boards {c} retry a webhook that failed?",
            "What happens to a failed webhook delivery in Lumen Boards {c}?",
            "Lumen Boards {c}: what is the webhook retry policy?",
        ),
    ),
    Topic(
        "search",
        VERSIONS,
        "Search in Lumen Boards {c} supports {v}.",
        ("exact words only", "wildcards and quoted phrases", "full query syntax with filters"),
        "prefix matching",
        (
            "What search syntax does Lumen Boards {c} support?",
            "Which search syntax is supported by Lumen Boards {c}?",
            "Which search operators can I use in Lumen Boards {c}?",
            "How powerful is search in Lumen Boards {c}?",
            "Lumen Boards {c}: what does the search support?",
        ),
    ),
    Topic(
        "conflicts",
        VERSIONS,
        "When two people edit the same card at once, Lumen Boards {c} {v}.",
        ("keeps the last save", "asks the second editor to merge", "merges both edits live"),
        "keeps the first save",
        (
            "How does Lumen Boards {c} handle two people editing the same card?",
            "How does Lumen Boards {c} deal with two people editing the same card?",
            "What happens in Lumen Boards {c} when two users edit one card at once?",
            "How are edit conflicts on a card resolved in Lumen Boards {c}?",
            "Lumen Boards {c}: what about simultaneous edits of a card?",
        ),
    ),
    Topic(
        "attachments",
        VERSIONS,
        "The largest attachment Lumen Boards {c} accepts is {v}.",
        ("10 MB", "100 MB", "2 GB"),
        "25 MB",
        (
            "What is the maximum attachment size in Lumen Boards {c}?",
            "What is the largest attachment size in Lumen Boards {c}?",
            "How large can a file attachment be in Lumen Boards {c}?",
            "What is the biggest file I can attach to a card in Lumen Boards {c}?",
            "Lumen Boards {c}: how big may attachments be?",
        ),
    ),
    Topic(
        "timezones",
        VERSIONS,
        "Due dates in Lumen Boards {c} are shown in {v}.",
        ("UTC", "the workspace time zone", "each viewer's own time zone"),
        "the board owner's time zone",
        (
            "Which time zone does Lumen Boards {c} show due dates in?",
            "In which time zone does Lumen Boards {c} show due dates?",
            "In what time zone are due dates displayed in Lumen Boards {c}?",
            "How does Lumen Boards {c} handle time zones for due dates?",
            "Lumen Boards {c}: what time zone are due dates in?",
        ),
    ),
)

_CUSTOMER_TOPICS = (
    Topic(
        "renewal",
        CUSTOMERS,
        "The Lumen Boards contract of {c} renews on {v}.",
        ("1 March", "15 June", "30 September", "1 December", "31 January"),
        "1 April",
        (
            "When does the Lumen Boards contract of {c} renew?",
            "When is the Lumen Boards contract of {c} renewed?",
            "What is the renewal date of the {c} contract for Lumen Boards?",
            "On which date is the Lumen Boards contract with {c} up for renewal?",
            "{c} and Lumen Boards: when is the contract renewal?",
        ),
    ),
    Topic(
        "discount",
        CUSTOMERS,
        "{c} has a negotiated discount of {v} on Lumen Boards.",
        ("10 percent", "15 percent", "20 percent", "5 percent", "25 percent"),
        "12 percent",
        (
            "What discount does {c} get on Lumen Boards?",
            "Which discount does {c} get on Lumen Boards?",
            "How much of a discount was negotiated for {c} on Lumen Boards?",
            "Which price reduction does {c} have for Lumen Boards?",
            "{c} and Lumen Boards: what is the discount?",
        ),
    ),
    Topic(
        "sla",
        CUSTOMERS,
        "The Lumen Boards uptime commitment to {c} is {v}.",
        ("99.5 percent", "99.9 percent", "99.95 percent", "99.0 percent", "99.99 percent"),
        "99.8 percent",
        (
            "What uptime does Lumen Boards guarantee to {c}?",
            "What uptime is guaranteed by Lumen Boards to {c}?",
            "What is the Lumen Boards SLA uptime for {c}?",
            "Which availability commitment does Lumen Boards have with {c}?",
            "{c} and Lumen Boards: what uptime is promised?",
        ),
    ),
    Topic(
        "manager",
        CUSTOMERS,
        "The Lumen Boards account manager of {c} is {v}.",
        ("Dana Whitfield", "Marco Ruiz", "Priya Natarajan", "Tom Becker", "Yuki Sato"),
        "Elena Costa",
        (
            "Who is the Lumen Boards account manager of {c}?",
            "Who is the account manager of {c} at Lumen Boards?",
            "Which account manager looks after {c} at Lumen Boards?",
            "Who manages the {c} account at Lumen Boards?",
            "{c} and Lumen Boards: who is the account manager?",
        ),
    ),
)

TOPICS: tuple[Topic, ...] = (*_TIER_TOPICS, *_VERSION_TOPICS, *_CUSTOMER_TOPICS)


@dataclass(frozen=True, slots=True)
class Item:
    document_id: str
    content: str
    changed_content: str | None  # the content after the change (after_change), if any


@dataclass(frozen=True, slots=True)
class Question:
    set_name: str
    qid: str  # topic:condition
    text: str
    document_id: str  # the item it depends on


SETS = ("first_seen", "paraphrase", "other_condition", "after_change")


def _document_id(topic: Topic, condition: str) -> str:
    return f"{topic.name}-{condition.lower().replace(' ', '-')}"


def _first_condition(index: int, topic: Topic) -> int:
    # The asked condition rotates, so that every tier, version and customer is asked.
    return index % len(topic.conditions)


def snapshot() -> list[Item]:
    """Every fact of every topic and condition, one item each."""
    items: list[Item] = []
    for index, topic in enumerate(TOPICS):
        first = _first_condition(index, topic)
        for position, condition in enumerate(topic.conditions):
            changed = topic.fact.format(c=condition, v=topic.changed) if position == first else None
            items.append(
                Item(
                    _document_id(topic, condition),
                    topic.fact.format(c=condition, v=topic.values[position]),
                    changed,
                )
            )
    return items


def questions(set_name: str) -> list[Question]:
    """The set's questions, in the order they are asked."""
    asked: list[Question] = []
    for index, topic in enumerate(TOPICS):
        first = _first_condition(index, topic)
        for position, condition in enumerate(topic.conditions):
            if (position == first) == (set_name == "other_condition"):
                continue
            texts = _texts(set_name, topic.phrasings)
            qid = f"{topic.name}:{condition}"
            document_id = _document_id(topic, condition)
            asked.extend(
                Question(set_name, qid, text.format(c=condition), document_id) for text in texts
            )
    return asked


def _texts(set_name: str, phrasings: tuple[str, ...]) -> tuple[str, ...]:
    if set_name in ("first_seen", "other_condition"):
        return phrasings[:1]
    if set_name == "paraphrase":
        return phrasings[1:]
    return phrasings[:2]  # after_change: as first asked, and one paraphrase
