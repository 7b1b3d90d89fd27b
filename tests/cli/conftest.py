"""The CLI tests run ``python -m loopfuse.cli`` on the analysis fixtures and on incident logs."""

from tests.analysis.conftest import cli, corpus, corpus_dir, fixtures  # noqa: F401 - fixtures
from tests.incidents.conftest import log  # noqa: F401 - fixture
