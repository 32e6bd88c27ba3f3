"""The race: two systems on one suite, stopped as soon as an anytime-valid sequence decides.

It runs both systems through the harness, writes to the ledger and asks the statistics (through
analysis) after each task pair, so it is a room of its own, like ``demo/``: ``run_race`` is the
library function ``trialbook race`` calls.
"""

from trialbook.race._race import RaceOptions, RaceProgress, RaceResult, run_race

__all__ = ["RaceOptions", "RaceProgress", "RaceResult", "run_race"]
