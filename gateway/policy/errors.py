"""Policy problems: each names the file, the line and the field, never a value."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from gateway.errors import GatewayInternalError


@dataclass(frozen=True)
class PolicyIssue:
    """One problem in one policy file: `file:line: field: message`."""

    file: str
    line: int | None
    field: str | None
    message: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line is not None else self.file
        if self.field:
            return f"{where}: {self.field}: {self.message}"
        return f"{where}: {self.message}"

    def sort_key(self) -> tuple[str, int, str, str]:
        return (self.file, self.line or 0, self.field or "", self.message)


class PolicyError(GatewayInternalError):
    """Policies that cannot be used; `issues` has every problem found, one per line of
    the message, each naming the file, line and field."""

    def __init__(self, issues: Iterable[PolicyIssue]) -> None:
        self.issues: tuple[PolicyIssue, ...] = tuple(issues)
        super().__init__("\n".join(str(issue) for issue in self.issues))

    @property
    def messages(self) -> list[str]:
        return [str(issue) for issue in self.issues]
