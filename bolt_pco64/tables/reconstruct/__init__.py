"""Tables reconstructed from the published traces of the measured tables (design §7).

Small modules, one idea each: :mod:`~bolt_pco64.tables.reconstruct.replay` (the
published harness replayed: the row indices random search drew, the noise it
added), :mod:`~bolt_pco64.tables.reconstruct.grid` (which configurations are rows),
:mod:`~bolt_pco64.tables.reconstruct.evidence` (what out-of-memory neighbour means
settle), :mod:`~bolt_pco64.tables.reconstruct.impute` (the models of the rows no
trace visited, their calibration and cross-validation),
:mod:`~bolt_pco64.tables.reconstruct.timing` (the columns no trace gives),
:mod:`~bolt_pco64.tables.reconstruct.build` (assembling and writing a table) and
:mod:`~bolt_pco64.tables.reconstruct.registry` (recognising a reconstruction by its
content). Names load lazily: importing the package imports no model code.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = [
    "GENERATOR_VERSION",
    "Imputer",
    "Reconstruction",
    "cross_validate",
    "make_reconstruction",
    "rebuild_shipped",
    "reconstruction_grid",
    "score_predictions",
    "write_reconstructed_table",
]

_WHERE = {
    "GENERATOR_VERSION": "build",
    "Reconstruction": "build",
    "make_reconstruction": "build",
    "write_reconstructed_table": "build",
    "rebuild_shipped": "build",
    "Imputer": "impute",
    "cross_validate": "impute",
    "score_predictions": "impute",
    "reconstruction_grid": "grid",
}


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        return getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
