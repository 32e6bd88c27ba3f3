"""``python -m trialbook.cli``, the same as ``python -m trialbook``."""

from trialbook.cli import entry

entry()
