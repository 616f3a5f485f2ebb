"""Plots of the SIMULATED stand-in tables (docs/standin_*.png).

Run from the repository root: ``python docs/plot_standin.py``. Draws on
:class:`matplotlib.figure.Figure` objects (no pyplot global state), prints
the README's landscape figures of every shipped stand-in (pco64, pco32,
pco16; the two single-table plots are pco64's default) and the table of
every variant's figures in docs/standins.md, and draws the variants side by
side (docs/standin_variants_<instance>.png).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from bolt_pco64.instances import get_instance
from bolt_pco64.tables.simulate import build_model
from bolt_pco64.tables.standins import STANDIN_VARIANTS, standin_filename

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
    rows = []
    for name, variants in STANDIN_VARIANTS.items():
        plot_variants(name, here / f"standin_variants_{name}.png")
        rows += [variant_figures(name, v) for v in variants]
    print(variant_table(rows))


def _read_variant(name: str, variant: str) -> tuple[pd.DataFrame, dict[str, str]]:
    """A shipped variant's rows and its parquet metadata."""
    path = ROOT / "data" / standin_filename(get_instance(name), variant)
    meta = pq.read_schema(path).metadata or {}
    return pd.read_parquet(path), {k.decode(): v.decode() for k, v in meta.items()}


def _encoded(frame: pd.DataFrame, name: str) -> np.ndarray:
    """The encoded inputs (``zero_stage`` as its ordinal), ``N x d``."""
    instance = get_instance(name)
    zero = instance.inputs[instance.input_index("zero_stage")]
    enc = frame[list(instance.input_columns)].copy()
    enc["zero_stage"] = enc["zero_stage"].map(zero.encode)
    return enc.to_numpy(dtype=float)


def variant_figures(name: str, variant: str) -> dict[str, object]:
    """The figures docs/standins.md gives for one shipped variant.

    ``near_1pct`` and ``near_5pct`` count feasible rows within 1 % and 5 % of
    the best; ``oom_distance`` is the Euclidean distance, in the encoded
    space the problem snaps in, from the best row to the nearest OOM row, and
    ``oom_steps`` the fewest one-level changes (L1) between them.
    """
    frame, meta = _read_variant(name, variant)
    ok = frame["ran_successfully"].to_numpy()
    value = np.where(ok, frame["throughput_mean"].to_numpy(), -np.inf)
    best = int(np.argmax(value))
    x = _encoded(frame, name)
    gap = x[~ok] - x[best]
    pp1 = frame["log2_pp_size"].to_numpy() == 0
    return {
        "instance": name,
        "variant": variant,
        "rows": len(frame),
        "feasible": int(ok.sum()),
        "best_config": tuple(int(v) for v in x[best]),
        "best_value": float(value[best]),
        "best_peak": float(frame["peak_mem"].iloc[best]),
        "max_feasible_peak": float(frame.loc[ok, "peak_mem"].max()),
        "pp1_feasible": int((ok & pp1).sum()),
        "pp1_rows": int(pp1.sum()),
        "near_1pct": int((value >= 0.99 * value[best]).sum()),
        "near_5pct": int((value >= 0.95 * value[best]).sum()),
        "oom_distance": float(np.sqrt((gap**2).sum(axis=1)).min()),
        "oom_steps": int(np.abs(gap).sum(axis=1).min()),
        "overhead_gb": float(meta["calibration.overhead_gb"]),
        "fragmentation": float(meta["calibration.fragmentation"]),
        "usable_gb": float(meta["calibration.usable_gb"]),
        "efficiency": float(meta["calibration.compute_efficiency"]),
    }


def variant_table(rows: list[dict[str, object]]) -> str:
    """A Markdown table of :func:`variant_figures` rows."""
    head = (
        "| instance | variant | rows | feasible | best (encoded) | best value | "
        "best peak GB | largest feasible peak GB | pp = 1 feasible | within 1 % "
        "/ 5 % | best → nearest OOM (distance, steps) | overhead GB | "
        "fragmentation | usable GB | efficiency |"
    )
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for r in rows:
        lines.append(
            f"| {r['instance']} | {r['variant']} | {r['rows']} | {r['feasible']} "
            f"| {r['best_config']} | {r['best_value']:.5f} | {r['best_peak']:.1f} "
            f"| {r['max_feasible_peak']:.1f} | {r['pp1_feasible']} of "
            f"{r['pp1_rows']} | {r['near_1pct']} / {r['near_5pct']} | "
            f"{r['oom_distance']:.2f}, {r['oom_steps']} | {r['overhead_gb']:.1f} "
            f"| {r['fragmentation']:.3f} | {r['usable_gb']:.1f} "
            f"| {r['efficiency']:.3f} |"
        )
    return "\n".join(lines)


