"""The gateway's calibrated similarity scale, and how each embedder's raw cosine maps onto it.

Why: raw cosines of different models are not comparable (multilingual-e5 passes almost
every pair at 0.90, USE does not), and not even one model's cosines mean the same thing in
every language; yet a policy (`semantic_cache.target_precision`) must mean the same thing
whatever embedder is configured and whatever language is asked.

The scale (method `precision`, the shipped one): calibrated(cos) = the precision of
serving every candidate whose raw cosine is at least `cos`, measured on public dev pair
sets among the pairs that reach a threshold in the gateway, i.e. that passed the entity
comparison and the structure guard (pairs the checks refuse never meet one). So a target
precision is a calibrated level: serve at or above it, and the hits on data like the dev
sets are that precise. It is fitted per language of the ask (`gateway.nlp.detect_language`:
`zh` when CJK characters make up at least a quarter of the letters, else `en`), because
USE puts the two languages differently on its cosine scale (serving every checked pair
from raw cosine 0.94 up is 93 % precise in English, 96 % in Chinese; English tops out
at 0.947, Chinese at 0.988), with each dev set of a language weighted equally. Only the
knots ship, never the data.

Fit (`calibration_fit.py`): the precision of "cos >= t" at every observed t, made
non-decreasing by isotonic
regression (pool-adjacent-violators), read from the START of each pooled block (every
prefix of a pooled block averages at least the block's value, so serving from its start
is at least that precise), and written as a staircase at fixed levels (every 0.05, every
0.01 from 0.85): each level from the lowest cosine that reaches it, the lower level in
between, so no threshold reads more precise than measured. The top block (at least 2 %
of the weight) is where precision stops rising with the cosine: its pairs are labelled
duplicates as often as near-identical texts are, and the scale puts it at 1.0 (the
measured value is kept as the curve's `ceiling`; label noise caps English at 0.947,
Chinese at 0.988 for USE). A target above a language's ceiling is therefore served from
where that language's precision stops rising, not never.

The older methods stay readable: `isotonic` (calibrated(cos) = P(duplicate | cos), a
pointwise probability, knots at block centres), `threshold-precision` (the precision
curve with knots at block centres and no ceiling), and `identity` (raw cosine; what a
litellm embedder without a fitted calibration, `semantic.calibration`, uses).

Pairs that differ only in an entity, number, date or negation score as high as true
paraphrases for every embedder: no calibration fixes that; the checks must, which is
why the scale is fitted after them.
"""

from __future__ import annotations

import bisect
import importlib.resources
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
import orjson

from gateway.errors import GatewayInternalError
from gateway.jsonfile import parse_json_object

CALIBRATION_FORMAT = 2  # 2 adds per-language curves; format 1 files are still read
_READABLE_FORMATS = (1, 2)
CALIBRATIONS_PACKAGE = "gateway.embed.calibrations"
_KNOT_LINES = re.compile(r"\[\s+(-?[0-9.eE+-]+),\s+(-?[0-9.eE+-]+)\s+\]")

Method = Literal["precision", "isotonic", "threshold-precision", "identity"]
METHODS: tuple[str, ...] = ("precision", "isotonic", "threshold-precision", "identity")
FloatArray = npt.NDArray[np.float64]


class CalibrationError(GatewayInternalError, ValueError):
    """A calibration file or knot list that is not a valid monotone map."""


