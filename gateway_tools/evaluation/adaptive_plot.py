"""A PNG per simulated set: served precision, recall and the threshold over the stream,
adaptive next to the static default. matplotlib is an optional extra (`pip install
'llm-cache-gateway[eval]'`), imported only here, only when a plot is asked for."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from gateway_tools.evaluation.adaptive_sim import SimulationRun


class PlottingUnavailable(RuntimeError):
    pass


def plot_runs(
    name: str,
    runs: Mapping[float, SimulationRun],
    target_precision: float,
    static_threshold: float,
    path: Path,
) -> Path:
    """One figure: precision (top), recall (middle) and threshold (bottom) against the
    position in the stream, one line per judge error rate and the static default."""
    try:
        import matplotlib

        matplotlib.use("Agg")  # files only, no display
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise PlottingUnavailable(
            "plots need matplotlib: pip install 'llm-cache-gateway[eval]' (or matplotlib)"
        ) from exc
    figure, (precision_axis, recall_axis, threshold_axis) = plt.subplots(
        3, 1, figsize=(8, 9), sharex=True
    )
    static_drawn = False
    for judge_error, run in sorted(runs.items()):
        positions = [p.position for p in run.timeline]
        label = f"adaptive, judge error {judge_error:.0%}"
        precision_axis.plot(positions, [p.precision for p in run.timeline], label=label)
        recall_axis.plot(positions, [p.recall for p in run.timeline], label=label)
        for scope in sorted(run.thresholds):
            threshold_axis.plot(
                positions,
                [p.thresholds.get(scope, static_threshold) for p in run.timeline],
                label=label if scope == "all" else f"{label} ({scope})",
            )
        if not static_drawn:  # the static default does not depend on the judge
            static_drawn = True
            precision_axis.plot(
                positions, [p.static_precision for p in run.timeline], "k--", label="static"
            )
            recall_axis.plot(
                positions, [p.static_recall for p in run.timeline], "k--", label="static"
            )
    precision_axis.axhline(target_precision, color="grey", linewidth=0.8, label="target")
    threshold_axis.axhline(static_threshold, color="k", linestyle="--", label="static")
    precision_axis.set_ylabel("served precision so far")
    recall_axis.set_ylabel("recall so far")
    threshold_axis.set_ylabel("threshold (calibrated)")
    threshold_axis.set_xlabel("pairs of the stream")
    precision_axis.set_title(f"{name}: adaptive operating point over the stream")
    for axis in (precision_axis, recall_axis, threshold_axis):
        axis.grid(alpha=0.3)
        axis.legend(fontsize=7, loc="best")
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, format="png", dpi=100)
    plt.close(figure)
    return path
