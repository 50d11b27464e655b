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
