"""``python -m trialbook``."""

from trialbook.cli import entry

entry()
