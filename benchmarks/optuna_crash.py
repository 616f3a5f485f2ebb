"""Measure how a crash should be reported to Optuna's constraint-aware samplers.

For each sampler (``TPESampler``, ``GPSampler``; ``RandomSampler`` as a
reference, for which the representation makes no difference) and each crash
representation of :class:`bolt_pco64.integrations.optuna.PCOProblem` (its
``crash_report``, the adapters' one vocabulary: ``placeholder``: COMPLETE with
a placeholder objective and a positive constraint; ``failed``: a NaN
objective, so a FAIL trial; ``missing``: a PRUNED trial with its constraint;
the last two formerly spelled ``fail`` and ``pruned``, still accepted by
``--crash``), run ``study.optimize(problem, n_trials=--trials)`` from
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

Per run (one row of ``<name>_runs.csv``: ``sampler``, ``crash``,
``off_table``, ``seed``): the trials (``trials``) and the rows run
(``runs``), the share of the runs that ran out of memory (``oom_share``), the
runs whose snapped row had been run before in the study (``repeats``, each a
charged run of a configuration already known), the simple regret
(``optimal_value`` minus the best feasible true throughput among the rows
run) after half and all of the ``--trials`` runs (``regret_half``,
``regret``), and the wall time (``seconds``). The summary (one line per
sampler and representation: mean and standard error over seeds) goes to
``--out`` (``<name>.csv``, default
``docs/results/optuna/crash_representation.csv``), the per-run values beside
it (``<name>_runs.csv``), and the records of every trial beside them
(``<name>_trials.parquet``).

The records (``benchmarks/_trial_records.py`` has the columns, shared with
``ax_matrix.py``): one row per trial, keyed by ``instance``, the run's
``sampler``, ``crash``, ``off_table``, ``seed`` and its settings ``n_init``,
``trials_requested`` (``--trials``); ``trial`` (``trial.number``),
``generator`` (``enqueued`` for the initial design, else the sampler),
``proposed_<knob>`` (the suggested parameters, ``zero_stage`` decoded to its
stage), ``<knob>`` (the row run; missing for a suggestion ``reject`` refused),
``on_table``, ``oom``, ``throughput`` (the row's true throughput, NaN for a
crash), ``reported`` (the trial's value, NaN for a FAIL or PRUNED trial),
``status`` (``completed``, ``failed``, ``pruned``), ``run_seconds`` (the
problem's :data:`~bolt_pco64.integrations.optuna.SECONDS_ATTR`; 0 for a refused
suggestion), ``optimal_value``.

Run: ``python benchmarks/optuna_crash.py [--seeds 10] [--trials 40]
[--samplers tpe,gp,random] [--crash placeholder,failed,missing] [--table PATH]``

Every per-run value but ``seconds`` is computed from the records
(:func:`derive`), and written at full precision; the summary is computed from
the per-run values as written. ``--report DIR`` runs nothing: it rewrites each
``<name>_runs.csv`` of ``DIR`` from its ``seconds`` and the records
``<name>_trials.parquet``, then the summary ``<name>.csv`` from it, printing
the files written (``benchmarks/report_results.py DIR`` calls it: the folder's
``report.json`` names this script); a run writes them the same way, so they
come back byte for byte.
"""

from __future__ import annotations

import argparse
import itertools
import math
import time
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path

import _trial_records
import optuna
import pandas as pd
import torch

from bolt_pco64._io import atomic_write_text
from bolt_pco64.integrations.common import Parameters
from bolt_pco64.integrations.optuna import (
    CONSTRAINT_NAME,
    CRASH_REPORTS,
    ROW_ATTR,
    SECONDS_ATTR,
    PCOProblem,
)

SAMPLERS = {
    "tpe": optuna.samplers.TPESampler,
    "gp": optuna.samplers.GPSampler,
    "random": optuna.samplers.RandomSampler,
}
METRICS = ("trials", "runs", "oom_share", "repeats", "regret_half", "regret", "seconds")
#: The columns of a per-run row that identify its study.
KEYS = ("sampler", "crash", "off_table", "seed")
#: The keys of a study's records: :data:`KEYS` and the study's settings.
RECORD_KEYS = ("instance", *KEYS, "n_init", "trials_requested")
#: The suffix of the per-trial records of ``<name>.csv`` (``<name>_trials.parquet``).
RECORDS_SUFFIX = "_trials.parquet"


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
) -> tuple[dict[str, object], list[dict[str, object]]]:
    """One study until ``trials`` rows have run (at most ``cap`` trials).

    Returns:
        The study's :data:`KEYS` and wall ``seconds``, and its trials' records
        (:func:`trial_records`).
    """
    n_rows = len(problem.problem.table)
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
    key = {
        "sampler": sampler,
        "crash": problem.crash_report,
        "off_table": "reject" if isinstance(problem, RejectOffTable) else "snap",
        "seed": seed,
    }
    settings = {"n_init": n_init, "trials_requested": trials}
    return {**key, "seconds": seconds}, trial_records(problem, study, key, settings)


