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
content). Names load lazily (``lazy_loader``; ``__init__.pyi`` declares them for
type checkers): importing the package imports no model code.
"""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
