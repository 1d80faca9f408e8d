"""``python -m verify ...``: the same command line as the ``verify`` console script (:func:`verify.cli.main`)."""
from verify.cli import main

main()
