"""The public names of :mod:`bolt_pco64.tables.reconstruct`: the one place each is spelled.

``__init__.py`` hands this file to ``lazy_loader.attach_stub``, which reads its
imports (relative ones only) and loads each name's module on first use; type
checkers read it as the package's interface, with the real types. ``X as X``
re-exports ``X`` to a type checker (PEP 484).
"""

from .build import (
    GENERATOR_VERSION as GENERATOR_VERSION,
    Reconstruction as Reconstruction,
    make_reconstruction as make_reconstruction,
    write_reconstructed_table as write_reconstructed_table,
    rebuild_shipped as rebuild_shipped,
)
from .impute import (
    Imputer as Imputer,
    cross_validate as cross_validate,
    score_predictions as score_predictions,
)
from .grid import reconstruction_grid as reconstruction_grid
