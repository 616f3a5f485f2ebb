"""What the BO timing scripts share: the table's candidates and their
outcomes, and the seeded random subsets of evaluated configurations.

Imported by the scripts of this folder (``python benchmarks/<script>.py`` puts
the folder on ``sys.path``).
"""

from __future__ import annotations

import torch

from bolt_pco64 import PCO64


def load(table: str | None) -> tuple[PCO64, torch.Tensor, torch.Tensor, torch.Tensor]:
    """The problem on ``table`` (``None``: the default table), its ``m x d``
    candidates, their ``m``-dim throughput (NaN where OOM) and memory margin;
    prints the table, the candidate count and the torch threads."""
    f = PCO64(table=table)
    cand = f.candidates()
    print(
        f"table: {f.table.source}; {len(cand)} candidates; "
        f"torch threads {torch.get_num_threads()}"
    )
    return f, cand, f.evaluate_true(cand), f.outcome_constraint(cand)


def random_rows(m: int, n: int, rep: int) -> torch.Tensor:
    """``n`` distinct rows of ``m``, drawn from seed ``1000 * n + rep``."""
    g = torch.Generator().manual_seed(1000 * n + rep)
    return torch.randperm(m, generator=g)[:n]
