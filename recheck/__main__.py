"""``python -m recheck FILE [--workers N]``: re-check a saved certificate or family file
(:func:`recheck.certificates.main`)."""
import sys

from recheck.certificates import main

sys.exit(main())