def trial_records(
    problem: PCOProblem,
    study: optuna.Study,
    key: Mapping[str, object],
    settings: Mapping[str, object],
) -> list[dict[str, object]]:
    """One record per trial of ``study`` (``_trial_records``' columns), keyed
    by the instance, ``key`` and ``settings``; a trial that ran no row (-1 in
    :data:`~bolt_pco64.integrations.optuna.ROW_ATTR`: an off-table suggestion refused) has
    no knob columns, ``oom`` or ``throughput``."""
    true_y = problem.problem.evaluate_true(problem.problem.candidates()).tolist()
    optimal = float(problem.problem.optimal_value)
    parameters = Parameters(problem.problem, "raw")
    specs = problem.instance.inputs
    sampler = key["sampler"]
    records = []
    for t in study.trials:
        row = t.user_attrs.get(ROW_ATTR, -1)
        ran = row >= 0
        proposed = {s.name: s.decode(t.params[s.name]) for s in specs}
        records.append(
            {
                "instance": problem.instance.name,
                **key,
                **settings,
                "trial": t.number,
                "generator": "enqueued"
                if "fixed_params" in t.system_attrs
                else sampler,
                **_trial_records.configuration(
                    parameters, proposed, row if ran else None
                ),
                "oom": math.isnan(true_y[row]) if ran else None,
                "throughput": true_y[row] if ran else math.nan,
                "reported": _trial_records.nan_if_none(
                    t.value if t.state == optuna.trial.TrialState.COMPLETE else None
                ),
                "status": _trial_records.status_name(t.state.name),
                "run_seconds": float(t.user_attrs.get(SECONDS_ATTR, 0.0)),
                "optimal_value": optimal,
            }
        )
    return records


