"""A litellm embedder's calibration from the config (`semantic.calibration`), and
`gateway calibrate`, which fits one for the configured embedder."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import pytest

from gateway.cli import build_parser
from gateway.components import build_embedder
from gateway.embed.calibration import Calibration, CalibrationError
from gateway.settings import ConfigError, GatewayConfig, parse_config
from gateway.testing.fake_provider import FakeProvider


def _config(tmp_path: Path, **semantic: Any) -> GatewayConfig:
    raw = {
        "model_list": [
            {
                "model_name": "my-embedder",
                "litellm_params": {"model": "openai/text-embedding-3-small"},
            }
        ],
        "semantic": {"embedder": "my-embedder", "embedding_dimensions": 8, **semantic},
        "storage": {"backend": "embedded", "path": str(tmp_path / "data")},
    }
    config, _ = parse_config(raw)
    return config


def _write(tmp_path: Path, calibration: Calibration) -> Path:
    path = tmp_path / "my-embedder.json"
    calibration.to_json(path)
    return path


# Raw 0.6 -> 0.8 and 0.9 -> 0.97 (all languages); Chinese reads higher.
FITTED = Calibration(
    raw=(-1.0, 0.6, 0.9, 1.0),
    calibrated=(0.0, 0.8, 0.97, 1.0),
    embedder="litellm:my-embedder",
    method="precision",
    languages={
        "zh": Calibration(
            raw=(-1.0, 0.5, 1.0), calibrated=(0.0, 0.97, 1.0), embedder="litellm:my-embedder"
        )
    },
)


def test_a_configured_calibration_is_what_the_embedder_calibrates_with(tmp_path: Path) -> None:
    path = _write(tmp_path, FITTED)
    config = _config(tmp_path, calibration=str(path))
    assert config.semantic.calibration == path
    embedder = build_embedder(config, FakeProvider(), None)
    assert embedder.name == "litellm:my-embedder"
    assert embedder.calibrate(0.6) == pytest.approx(0.8)
    assert embedder.calibrate(0.9, "en") == pytest.approx(0.97)  # no English curve: pooled
    assert embedder.calibrate(0.5, "zh") == pytest.approx(0.97)
    assert embedder.calibrate(0.75) == pytest.approx(0.885)


def test_without_one_the_raw_cosine_is_the_scale(tmp_path: Path) -> None:
    embedder = build_embedder(_config(tmp_path), FakeProvider(), None)
    assert embedder.calibrate(0.6) == pytest.approx(0.6)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "cannot be read"),
        ("{not json", "is not a calibration file"),
        ('{"format": 2, "knots": [[0.0, 0.9], [1.0, 0.1]]}', "non-decreasing"),
        ('{"format": 7, "knots": [[0.0, 0.0], [1.0, 1.0]]}', "unsupported calibration format"),
    ],
)
def test_a_bad_file_stops_the_start_with_its_name_and_reason(
    tmp_path: Path, content: str | None, message: str
) -> None:
    path = tmp_path / "calibration.json"
    if content is not None:
        path.write_text(content)
    config = _config(tmp_path, calibration=str(path))
    with pytest.raises(CalibrationError) as caught:
        build_embedder(config, FakeProvider(), None)
    assert "semantic.calibration" in str(caught.value) and str(path) in str(caught.value)
    assert message in str(caught.value)


def test_another_embedders_calibration_is_refused(tmp_path: Path) -> None:
    other = Calibration.from_json(
        Path(__file__).parents[3] / "gateway/embed/calibrations/use-multilingual-v3.json"
    )
    config = _config(tmp_path, calibration=str(_write(tmp_path, other)))
    with pytest.raises(CalibrationError, match="fitted for embedder 'use-multilingual-v3'"):
        build_embedder(config, FakeProvider(), None)


def test_the_local_embedder_takes_no_calibration_setting() -> None:
    with pytest.raises(ConfigError, match=r"semantic\.calibration is for a litellm embedder"):
        parse_config({"semantic": {"embedder": "local", "calibration": "x.json"}})


def _calibrate_args(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The arguments `gateway calibrate` hands the fitting tool."""
    seen: list[str] = []

    def fit(args: list[str]) -> int:
        seen.extend(args)
        return 0

    import gateway_tools.evaluation.calibrate as tool

    monkeypatch.setattr(tool, "main", fit)
    args: argparse.Namespace = build_parser().parse_args(["calibrate", *argv])
    assert args.handler(args) == 0
    return seen


def test_gateway_calibrate_fits_the_configured_litellm_embedder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "gateway.yaml"
    config.write_text(
        "model_list:\n"
        "  - model_name: my-embedder\n"
        "    litellm_params: {model: openai/text-embedding-3-small}\n"
        "semantic: {embedder: my-embedder, embedding_dimensions: 8}\n"
    )
    out = str(tmp_path / "cal.json")
    seen = _calibrate_args(["--data", "d", "--config", str(config), "--out", out], monkeypatch)
    assert seen[seen.index("--embedder") + 1] == "litellm:my-embedder"
    assert seen[seen.index("--config") + 1] == str(config)
    assert seen[seen.index("--out") + 1] == out
    assert seen[seen.index("--method") + 1] == "precision"
    # The fitting tool reads the same arguments.
    from gateway_tools.evaluation.calibrate import build_parser as tool_parser

    parsed = tool_parser().parse_args(seen)
    assert (parsed.embedder, parsed.config) == ("litellm:my-embedder", str(config))


def test_gateway_calibrate_needs_no_config_for_the_local_embedder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    argv = ["--data", "d", "--embedder", "use-multilingual-v3", "--out", "o.json"]
    seen = _calibrate_args([*argv, "--config", str(tmp_path / "missing.yaml")], monkeypatch)
    assert "--config" not in seen
    assert seen[seen.index("--embedder") + 1] == "use-multilingual-v3"