def _feasibility_grid(frame: pd.DataFrame) -> tuple[list[str], list[int], dict]:
    """Rows (pp, and ZeRO stage at pp = 1), tp columns, ``(row, tp) -> rows``."""
    pp = 2 ** frame["log2_pp_size"]
    tp = 2 ** frame["log2_tp_size"]
    label = np.where(
        pp == 1, "pp 1, ZeRO " + frame["zero_stage"].astype(str), "pp " + pp.astype(str)
    )
    order = [f"pp 1, ZeRO {z}" for z in (0, 2, 3)]
    order += [f"pp {p}" for p in sorted(pp.unique()) if p > 1]
    groups = {key: idx for key, idx in frame.groupby([label, tp]).groups.items()}
    return order, sorted(tp.unique()), groups


def plot_variants(name: str, out: Path) -> None:
    """Each variant's landscape, side by side.

    Top: feasibility by pipeline size (and ZeRO stage without a pipeline)
    and tensor-parallel size, each cell the share of its configurations that
    fit ("fit/n"), the count of rows within 1 % of the best ("n•"), the
    best's cell outlined. Bottom: throughput against reported peak memory of the runs
    that fit, the best as a star.
    """
    variants = STANDIN_VARIANTS[name]
    fig = Figure(figsize=(4.2 * len(variants), 8.6), dpi=110)
    axes = fig.subplots(2, len(variants), squeeze=False)
    for col, variant in enumerate(variants):
        frame, meta = _read_variant(name, variant)
        figures = variant_figures(name, variant)
        ok = frame["ran_successfully"].to_numpy()
        value = np.where(ok, frame["throughput_mean"].to_numpy(), -np.inf)
        best = int(np.argmax(value))
        near = value >= 0.99 * value[best]
        order, tps, groups = _feasibility_grid(frame)
        share = np.full((len(order), len(tps)), np.nan)
        ax = axes[0, col]
        for i, row in enumerate(order):
            for j, t in enumerate(tps):
                idx = groups.get((row, t))
                if idx is None:
                    continue
                idx = np.asarray(idx)
                share[i, j] = ok[idx].mean()
                dots = f"\n{int(near[idx].sum())}•" if near[idx].any() else ""
                ax.text(
                    j,
                    i,
                    f"{int(ok[idx].sum())}/{len(idx)}{dots}",
                    ha="center",
                    va="center",
                    fontsize=8,
                    color="black" if 0.25 < share[i, j] < 0.85 else "white",
                )
                if best in idx:
                    ax.add_patch(
                        Rectangle(
                            (j - 0.48, i - 0.48), 0.96, 0.96, fill=False, ec="red", lw=2
                        )
                    )
        ax.imshow(share, cmap="RdYlGn", vmin=0, vmax=1, aspect="auto")
        ax.set_xticks(range(len(tps)), [f"tp {t}" for t in tps])
        ax.set_yticks(range(len(order)), order if col == 0 else [""] * len(order))
        ax.set_title(
            f"{name} '{variant}'\npp = 1 fit {figures['pp1_feasible']}/"
            f"{figures['pp1_rows']}, all {figures['feasible']}/{figures['rows']}"
            f"\nwithin 1 %: {figures['near_1pct']} rows ({figures['near_1pct'] / figures['feasible']:.1%}),"
            f" best → OOM: {figures['oom_steps']} step(s)"
            f"\noverhead {figures['overhead_gb']:.1f} GB",
            fontsize=8,
        )
        ax = axes[1, col]
        feas = frame[ok]
        for stage, colour in {0: "tab:purple", 2: "tab:green", 3: "tab:orange"}.items():
            part = feas[feas["zero_stage"] == stage]
            ax.scatter(
                part["peak_mem"],
                part["throughput_mean"],
                s=8,
                alpha=0.7,
                color=colour,
                label=f"ZeRO {stage}",
            )
        ax.scatter(
            [frame["peak_mem"].iloc[best]],
            [value[best]],
            marker="*",
            s=160,
            c="red",
            label="best",
        )
        ax.set_xlabel("reported peak memory of the runs that fit (GB)")
        if col == 0:
            ax.set_ylabel(f"throughput ({meta['assumptions.throughput_unit']})")
            ax.legend(fontsize=7, loc="lower left")
    fig.suptitle(
        f"SIMULATED {name} stand-in variants: same published figures,\ndifferent "
        "crash boundaries (cells: runs that fit / configurations; n• rows within "
        "1 % of the best; red box: the best's cell)",
        fontsize=9,
    )
    fig.tight_layout()
    fig.savefig(out)


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
