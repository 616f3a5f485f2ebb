"""The tutorials' order and the arguments they run with at build time.

sphinx-gallery runs every script of ``examples/`` while the site is built.
The scripts keep their own defaults (what a reader running one gets); the
build passes smaller budgets so that the whole site builds in a few minutes
on two cores. Results a script writes go to a fresh temporary folder, never
into the checkout, so no build resumes an earlier one.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

#: The tutorials in reading order; a script not listed comes after them.
ORDER: tuple[str, ...] = (
    "quickstart.py",
    "constrained_bo.py",
    "mixed_optimizers.py",
    "compare_acquisitions.py",
    "cost_workers.py",
    "early_termination.py",
    "informed_prior.py",
    "custom_method.py",
    "ax_benchmark.py",
    "optuna_study.py",
)

#: Command-line arguments per script at build time (small budgets).
ARGV: dict[str, str] = {
    "constrained_bo.py": "--budget 14 --n-init 10",
    "mixed_optimizers.py": "--budget 11 --n-init 8",
    "compare_acquisitions.py": "--seeds 2 --budget 14 --n-init 8",
    "cost_workers.py": "--seeds 2 --budget-hours 100",
    "early_termination.py": "--budget-hours 80",
    "informed_prior.py": "--steps 3",
    "custom_method.py": "--seeds 2 --budget 10",
    "ax_benchmark.py": "--trials 7",
    "optuna_study.py": "--trials 12",
}

#: Scripts that take ``--out``: they write into a fresh temporary folder.
WRITES_RESULTS: frozenset[str] = frozenset(
    {
        "compare_acquisitions.py",
        "cost_workers.py",
        "early_termination.py",
        "custom_method.py",
    }
)


class TutorialOrder:
    """sphinx-gallery's ``within_subsection_order``: the order of :data:`ORDER`."""

    def __init__(self, src_dir: str) -> None:
        self.src_dir = src_dir

    def __call__(self, filename: str) -> tuple[int, str]:
        name = Path(filename).name
        rank = ORDER.index(name) if name in ORDER else len(ORDER)
        return rank, name

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"


def tutorial_argv(gallery_conf: dict, script_vars: dict) -> list[str]:
    """sphinx-gallery's ``reset_argv``: a script's arguments at build time."""
    name = Path(script_vars["src_file"]).name
    argv = ARGV.get(name, "").split()
    if name in WRITES_RESULTS:
        argv += ["--out", tempfile.mkdtemp(prefix=f"bolt-docs-{Path(name).stem}-")]
    return argv
