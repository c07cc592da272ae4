"""UTC day and month arithmetic: which days a budget period covers, at the boundaries."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from gateway.spend.periods import (
    MAX_RANGE_DAYS,
    days_between,
    month_days_so_far,
    parse_day,
    utc_day,
    utc_month,
)


def _at(text: str) -> float:
    return datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp()


def test_the_day_and_month_are_utc_whatever_the_local_zone() -> None:
    # 23:59:59 UTC on the last day of January is still January, in every time zone.
    assert utc_day(_at("2026-01-31T23:59:59")) == "2026-01-31"
    assert utc_month(_at("2026-01-31T23:59:59")) == "2026-01"
    assert utc_day(_at("2026-02-01T00:00:00")) == "2026-02-01"
    assert utc_month(_at("2026-02-01T00:00:00")) == "2026-02"
    # 01:00 at UTC+02:00 is 23:00 UTC the day before.
    local = datetime.fromisoformat("2026-03-01T01:00:00+02:00").timestamp()
    assert utc_day(local) == "2026-02-28" and utc_month(local) == "2026-02"


def test_a_month_covers_its_days_up_to_today() -> None:
    assert month_days_so_far(_at("2026-02-01T00:00:00")) == ["2026-02-01"]
    days = month_days_so_far(_at("2028-02-29T12:00:00"))  # a leap year
    assert days[0] == "2028-02-01" and days[-1] == "2028-02-29" and len(days) == 29
    december = month_days_so_far(_at("2026-12-31T23:59:59"))
    assert len(december) == 31 and december[-1] == "2026-12-31"


def test_ranges_are_inclusive_and_bounded() -> None:
    assert days_between(date(2026, 12, 30), date(2027, 1, 2)) == [
        "2026-12-30",
        "2026-12-31",
        "2027-01-01",
        "2027-01-02",
    ]
    assert len(days_between(date(2026, 1, 1), date(2026, 1, 1))) == 1
    with pytest.raises(ValueError):
        days_between(date(2026, 1, 2), date(2026, 1, 1))
    first = date(2025, 1, 1)
    assert len(days_between(first, date.fromordinal(first.toordinal() + MAX_RANGE_DAYS - 1))) == (
        MAX_RANGE_DAYS
    )
    with pytest.raises(ValueError):
        days_between(first, date.fromordinal(first.toordinal() + MAX_RANGE_DAYS))


@pytest.mark.parametrize("text", ["2026-1-01", "2026-02-30", "20260101", "yesterday", ""])
def test_days_must_be_written_in_full(text: str) -> None:
    with pytest.raises(ValueError):
        parse_day(text)
