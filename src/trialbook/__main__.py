"""``python -m trialbook``."""

from trialbook.cli import main

main()
