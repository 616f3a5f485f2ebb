"""Plots of the SIMULATED stand-in table (docs/standin_*.png).

Run from the repository root: ``python docs/plot_standin.py``.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
TABLE = ROOT / "data" / "pco64_simulated.parquet"
KNOBS = [
    ("log2_dp_size", "log2 DP"),
    ("log2_tp_size", "log2 TP"),
    ("log2_pp_size", "log2 PP"),
    ("log2_cp_size", "log2 CP"),
    ("log2_sp_size", "log2 SP"),
    ("log2_dp_bucket_size_mb", "log2 bucket MB"),
    ("zero_stage", "ZeRO stage"),
    ("log2_num_model_chunks", "log2 chunks"),
]


def plot_throughput_vs_memory(frame: pd.DataFrame, out: Path) -> None:
    """Throughput against reported peak memory; OOM rows as a rug at the bottom."""
    ok = frame[frame["ran_successfully"]]
    oom = frame[~frame["ran_successfully"]]
    fig, ax = plt.subplots(figsize=(7, 4.5), dpi=120)
    sc = ax.scatter(
        ok["peak_mem"],
        ok["throughput_mean"],
        c=ok["zero_stage"],
        cmap="viridis",
        s=14,
        alpha=0.8,
        label=f"ran ({len(ok)})",
    )
    best = ok.loc[ok["throughput_mean"].idxmax()]
    ax.scatter(
        [best["peak_mem"]], [best["throughput_mean"]], marker="*", s=200, c="red"
    )
    ax.annotate(
        "card's best",
        (best["peak_mem"], best["throughput_mean"]),
        xytext=(6, -12),
        textcoords="offset points",
        color="red",
    )
    y0 = ok["throughput_mean"].min() * 0.97
    ax.plot(
        [ok["peak_mem"].max() + 1.5] * len(oom),
        [y0] * len(oom),
        "x",
        color="crimson",
        label=f"OOM ({len(oom)}, no throughput, peak = inf)",
    )
    ax.axvline(96, color="grey", ls="--", lw=1)
    ax.text(95.5, ax.get_ylim()[1], "96 GB", ha="right", va="top", color="grey")
    fig.colorbar(sc, ax=ax, label="ZeRO stage")
    ax.set_xlabel("reported peak memory per GPU (GB)")
    ax.set_ylabel("throughput (samples / s / GPU)")
    ax.set_title("SIMULATED stand-in: throughput vs peak memory")
    ax.legend(loc="lower left", fontsize=8)
    fig.tight_layout()
    fig.savefig(out)
    plt.close(fig)


def plot_by_knob(frame: pd.DataFrame, out: Path) -> None:
    """Distribution of feasible throughput and OOM share for each knob level."""
    fig, axes = plt.subplots(2, 4, figsize=(12, 6), dpi=110, sharey=True)
    for ax, (col, label) in zip(axes.ravel(), KNOBS, strict=True):
        levels = sorted(frame[col].unique())
        data = [
            frame.loc[
                (frame[col] == v) & frame["ran_successfully"], "throughput_mean"
            ].to_numpy()
            for v in levels
        ]
        ax.boxplot(data, tick_labels=[str(v) for v in levels], showfliers=False)
        for i, v in enumerate(levels, start=1):
            rows = frame[frame[col] == v]
            share = 1 - rows["ran_successfully"].mean()
            ax.text(
                i,
                0.99,
                f"{share:.0%}\nOOM",
                ha="center",
                va="top",
                fontsize=7,
                transform=ax.get_xaxis_transform(),
                color="crimson",
            )
        ax.set_xlabel(label)
    for ax in axes[:, 0]:
        ax.set_ylabel("throughput (samples/s/GPU)")
    fig.suptitle("SIMULATED stand-in: throughput of the runs that fit, per knob level")
    fig.tight_layout()
    fig.savefig(out)
    plt.close(fig)


def main() -> None:
    frame = pd.read_parquet(TABLE)
    here = Path(__file__).resolve().parent
    plot_throughput_vs_memory(frame, here / "standin_throughput_vs_memory.png")
    plot_by_knob(frame, here / "standin_by_knob.png")


if __name__ == "__main__":
    main()