@dataclass(frozen=True, slots=True)
class Calibration:
    """Monotone piecewise-linear map raw cosine -> calibrated similarity in [0, 1].

    Below the first knot the first value holds, above the last knot the last value holds;
    between knots the map is linear. `languages` holds a curve per language of the ask
    (`en`, `zh`); the top-level knots are the curve for a caller that names no language
    (or one without a curve of its own), fitted on all languages together.
    """

    raw: tuple[float, ...]
    calibrated: tuple[float, ...]
    embedder: str = ""
    method: Method = "isotonic"
    # Provenance (data sets, pair counts, AUC, crossings): informative only.
    fitted_on: Mapping[str, Any] = field(default_factory=dict)
    languages: Mapping[str, Calibration] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if len(self.raw) != len(self.calibrated) or len(self.raw) < 2:
            raise CalibrationError("a calibration needs at least two (raw, calibrated) knots")
        for value in (*self.raw, *self.calibrated):
            if not math.isfinite(value):
                raise CalibrationError("calibration knots must be finite")
        if any(b <= a for a, b in zip(self.raw, self.raw[1:], strict=False)):
            raise CalibrationError("raw knots must be strictly increasing")
        if self.raw[0] < -1.0 or self.raw[-1] > 1.0:
            raise CalibrationError("raw knots must lie in [-1, 1]")
        if any(b < a for a, b in zip(self.calibrated, self.calibrated[1:], strict=False)):
            raise CalibrationError("calibrated knots must be non-decreasing")
        if self.calibrated[0] < 0.0 or self.calibrated[-1] > 1.0:
            raise CalibrationError("calibrated knots must lie in [0, 1]")
        if any(curve.languages for curve in self.languages.values()):
            raise CalibrationError("a language's curve cannot have languages of its own")

    def curve(self, language: str | None = None) -> Calibration:
        """The curve for `language`, or the all-language one."""
        if language is None:
            return self
        return self.languages.get(language, self)

    def __call__(self, cosine: float, language: str | None = None) -> float:
        # bisect on a tuple: a scalar lookup per candidate, cheaper than np.interp's
        # array round trip on the request path.
        curve = self.languages.get(language, self) if language is not None else self
        raw, cal = curve.raw, curve.calibrated
        if not cosine > raw[0]:  # also catches NaN: treat it as "no similarity"
            return cal[0]
        if cosine >= raw[-1]:
            return cal[-1]
        i = bisect.bisect_right(raw, cosine)
        x0, x1, y0, y1 = raw[i - 1], raw[i], cal[i - 1], cal[i]
        return y0 + (y1 - y0) * (cosine - x0) / (x1 - x0)

    def raw_threshold(self, level: float, language: str | None = None) -> float | None:
        """Smallest raw cosine whose calibrated value reaches `level`; None if it never does.

        Turns a policy level (a target precision) into the raw cosine it means, e.g. for a
        raw-cosine prefilter of an index, or for the README's table.
        """
        curve = self.curve(language)
        raw, cal = curve.raw, curve.calibrated
        if level <= cal[0]:
            return -1.0
        if level > cal[-1]:
            return None
        i = bisect.bisect_left(cal, level)  # first knot with cal >= level; i >= 1 here
        x0, x1, y0, y1 = raw[i - 1], raw[i], cal[i - 1], cal[i]
        return x1 if y1 == y0 else x0 + (x1 - x0) * (level - y0) / (y1 - y0)

    @classmethod
    def identity(cls, embedder: str = "") -> Calibration:
        """Raw cosine used as-is (negative cosines clamp to 0)."""
        return cls(raw=(0.0, 1.0), calibrated=(0.0, 1.0), embedder=embedder, method="identity")

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "format": CALIBRATION_FORMAT,
            "embedder": self.embedder,
            "method": self.method,
            "knots": _knot_list(self),
        }
        if self.languages:
            data["languages"] = {
                name: {"knots": _knot_list(curve), "fitted_on": dict(curve.fitted_on)}
                for name, curve in sorted(self.languages.items())
            }
        data["fitted_on"] = dict(self.fitted_on)
        return data

    def to_json(self, path: Path | None = None) -> str:
        text = orjson.dumps(self.to_dict(), option=orjson.OPT_INDENT_2).decode() + "\n"
        # One knot per line: the file is meant to be read and diffed by people.
        text = _KNOT_LINES.sub(r"[\1, \2]", text)
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        return text

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Calibration:
        if data.get("format") not in _READABLE_FORMATS:
            raise CalibrationError(f"unsupported calibration format {data.get('format')!r}")
        method = data.get("method", "isotonic")
        if method not in METHODS:
            raise CalibrationError(f"unknown calibration method {method!r}")
        raw, calibrated = _read_knots(data)
        languages = data.get("languages", {})
        if not isinstance(languages, Mapping) or not all(
            isinstance(v, Mapping) for v in languages.values()
        ):
            raise CalibrationError("'languages' must map a language to an object with 'knots'")
        curves = {}
        for name, entry in languages.items():
            lang_raw, lang_cal = _read_knots(entry)
            curves[str(name)] = cls(
                raw=lang_raw,
                calibrated=lang_cal,
                embedder=str(data.get("embedder", "")),
                method=method,
                fitted_on=dict(entry.get("fitted_on", {})),
            )
        return cls(
            raw=raw,
            calibrated=calibrated,
            embedder=str(data.get("embedder", "")),
            method=method,
            fitted_on=dict(data.get("fitted_on", {})),
            languages=curves,
        )

    @classmethod
    def from_json(cls, source: Path | str) -> Calibration:
        """Read from a path, or parse a JSON document given as a str."""
        text = source.read_text(encoding="utf-8") if isinstance(source, Path) else source
        return cls.from_dict(parse_json_object(text, CalibrationError, "a calibration"))

    @classmethod
    def packaged(cls, embedder_name: str) -> Calibration:
        """The calibration shipped inside the package for this embedder."""
        resource = importlib.resources.files(CALIBRATIONS_PACKAGE) / f"{embedder_name}.json"
        try:
            text = resource.read_text(encoding="utf-8")
        except FileNotFoundError as exc:
            raise CalibrationError(f"no packaged calibration for {embedder_name!r}") from exc
        return cls.from_json(text)


def load_calibration_file(path: Path, embedder: str) -> Calibration:
    """The calibration at `path` (the gateway config's `semantic.calibration`) for the
    embedder named `embedder`; `CalibrationError` saying what is wrong with the file
    otherwise. A file fitted for another embedder (its `embedder` field, when set) is
    refused: its thresholds would mean something else for this one."""
    where = f"semantic.calibration {str(path)!r}"
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise CalibrationError(f"{where} cannot be read: {exc}") from exc
    try:
        calibration = Calibration.from_json(text)
    except CalibrationError as exc:
        raise CalibrationError(f"{where} is not a calibration file: {exc}") from exc
    if calibration.embedder and calibration.embedder != embedder:
        raise CalibrationError(
            f"{where} was fitted for embedder {calibration.embedder!r}, not {embedder!r}; "
            f"fit one with `gateway calibrate --config <gateway.yaml> --out {path}`"
        )
    return calibration


def _knot_list(curve: Calibration) -> list[list[float]]:
    return [[x, y] for x, y in zip(curve.raw, curve.calibrated, strict=True)]


def _read_knots(data: Mapping[str, Any]) -> tuple[tuple[float, ...], tuple[float, ...]]:
    try:
        knots = [(float(x), float(y)) for x, y in data["knots"]]
    except (KeyError, TypeError, ValueError) as exc:
        raise CalibrationError("'knots' must be a list of [raw, calibrated] pairs") from exc
    return tuple(x for x, _ in knots), tuple(y for _, y in knots)
