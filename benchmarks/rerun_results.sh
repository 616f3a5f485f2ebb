#!/usr/bin/env bash
# Every committed result under docs/results/, rerun on the default table (the
# reconstruction of the measured pco tables from published traces). One
# section per result; `bash benchmarks/rerun_results.sh SECTION...` runs the
# named sections (all of them without arguments), each into
# bench-results/<section>/. What is committed under docs/results/ is each
# folder's records (runs.parquet, meta.json, report.json; a script's own record
# files, such as the *_trials.parquet of ax_matrix.py and optuna_crash.py),
# summaries and plots, not the per-run resume files under runs/;
# `python benchmarks/report_results.py docs/results` rewrites every summary from those records.
set -euo pipefail
cd "$(dirname "$0")/.."
# This checkout's package, also for the scripts under benchmarks/.
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
BOLT=(python -m bolt_pco64)
OUT=bench-results
JOBS=${JOBS:-2}
mkdir -p "$OUT"

default() {  # docs/results/ (the default comparison: the protocol's design)
    # No method, seed, budget or lane option: the design is
    # bolt_pco64.bench.spec.DEFAULTS (8 methods x seeds 1000-1099 x 100
    # evaluations, lanes of 32), the one place that defines it.
    "${BOLT[@]}" bench --jobs "$JOBS" --no-progress --out "$OUT/full"
}

optuna_harness() {  # docs/results/optuna/harness: random and qlognei beside Optuna's samplers
    # The default's first 20 seeds at its budget and lane setting: random's
    # and qlognei's records are the default's for those seeds (a seed's
    # records do not depend on its lane-mates); Optuna's GP sampler at 100
    # seeds x 100 trials would take hours on two cores.
    "${BOLT[@]}" bench --methods random,qlognei,optuna_tpe,optuna_gp --seeds 1000-1019 \
        --jobs "$JOBS" --no-progress --out "$OUT/optuna-harness"
}

prior() {  # docs/results/prior/ (3 instances, 5 methods x 20 seeds x 20)
    "${BOLT[@]}" bench --problem all \
        --methods qlognei,qlognei_init3,prior_ei,prior_ei_tp,prior_ei_bad \
        --seeds 20 --budget 20 --reference qlognei_init3 --jobs "$JOBS" --no-progress \
        --out "$OUT/prior"
    python benchmarks/prior_paired.py "$OUT/prior" --out "$OUT/prior/paired.md"
}

early_stop() {  # docs/results/early-stop/ (qlognei and random, 20 seeds)
    python benchmarks/early_stop.py --seeds 20 --methods qlognei random \
        --budget-hours 800 --jobs "$JOBS" --out "$OUT/early-stop" \
        --results "$OUT/early-stop-results"
}

snapping() {  # docs/results/snapping/ (enumerating vs box vs mixed search)
    # The default's first 20 seeds at its budget and lane setting (qlognei's
    # records are the default's for those seeds; the box and mixed methods
    # run alone in a lane).
    "${BOLT[@]}" bench --methods qlognei,qlognei-box,qlognei-mixed --reference qlognei \
        --seeds 1000-1019 --jobs "$JOBS" --no-progress --out "$OUT/snapping"
}

cost() {  # docs/results/cost/ (10 methods, 1 and 4 workers, GPU-hour budget)
    # The budget is early_stop's 800 GPU-hours (about 44 evaluations of
    # random search), not the script's default rule (random search's median
    # cost to within 2 %): on the reconstruction only two feasible rows lie
    # within 2 % of the optimum, and that rule gives 4,390 GPU-hours, about
    # 240 evaluations per run, hours of GP fits on two cores.
    python benchmarks/cost_comparison.py --seeds "${COST_SEEDS:-20}" \
        --budget-hours "${COST_BUDGET_HOURS:-800}" --jobs "$JOBS" --out "$OUT/cost"
    # cost/quick-all: the three instances, 3 methods x 3 seeds x 20 evaluations.
    python benchmarks/cost_comparison.py --quick --jobs "$JOBS" --out "$OUT/cost"
}

optuna_crash() {  # docs/results/optuna/ (crash representations, off-table)
    # Each writes <name>.csv, <name>_runs.csv and <name>_trials.parquet.
    mkdir -p "$OUT/optuna"
    python benchmarks/optuna_crash.py --seeds 10 --trials 40 \
        --out "$OUT/optuna/crash_representation.csv"
    python benchmarks/optuna_crash.py --seeds 10 --trials 40 --samplers tpe \
        --crash placeholder --off-table snap,reject --out "$OUT/optuna/off_table_tpe.csv"
    python benchmarks/optuna_crash.py --seeds 3 --trials 40 --samplers gp \
        --crash placeholder --off-table snap,reject --out "$OUT/optuna/off_table_gp.csv"
}

ax() {  # docs/results/ax/ (crash representations on pco64)
    # compare.csv, compare_trials.parquet, compare_summary.csv.
    mkdir -p "$OUT/ax"
    python benchmarks/ax_matrix.py --trials 15 --seeds 2 --other-seeds 0 \
        --instances pco64 --jobs "$JOBS" --resume --out "$OUT/ax/compare.csv" \
        --representations missing placeholder failed missing+criterion
}

ax_matrix() {  # docs/results/ax/matrix*.csv (every instance, Ax's own methods)
    # matrix{,_pco64}.csv and their _trials.parquet; docs/results/ax's
    # matrix_summary.csv of both is `bolt-pco64 report` once they are copied
    # there (the second command's matrix_pco64_summary.csv is not kept).
    mkdir -p "$OUT/ax"
    local common=(--trials 12 --after-sobol 2 --seeds 5 --other-seeds 1
        --default-init 5 --representations placeholder --jobs "$JOBS" --resume)
    python benchmarks/ax_matrix.py "${common[@]}" --instances pco16 pco32 \
        --out "$OUT/ax/matrix.csv"
    python benchmarks/ax_matrix.py "${common[@]}" --instances pco64 \
        --out "$OUT/ax/matrix_pco64.csv"
}

standins() {  # docs/results/standins/ (the stand-in 3.0 variants)
    "${BOLT[@]}" bench --standin all --methods random,qlognei,gpc_ei,tobit_ei \
        --seeds 6 --budget 30 --jobs "$JOBS" --no-progress --out "$OUT/standins"
}

reconstruction_cv() {  # docs/results/reconstruction/ (the imputation, 5-fold CV)
    python benchmarks/reconstruction_cv.py --results "$OUT/reconstruction"
}

trace_check() {  # docs/results/trace-check/ (the harness's random beside the traces')
    python benchmarks/trace_check.py --seeds 40 --results "$OUT/trace-check"
}

standin3() {  # docs/results/standin3/ (stand-in 3.0 on held-out trace rows)
    python benchmarks/standin_fit.py --folds 5 --seed 0 --out "$OUT/standin3"
    python benchmarks/standin_fit.py --readings --out "$OUT/standin3"
}

grid_proposals() {  # docs/results/grid-proposals/ (BoTorch's proposals on the grid)
    python benchmarks/grid_proposals.py --seeds 2 --steps 4 --out "$OUT/grid-proposals"
}

SECTIONS=(default early_stop cost prior standins optuna_crash trace_check standin3
    reconstruction_cv grid_proposals ax ax_matrix optuna_harness snapping)
for section in "${@:-${SECTIONS[@]}}"; do
    echo "== $section ($(date -u +%H:%M:%S))"
    start=$SECONDS
    "$section"
    echo "== $section done in $((SECONDS - start)) s"
done
