import sys

from . import main

__all__: list[str] = []

sys.exit(main())
