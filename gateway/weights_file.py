"""The loading half shared by the models whose weights are a JSON file shipped in the
package (the write-intent model, the local pair reviewer's weights)."""

from __future__ import annotations

import importlib.resources
from pathlib import Path
from typing import Any, ClassVar, Self

from gateway.jsonfile import parse_json_object


class WeightsFile:
    """Base of the weight dataclasses: a subclass gives `from_dict`, the error a bad
    file raises and where the packaged file lies; JSON text, a path and the packaged
    file are read here."""

    __slots__ = ()

    FORMAT_ERROR: ClassVar[type[ValueError]]
    PACKAGE: ClassVar[str]  # the package that ships the file
    RESOURCE: ClassVar[str]  # the file, relative to that package

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Self:
        raise NotImplementedError

    @classmethod
    def from_json(cls, text: str | bytes) -> Self:
        return cls.from_dict(parse_json_object(text, cls.FORMAT_ERROR, "weights"))

    @classmethod
    def packaged(cls) -> Self:
        """The weights shipped inside the package (`PACKAGE`, `RESOURCE`)."""
        resource = importlib.resources.files(cls.PACKAGE).joinpath(cls.RESOURCE)
        return cls.from_json(resource.read_bytes())

    @classmethod
    def from_path(cls, path: Path) -> Self:
        return cls.from_json(path.read_bytes())
