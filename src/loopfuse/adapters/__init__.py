"""Host adapters. Each module needs its optional extra; ``import loopfuse`` imports none."""

__all__: list[str] = []
