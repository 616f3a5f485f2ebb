"""Measure how a crash should be reported to Optuna's constraint-aware samplers.

For each sampler (``TPESampler``, ``GPSampler``; ``RandomSampler`` as a
reference, for which the representation makes no difference) and each crash
representation of :class:`bolt_pco64.optuna.PCOProblem` (its
``crash_report``, the adapters' one vocabulary: ``placeholder``: COMPLETE with
a placeholder objective and a positive constraint; ``failed``: a NaN
objective, so a FAIL trial; ``missing``: a PRUNED trial with its constraint;
the committed CSVs under ``docs/results/optuna`` spell the last two by their
former names ``fail`` and ``pruned``, still accepted), run ``study.optimize(problem, n_trials=--trials)`` from
``--seeds`` seeds. Every study starts from the harness's initial design for
its seed (``--n-init`` distinct rows drawn by ``torch.randperm`` from a
generator seeded by the seed, enqueued with ``study.enqueue_trial``); the
sampler is seeded by the seed. Constraints reach the samplers through
``trial.set_constraint`` (Optuna >= 5; ``constraints_func`` is deprecated
there and would record them twice).

``--off-table reject`` measures the alternative to snapping: a suggested
combination that is not a table row is not run; its trial completes as
infeasible (the placeholder objective, constraint 1) without a row. Such a
trial costs no run, so a study then goes on until ``--trials`` rows have run
(at most ``--max-trials`` trials). ``snap`` (the problem's behaviour) is the
default.

Per run: the share of trials that ran out of memory (``oom_share``), the
trials whose snapped row had been evaluated before in the study (``repeats``,
each a charged run of a configuration already known), the simple regret
(``optimal_value`` minus the best feasible true throughput among the rows
run) after half and all of the trials, and the wall time. The summary (one
line per sampler and representation: mean and standard error over seeds)
goes to ``--out`` (default ``docs/results/optuna/crash_representation.csv``),
the per-run values beside it (``..._runs.csv``).

Run: ``python benchmarks/optuna_crash.py [--seeds 10] [--trials 40]
[--samplers tpe,gp,random] [--crash placeholder,failed,missing] [--table PATH]``

The per-run values are written at full precision, and the summary is computed
from them as written: ``--report DIR`` runs nothing and rewrites each
summary ``<name>.csv`` of ``DIR`` from its ``<name>_runs.csv``, printing the
files written (``bolt-pco64 report DIR`` calls it: the folder's
``report.json`` names this script).
"""

from __future__ import annotations

import argparse
import itertools
import math
import time
import warnings
from pathlib import Path

import optuna
import pandas as pd
import torch

from bolt_pco64._io import atomic_write_text
from bolt_pco64.optuna import CONSTRAINT_NAME, CRASH_REPORTS, ROW_ATTR, PCOProblem

SAMPLERS = {
    "tpe": optuna.samplers.TPESampler,
    "gp": optuna.samplers.GPSampler,
    "random": optuna.samplers.RandomSampler,
}
METRICS = ("trials", "runs", "oom_share", "repeats", "regret_half", "regret", "seconds")


class RejectOffTable(PCOProblem):
    """A problem that runs only exact table rows: any other combination
    completes as infeasible (placeholder objective, constraint 1), no row run."""

    def __call__(self, trial: optuna.Trial) -> float:
        space = self.search_space
        params = {n: trial.suggest_int(n, d.low, d.high) for n, d in space.items()}
        if self.row_params(self.row(params)) == params:
            return super().__call__(trial)  # suggest_int returns the same values
        trial.set_constraint(CONSTRAINT_NAME, 1.0)
        trial.set_user_attr(ROW_ATTR, -1)
        return self.crash_value


def initial_rows(n_rows: int, n_init: int, seed: int) -> list[int]:
    """The harness's initial design for ``seed`` (``bolt_pco64.bench.run``)."""
    g = torch.Generator().manual_seed(seed)
    return torch.randperm(n_rows, generator=g)[:n_init].tolist()


