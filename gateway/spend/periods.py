"""UTC periods: the day and the month a timestamp falls in, and the days a budget
period or a report covers. Days are "YYYY-MM-DD" strings (they sort as dates)."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

# The longest range `/admin/spend` reads (and how long Redis keeps a day's spend).
MAX_RANGE_DAYS = 400


def utc_date(timestamp: float) -> date:
    return datetime.fromtimestamp(timestamp, UTC).date()


def utc_day(timestamp: float) -> str:
    return utc_date(timestamp).isoformat()


def utc_month(timestamp: float) -> str:
    return utc_date(timestamp).strftime("%Y-%m")


def month_days_so_far(timestamp: float) -> list[str]:
    """The UTC days of the month `timestamp` falls in, from the 1st to its own day."""
    today = utc_date(timestamp)
    return [today.replace(day=number).isoformat() for number in range(1, today.day + 1)]


def parse_day(text: str) -> date:
    """A "YYYY-MM-DD" day; ValueError otherwise."""
    if len(text) != 10:
        raise ValueError(text)
    return date.fromisoformat(text)


def days_between(first: date, last: date) -> list[str]:
    """Every day from `first` to `last`, both included; ValueError when `last` is before
    `first` or the range is longer than MAX_RANGE_DAYS."""
    count = (last - first).days + 1
    if count < 1:
        raise ValueError("the range ends before it starts")
    if count > MAX_RANGE_DAYS:
        raise ValueError(f"the range is longer than {MAX_RANGE_DAYS} days")
    return [(first + timedelta(days=offset)).isoformat() for offset in range(count)]
