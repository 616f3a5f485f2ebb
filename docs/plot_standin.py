"""Plots of the SIMULATED pco64 stand-in table (docs/standin_*.png).

Run from the repository root: ``python docs/plot_standin.py``. Draws on
:class:`matplotlib.figure.Figure` objects (no pyplot global state) and prints
the README's landscape figures of every shipped stand-in (pco64, pco32,
pco16; the plots are pco64's).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from bolt_pco64.instances import get_instance
from bolt_pco64.simulate import build_model

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


def _modelled_peaks(frame: pd.DataFrame) -> np.ndarray:
    """The model's reported peak (max over GPUs, GB) of each row, OOM rows included."""
    instance = get_instance("pco64")
    model = build_model(instance, 0)
    by_row = {
        c.encoded(instance): float(p.max())
        for c, p in zip(model.configs, model.peaks, strict=True)
    }
    zero = instance.inputs[instance.input_index("zero_stage")]
    peaks = []
    for row in frame[list(instance.input_columns)].itertuples(index=False):
        cells = list(row)
        cells[instance.input_index("zero_stage")] = zero.encode(int(row.zero_stage))
        peaks.append(by_row[tuple(int(v) for v in cells)])
    return np.asarray(peaks)


def plot_throughput_vs_memory(frame: pd.DataFrame, out: Path) -> None:
    """Throughput against peak memory by ZeRO stage; OOM rows as a strip below.

    OOM rows have no throughput and ``peak_mem = inf`` in the table; the strip
    places them at the peak the model says they would have reported, which shows
    that no peak-memory threshold separates the runs that fit from those that
    do not.
    """
    ok = frame[frame["ran_successfully"]]
    oom = frame[~frame["ran_successfully"]]
    oom_peaks = _modelled_peaks(oom)
    fig = Figure(figsize=(7.5, 4.8), dpi=120)
    ax = fig.subplots()
    colours = {0: "tab:purple", 2: "tab:green", 3: "tab:orange"}
    for stage, colour in colours.items():
        part = ok[ok["zero_stage"] == stage]
        ax.scatter(
            part["peak_mem"],
            part["throughput_mean"],
            s=14,
            alpha=0.8,
            color=colour,
            label=f"ran, ZeRO {stage} ({len(part)})",
        )
    best = ok.loc[ok["throughput_mean"].idxmax()]
    ax.scatter(
        [best["peak_mem"]], [best["throughput_mean"]], marker="*", s=220, c="red"
    )
    ax.annotate(
        "card's best",
        (best["peak_mem"], best["throughput_mean"]),
        xytext=(6, -12),
        textcoords="offset points",
        color="red",
    )
    y0 = ok["throughput_mean"].min() * 0.55
    jitter = np.random.default_rng(0).uniform(-0.006, 0.006, size=len(oom))
    x_max = 125.0
    ax.scatter(
        np.minimum(oom_peaks, x_max),
        y0 + jitter,
        marker="x",
        s=14,
        color="crimson",
        alpha=0.7,
        label=f"OOM ({len(oom)}): no throughput; x = modelled peak (clipped at {x_max:g})",
    )
    ax.axhline(ok["throughput_mean"].min() * 0.8, color="lightgrey", lw=0.8)
    ax.axvline(ok["peak_mem"].max(), color="grey", ls=":", lw=1)
    ax.text(
        ok["peak_mem"].max() + 0.5,
        ax.get_ylim()[1],
        f"largest feasible peak {ok['peak_mem'].max():.1f} GB",
        ha="left",
        va="top",
        color="grey",
        fontsize=7,
    )
    ax.set_xlim(right=x_max + 3)
    ax.set_xlabel("reported peak memory per GPU (GB)")
    ax.set_ylabel("throughput (samples / s / GPU)")
    ax.set_title("SIMULATED stand-in: throughput vs peak memory")
    ax.legend(loc="center right", fontsize=7)
    fig.tight_layout()
    fig.savefig(out)


def plot_by_knob(frame: pd.DataFrame, out: Path) -> None:
    """Distribution of feasible throughput and OOM share for each knob level."""
    fig = Figure(figsize=(12, 6), dpi=110)
    axes = fig.subplots(2, 4, sharey=True)
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


def main() -> None:
    frame = pd.read_parquet(TABLE)
    here = Path(__file__).resolve().parent
    plot_throughput_vs_memory(frame, here / "standin_throughput_vs_memory.png")
    plot_by_knob(frame, here / "standin_by_knob.png")
    for name in ("pco64", "pco32", "pco16"):
        table = pd.read_parquet(ROOT / "data" / f"{name}_simulated.parquet")
        for key, value in landscape_figures(table, name).items():
            print(f"{name} {key}: {value:.4g}")


def landscape_figures(frame: pd.DataFrame, name: str = "pco64") -> dict[str, float]:
    """The README's realism figures of a table of instance ``name``'s schema.

    A *local optimum* is a feasible row with no feasible neighbour of higher
    ``throughput_mean``; neighbours differ in exactly one encoded input by
    one level (``zero_stage`` as the ordinal 0/1/2). The bucket-size effect
    is, over groups of rows equal in every input but the bucket with all
    four bucket sizes feasible, the median relative spread ``(max - min) /
    max`` of their throughputs.
    """
    instance = get_instance(name)
    cols = list(instance.input_columns)
    zero = instance.inputs[instance.input_index("zero_stage")]
    enc = frame[cols].copy()
    enc["zero_stage"] = enc["zero_stage"].map(zero.encode)
    ok = frame["ran_successfully"].to_numpy()
    value = np.where(ok, frame["throughput_mean"].to_numpy(), -np.inf)
    index = {tuple(int(v) for v in row): i for i, row in enumerate(enc.values)}
    local = 0
    for i, row in enumerate(enc.values):
        if not ok[i]:
            continue
        better = False
        for j in range(len(cols)):
            for step in (-1, 1):
                key = list(int(v) for v in row)
                key[j] += step
                k = index.get(tuple(key))
                if k is not None and value[k] > value[i]:
                    better = True
        local += not better
    best = value.max()
    others = [c for c in cols if c != "log2_dp_bucket_size_mb"]
    spreads = []
    for _, group in frame[frame["ran_successfully"]].groupby(others):
        if len(group) == 4:
            t = group["throughput_mean"]
            spreads.append(float((t.max() - t.min()) / t.max()))
    return {
        "rows": float(len(frame)),
        "feasible": float(ok.sum()),
        "within_1pct": float((value >= 0.99 * best).sum()),
        "within_5pct": float((value >= 0.95 * best).sum()),
        "local_optima": float(local),
        "bucket_spread_median": float(np.median(spreads)),
        "bucket_spread_max": float(np.max(spreads)),
        "feasible_peak_min": float(frame.loc[ok, "peak_mem"].min()),
        "feasible_peak_max": float(frame.loc[ok, "peak_mem"].max()),
    }


if __name__ == "__main__":
    main()
