"""``python -m bolt_pco64``: the same as the ``bolt-pco64`` command."""

from bolt_pco64.cli import main

main(prog_name="bolt-pco64")