def run(
    problem: PCOProblem, sampler: str, seed: int, trials: int, n_init: int, cap: int
) -> dict:
    """One study until ``trials`` rows have run (at most ``cap`` trials); its metrics."""
    n_rows = len(problem.problem.table)
    true_y = problem.problem.evaluate_true(problem.problem.candidates()).tolist()
    study = optuna.create_study(
        directions=problem.directions, sampler=SAMPLERS[sampler](seed=seed)
    )
    for r in initial_rows(n_rows, n_init, seed):
        study.enqueue_trial(problem.row_params(r))
    t0 = time.perf_counter()

    def enough(study: optuna.Study, _: optuna.trial.FrozenTrial) -> None:
        if sum(t.user_attrs.get(ROW_ATTR, -1) >= 0 for t in study.trials) >= trials:
            study.stop()

    study.optimize(problem, n_trials=max(cap, trials), callbacks=[enough])
    seconds = time.perf_counter() - t0
    rows = [t.user_attrs[ROW_ATTR] for t in study.trials]
    rows = [r for r in rows if r >= 0]  # -1: an off-table trial that ran nothing
    best, regrets, seen, repeats = -math.inf, [], set(), 0
    optimal = float(problem.problem.optimal_value)
    for r in rows:
        repeats += r in seen
        seen.add(r)
        if not math.isnan(true_y[r]):
            best = max(best, true_y[r])
        regrets.append(optimal - best)
    regrets += [regrets[-1]] * (trials - len(regrets))
    return {
        "sampler": sampler,
        "crash": problem.crash_report,
        "off_table": "reject" if isinstance(problem, RejectOffTable) else "snap",
        "seed": seed,
        "trials": len(study.trials),
        "runs": len(rows),
        "oom_share": sum(math.isnan(true_y[r]) for r in rows) / len(rows),
        "repeats": repeats,
        "regret_half": regrets[trials // 2 - 1],
        "regret": regrets[-1],
        "seconds": seconds,
    }


def summarize(runs: pd.DataFrame) -> pd.DataFrame:
    """Mean and standard error of each metric by sampler and representation."""
    groups = runs.groupby(["sampler", "crash", "off_table"], sort=False)
    out = groups.size().rename("seeds").to_frame()
    for m in METRICS:
        out[m] = groups[m].mean()
        out[m + "_se"] = groups[m].std(ddof=1) / groups[m].count().pow(0.5)
    return out.reset_index()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--trials", type=int, default=40)
    parser.add_argument("--n-init", type=int, default=10)
    parser.add_argument("--samplers", default="tpe,gp,random")
    parser.add_argument("--crash", default=",".join(CRASH_REPORTS))
    parser.add_argument("--off-table", default="snap", help="snap and/or reject")
    parser.add_argument("--max-trials", type=int, default=400)
    parser.add_argument("--instance", default="pco64")
    parser.add_argument("--table", default=None)
    parser.add_argument("--out", default="docs/results/optuna/crash_representation.csv")
    parser.add_argument(
        "--report",
        type=Path,
        default=None,
        help="Run nothing: rewrite DIR's summaries from its *_runs.csv.",
    )
    args = parser.parse_args()
    if args.report is not None:
        print("\n".join(str(p) for p in report(args.report)))
        return
    torch.set_num_threads(1)
    warnings.simplefilter("ignore")
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    records = []
    for sampler in args.samplers.split(","):
        # The random sampler ignores every trial: one representation suffices.
        crashes = (
            args.crash.split(",")[:1] if sampler == "random" else args.crash.split(",")
        )
        for crash, off_table in itertools.product(crashes, args.off_table.split(",")):
            kind = RejectOffTable if off_table == "reject" else PCOProblem
            problem = kind(args.instance, table=args.table, crash_report=crash)
            for seed in range(args.seeds):
                rec = run(
                    problem, sampler, seed, args.trials, args.n_init, args.max_trials
                )
                records.append(rec)
                print(
                    f"{sampler:6} {crash:11} {off_table:6} seed {seed}: "
                    f"trials {rec['trials']} runs {rec['runs']} oom {rec['oom_share']:.2f} "
                    f"repeats {rec['repeats']} regret {rec['regret']:.4f} "
                    f"({rec['seconds']:.1f} s)",
                    flush=True,
                )
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    runs_path = out.with_name(out.stem + "_runs.csv")
    atomic_write_text(runs_path, pd.DataFrame.from_records(records).to_csv(index=False))
    summary = write_summary(runs_path, out)
    print(summary.to_string(index=False, float_format=lambda v: f"{v:.4g}"))


def write_summary(runs_path: Path, out: Path) -> pd.DataFrame:
    """Write ``out``: the summary of the per-run values in ``runs_path``."""
    summary = summarize(pd.read_csv(runs_path))
    atomic_write_text(out, summary.to_csv(index=False, float_format="%.6g"))
    return summary


def report(folder: Path) -> list[Path]:
    """Rewrite each ``<name>.csv`` of ``folder`` from ``<name>_runs.csv``."""
    written = []
    for runs_path in sorted(folder.glob("*_runs.csv")):
        out = runs_path.with_name(runs_path.stem.removesuffix("_runs") + ".csv")
        write_summary(runs_path, out)
        written.append(out)
    return written


if __name__ == "__main__":
    main()
