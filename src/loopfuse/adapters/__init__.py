"""Host adapters. Each module needs its optional extra; ``import loopfuse`` imports none."""