def derive(trials: pd.DataFrame) -> dict[str, object]:
    """A study's figures from its ``trials``' records: ``trials``, ``runs``
    (trials that ran a row), ``oom_share`` (of the runs), ``repeats`` (runs of
    a row run before), ``regret_half`` and ``regret`` (the simple regret after
    half and all of the ``trials_requested`` runs; the last one carried on if
    the study stopped short)."""
    trials = trials.sort_values("trial")
    target = int(trials["trials_requested"].iloc[0])
    ran = trials["oom"].notna().to_numpy()
    rows = _trial_records.rows_run(trials)
    if len(rows) != int(ran.sum()):
        raise ValueError(
            "Expected the knob columns of the rows run where `oom` is given, got "
            f"{len(rows)} rows run and {int(ran.sum())} `oom` values."
        )
    crashed = [bool(v) for v in trials["oom"][ran]]
    values = [float(v) for v in trials["throughput"][ran]]
    optimal = float(trials["optimal_value"].iloc[0])
    best, regrets, seen, repeats = -math.inf, [], set(), 0
    for r, y, oom in zip(rows, values, crashed, strict=True):
        repeats += r in seen
        seen.add(r)
        if not oom:
            best = max(best, y)
        regrets.append(optimal - best)
    regrets += [regrets[-1]] * (target - len(regrets))
    return {
        "trials": len(trials),
        "runs": len(rows),
        "oom_share": sum(crashed) / len(rows),
        "repeats": repeats,
        "regret_half": regrets[target // 2 - 1],
        "regret": regrets[-1],
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
    studies: list[dict[str, object]] = []
    records: list[dict[str, object]] = []
    for sampler in args.samplers.split(","):
        # The random sampler ignores every trial: one representation suffices.
        crashes = (
            args.crash.split(",")[:1] if sampler == "random" else args.crash.split(",")
        )
        for crash, off_table in itertools.product(crashes, args.off_table.split(",")):
            kind = RejectOffTable if off_table == "reject" else PCOProblem
            problem = kind(args.instance, table=args.table, crash_report=crash)
            for seed in range(args.seeds):
                study, trials = run(
                    problem, sampler, seed, args.trials, args.n_init, args.max_trials
                )
                studies.append(study)
                records += trials
                rec = derive(_trial_records.frame(trials, RECORD_KEYS))
                print(
                    f"{sampler:6} {crash:11} {off_table:6} seed {seed}: "
                    f"trials {rec['trials']} runs {rec['runs']} oom {rec['oom_share']:.2f} "
                    f"repeats {rec['repeats']} regret {rec['regret']:.4f} "
                    f"({study['seconds']:.1f} s)",
                    flush=True,
                )
    summary = save(Path(args.out), studies, records)
    print(summary.to_string(index=False, float_format=lambda v: f"{v:.4g}"))


def save(
    out: Path,
    studies: Sequence[Mapping[str, object]],
    records: Sequence[Mapping[str, object]],
) -> pd.DataFrame:
    """Write the records ``<name>_trials.parquet`` of ``out`` (``<name>.csv``),
    then ``<name>_runs.csv`` from them and the ``studies``' keys and seconds,
    then the summary ``out`` from that; returns the summary."""
    frame = _trial_records.frame(records, RECORD_KEYS)
    source = _trial_records.write(records_path(out), frame, "optuna_crash")
    runs_path = out.with_name(out.stem + "_runs.csv")
    write_runs(runs_path, pd.DataFrame.from_records(list(studies)), frame, source)
    return write_summary(runs_path, out)


def records_path(out: Path) -> Path:
    """The per-trial records of the summary ``out`` (``<name>.csv``)."""
    return out.with_name(out.stem + RECORDS_SUFFIX)


def write_runs(
    runs_path: Path, studies: pd.DataFrame, records: pd.DataFrame, source: Path
) -> None:
    """Write ``runs_path``: per study (a row of ``studies``: :data:`KEYS` and
    ``seconds``), its figures from its ``records`` (:func:`derive`), at full
    precision.

    Args:
        runs_path: The per-run CSV to write.
        studies: The studies' keys and seconds, in the order to write them.
        records: Their trials' records.
        source: The file the records are (or are written to), for messages.

    Raises:
        ValueError: If a study has no records or a record no study.
    """
    groups = {
        tuple(v.item() if hasattr(v, "item") else v for v in k): g
        for k, g in records.groupby(list(KEYS), sort=False)
    }
    rows = []
    for study in studies.to_dict("records"):
        key = tuple(study[k] for k in KEYS)
        if key not in groups:
            raise ValueError(
                f"Expected records in {str(source)!r} of the study {key} of "
                f"{str(runs_path)!r}, got none."
            )
        rows.append(
            {
                **dict(zip(KEYS, key, strict=True)),
                **derive(groups.pop(key)),
                "seconds": study["seconds"],
            }
        )
    if groups:
        raise ValueError(
            f"Expected every record of {str(source)!r} to belong to a study of "
            f"{str(runs_path)!r}, got records of {next(iter(groups))} "
            f"({len(groups)} studies)."
        )
    atomic_write_text(runs_path, pd.DataFrame.from_records(rows).to_csv(index=False))


def write_summary(runs_path: Path, out: Path) -> pd.DataFrame:
    """Write ``out``: the summary of the per-run values in ``runs_path``."""
    summary = summarize(pd.read_csv(runs_path))
    atomic_write_text(out, summary.to_csv(index=False, float_format="%.6g"))
    return summary


def report(folder: Path) -> list[Path]:
    """Rewrite each ``<name>_runs.csv`` of ``folder`` from its studies' keys
    and seconds there and the records ``<name>_trials.parquet``, then
    ``<name>.csv`` from it; returns the files written.

    Raises:
        ValueError: If the records are missing, unreadable or do not match
            the studies (the message names the file).
    """
    written = []
    for runs_path in sorted(folder.glob("*_runs.csv")):
        out = runs_path.with_name(runs_path.stem.removesuffix("_runs") + ".csv")
        source = records_path(out)
        records = _trial_records.read(source, RECORD_KEYS)
        # The seconds as written (Python's float parser round-trips them on
        # every pandas version), the figures from the records.
        studies = pd.read_csv(
            runs_path, usecols=[*KEYS, "seconds"], dtype={"seconds": str}
        )
        studies["seconds"] = studies["seconds"].map(float)
        write_runs(runs_path, studies[[*KEYS, "seconds"]], records, source)
        write_summary(runs_path, out)
        written += [runs_path, out]
    return written


if __name__ == "__main__":
    main()
