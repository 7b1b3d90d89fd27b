"""``python -m loopfuse``: the ``loopfuse`` command."""

import sys

from loopfuse.cli import main

__all__: list[str] = []

if __name__ == "__main__":
    sys.exit(main())
