"""Figures for studies: each takes a study DataFrame and returns a matplotlib Axes."""

from __future__ import annotations

from typing import Any

import pandas as pd


def _axes(ax: Any) -> Any:
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt

    return plt.subplots(figsize=(6, 4))[1]


def score_vs(frame: pd.DataFrame, x: str, *, score: str = "total_utility", ax: Any = None) -> Any:
    """One line per algorithm: mean ``score`` against column ``x`` (e.g. the number of jobs)."""
    ax = _axes(ax)
    table = frame.groupby([x, "algorithm"])[score].mean().unstack("algorithm")
    table.plot(ax=ax, marker="o")
    ax.legend(title="algorithm", loc="upper left", fontsize="small")
    ax.set_xlabel(x.replace("_", " "))
    ax.set_ylabel(score.replace("_", " "))
    ax.grid(alpha=0.3)
    return ax


def ratio_by(frame: pd.DataFrame, group: str, *, ax: Any = None) -> Any:
    """OPT/ALG per ``group`` value (in order of appearance): a box of the ratios over instances.

    Uses the interval's upper end, which equals the ratio wherever OPT is proven."""
    ax = _axes(ax)
    groups = list(pd.unique(frame[group]))
    data = [frame.loc[frame[group] == g, "ratio_high"].to_numpy() for g in groups]
    ax.boxplot(data, tick_labels=[str(g) for g in groups])
    ax.axhline(1.0, color="grey", lw=0.8)
    ax.set_xlabel(group.replace("_", " "))
    ax.set_ylabel("OPT / ALG (upper end when not proven)")
    ax.grid(alpha=0.3)
    return ax


def reward_curves(runs: dict[str, Any], *, reference: str, axes: Any = None) -> Any:
    """OgaSched Fig. 2 panels from per-slot rewards: (a) average reward up to t, (b) cumulative
    reward, (c) the ratio of ``reference``'s average reward to each other algorithm's."""
    import matplotlib.pyplot as plt
    import numpy as np

    if axes is None:
        axes = plt.subplots(1, 3, figsize=(15, 4))[1]
    cumulative = {name: np.cumsum(run.rewards) for name, run in runs.items()}
    slots = np.arange(1, len(next(iter(cumulative.values()))) + 1)
    for name, cum in cumulative.items():
        axes[0].plot(slots, cum / slots, label=name)
        axes[1].plot(slots, cum, label=name)
        if name != reference:
            with np.errstate(divide="ignore", invalid="ignore"):
                axes[2].plot(slots, cumulative[reference] / cum, label=f"{reference} / {name}")
    for ax, title in zip(axes, ("(a) average reward up to t", "(b) cumulative reward", "(c) ratio of average rewards")):
        ax.set_title(title)
        ax.set_xlabel("slot t")
        ax.grid(alpha=0.3)
        ax.legend(fontsize="small")
    return axes


def loglog_slope(horizons: Any, values: Any, *, ax: Any = None, label: str = "regret") -> float:
    """Plot ``values`` against ``horizons`` on log-log axes with the least-squares line; its slope."""
    import numpy as np

    ax = _axes(ax)
    x, y = np.log(np.asarray(horizons, dtype=float)), np.log(np.asarray(values, dtype=float))
    slope, intercept = np.polyfit(x, y, 1)
    ax.loglog(horizons, values, "o", label=label)
    ax.loglog(horizons, np.exp(intercept + slope * x), "--", label=f"fit: slope {slope:.3f}")
    ax.set_xlabel("T")
    ax.set_ylabel(label)
    ax.grid(alpha=0.3, which="both")
    ax.legend()
    return float(slope)
