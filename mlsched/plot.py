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
    ax = distribution(frame, "ratio", hue=group, kind="box", ax=ax)
    ax.axhline(1.0, color="grey", lw=0.8)
    return ax


def interval_columns(frame: pd.DataFrame, y: str) -> tuple[str, str]:
    """The columns of ``y``'s lower and upper ends: ``ratio_low``/``ratio_high`` for ``ratio``
    (they coincide where OPT is proven), ``y`` itself otherwise."""
    if y == "ratio" and {"ratio_low", "ratio_high"} <= set(frame.columns):
        return "ratio_low", "ratio_high"
    return y, y


def label(column: str) -> str:
    return {"ratio": "OPT / ALG", "pr": "PR = ALG / OPT"}.get(column, column.replace("_", " "))


def sweep_line(frame: pd.DataFrame, x: str, y: str, *, hue: str | None = "algorithm", stat: str = "mean",
               ax: Any = None) -> Any:
    """``stat`` (mean, median or max over the rows of each point, e.g. the seeds) of ``y`` against
    ``x``, one line per ``hue`` value. For ``y = "ratio"`` the line follows the lower ends of the
    ratio intervals (the ratio where OPT is proven) and a bar rises to ``stat`` of the upper ends
    wherever OPT is not proven. An infinite point (an algorithm scoring 0 against a positive OPT)
    is a triangle at the top edge. A numeric ``x`` is an axis; another ``x`` is categories in
    order of appearance."""
    import numpy as np
    from matplotlib.transforms import blended_transform_factory

    ax = _axes(ax)
    low, high = interval_columns(frame, y)
    numeric = pd.api.types.is_numeric_dtype(frame[x])
    order = sorted(pd.unique(frame[x])) if numeric else list(pd.unique(frame[x]))
    position = {value: (value if numeric else i) for i, value in enumerate(order)}
    groups = [(None, frame)] if hue is None else list(frame.groupby(hue, sort=False))
    at_top = blended_transform_factory(ax.transData, ax.transAxes)
    notes = set()
    for name, part in groups:
        ends = list(dict.fromkeys([low, high]))   # one column when y has no interval
        table = part.groupby(x)[ends].agg(stat).reindex([v for v in order if v in set(part[x])])
        xs = np.array([position[v] for v in table.index], dtype=float)
        lows, highs = table[low].to_numpy(dtype=float), table[high].to_numpy(dtype=float)
        finite = np.isfinite(lows)
        line = ax.plot(xs[finite], lows[finite], marker="o", label=None if name is None else str(name))[0]
        if (~finite).any():
            ax.plot(xs[~finite], np.full((~finite).sum(), 0.97), "^", color=line.get_color(), transform=at_top,
                    clip_on=False)
            notes.add("triangles at the top: infinite (ALG = 0)")
        open_ = np.zeros_like(finite)
        open_[finite] = highs[finite] - lows[finite] > 1e-12 * np.maximum(1.0, np.abs(lows[finite]))
        if open_.any():
            ax.errorbar(xs[open_], lows[open_], yerr=[np.zeros(open_.sum()), (highs - lows)[open_]], fmt="none",
                        ecolor=line.get_color(), capsize=3, lw=1)
            notes.add("bars: up to the bound where OPT is not proven")
    if not numeric:
        ax.set_xticks(range(len(order)), [str(v) for v in order])
    ax.set_xlabel(label(x))
    ax.set_ylabel(f"{stat} {label(y)}")
    if notes:
        ax.text(0.99, 0.01, "; ".join(sorted(notes)), transform=ax.transAxes, ha="right", va="bottom", fontsize=7)
    if hue is not None:
        ax.legend(title=hue, fontsize="small")
    ax.grid(alpha=0.3)
    return ax


def distribution(frame: pd.DataFrame, y: str, *, hue: str = "algorithm", kind: str = "box", ax: Any = None) -> Any:
    """The distribution of ``y`` per ``hue`` value (in order of appearance): boxes or ECDFs. For
    ``y = "ratio"`` each row counts with its interval's upper end (the ratio where OPT is proven).
    Infinite values cannot be drawn: each group's label counts them."""
    import numpy as np

    ax = _axes(ax)
    _, high = interval_columns(frame, y)
    names = list(pd.unique(frame[hue]))
    values = [frame.loc[frame[hue] == name, high].dropna().to_numpy(dtype=float) for name in names]
    data = [v[np.isfinite(v)] for v in values]
    labels = [f"{name} ({len(v) - len(d)} inf)" if len(v) > len(d) else str(name)
              for name, v, d in zip(names, values, data)]
    shown = label(y) + (" (upper end where OPT is not proven)" if high != y else "")
    if kind == "box":
        ax.boxplot(data, tick_labels=labels)
        ax.set_xlabel(label(hue))
        ax.set_ylabel(shown)
    elif kind == "ecdf":
        for name, finite, total in zip(labels, data, values):
            ordered = np.sort(finite)
            ax.step(ordered, np.arange(1, len(ordered) + 1) / max(1, len(total)), where="post", label=name)
        ax.set_xlabel(shown)
        ax.set_ylabel("fraction of rows")
        ax.legend(title=hue, fontsize="small")
    else:
        raise ValueError(f"unknown kind {kind!r}; choose box or ecdf")
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


def heatmap(table: pd.DataFrame, *, ax: Any = None, label: str = "", spread: float | None = None) -> Any:
    """``table`` (rows x columns of positive ratios, e.g. a pivot) as coloured cells with their values
    written in, on a diverging scale around 1 in log space: blue below 1, red above, white at 1.
    ``spread`` is the largest factor the scale shows either way (default: the table's own), so that
    several panels can share one scale."""
    import numpy as np

    ax = _axes(ax)
    values = table.to_numpy(dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        logs = np.log2(values)
    finite = np.abs(logs[np.isfinite(logs)])
    limit = np.log2(spread) if spread is not None else max(1.0, float(finite.max()) if finite.size else 1.0)
    image = ax.imshow(logs, cmap="RdBu_r", vmin=-limit, vmax=limit, aspect="auto")
    for (i, j), value in np.ndenumerate(values):
        ax.text(j, i, f"{value:.3g}", ha="center", va="center", fontsize=8)
    ax.set_xticks(range(values.shape[1]), [str(c) for c in table.columns])
    ax.set_yticks(range(values.shape[0]), [str(r) for r in table.index])
    ax.set_xlabel(label_of(table.columns.name))
    ax.set_ylabel(label_of(table.index.name))
    steps = np.arange(-np.floor(limit), np.floor(limit) + 1)
    bar = ax.figure.colorbar(image, ax=ax, ticks=steps)
    bar.ax.set_yticklabels([f"{2.0 ** k:g}" if k >= 0 else f"1/{2.0 ** -k:g}" for k in steps])
    bar.set_label(label, fontsize=8)
    return ax


def label_of(name: Any) -> str:
    return "" if name is None else label(str(name))
