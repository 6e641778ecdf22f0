"""``python -m langmem_vault``: the ``langmem-vault`` command line (``demo``, ``doctor``)."""

import sys

from langmem_vault.cli import main

if __name__ == "__main__":
    sys.exit(main())
