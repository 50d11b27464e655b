"""Where does Themis win? Reads the results of ``sweeps/themis-where-wins*.yaml`` and prints, per
cell, max rho of Themis (as the spec reads), of themis-running and of the best of the six baselines,
with the ratios Themis / best baseline (below 1: Themis is fairer); draws the ratios as heatmaps,
lease across, one row of panels per ``--rows`` setting.

    python tools/themis_where_wins.py RESULTS [RESULTS...] [-o figure.png] [--rows p_net]
"""

from __future__ import annotations

import argparse

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from mlsched import plot  # noqa: E402
from mlsched.baselines.greedy_rounds import THEMIS_BASELINES  # noqa: E402

THEMIS = ("themis", "themis-running")
SETTINGS = ["workload", "restart_overhead", "load", "fairness_knob", "p_net", "lease"]


def per_cell(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per cell: the settings, max rho of each Themis variant and of the best baseline."""
    frame = frame[frame["status"] == "ok"]
    settings = [c for c in SETTINGS if c in frame]
    wide = frame.pivot_table(index=settings + ["seed"], columns="algorithm", values="max_rho")
    baselines = [b for b in THEMIS_BASELINES if b in wide]
    out = pd.DataFrame({"best_baseline": wide[baselines].min(axis=1), "which": wide[baselines].idxmin(axis=1)})
    for name in THEMIS:
        out[name] = wide[name]
        out[f"{name}_vs_best"] = wide[name] / out["best_baseline"]
    return out.reset_index()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", nargs="+")
    parser.add_argument("-o", "--output", help="heatmap image")
    parser.add_argument("--rows", default="p_net", help="setting on the heatmaps' rows (lease across)")
    args = parser.parse_args()
    cells = per_cell(pd.concat([pd.read_parquet(r) for r in args.results], ignore_index=True))
    with pd.option_context("display.width", 200, "display.max_rows", 500):
        print(cells.round(3).to_string(index=False))
    if not args.output:
        return
    panels = [c for c in ("workload", "restart_overhead", "load", "fairness_knob", "p_net")
              if c in cells and c != args.rows and cells[c].nunique() > 1]
    groups = list(cells.groupby(panels)) if panels else [((), cells)]
    ratios = cells[[f"{name}_vs_best" for name in THEMIS]].to_numpy()
    spread = float(max(ratios.max(), 1 / ratios.min()))
    fig, axes = plt.subplots(len(groups), 2, figsize=(10, 2.6 * len(groups)), squeeze=False)
    for row, (key, part) in zip(axes, groups):
        title = ", ".join(f"{k} {v}" for k, v in zip(panels, key if isinstance(key, tuple) else (key,)))
        for ax, name in zip(row, THEMIS):
            table = part.pivot_table(index=args.rows, columns="lease", values=f"{name}_vs_best", aggfunc="mean")
            plot.heatmap(table, ax=ax, label="max rho / best baseline's", spread=spread)
            ax.set_title(f"{name}: {title}", fontsize=9)
    fig.tight_layout()
    fig.savefig(args.output, dpi=120)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
