"""``python -m annokit.cli``: the same as the ``annokit`` command."""

from annokit.cli import main

main()
