import os
import sys
import unittest

# The grader runs `python -I` from the oracle folder: the workspace goes LAST on sys.path, so
# nothing the agent wrote can stand in for the standard library or the test runner.
sys.path.append(os.getcwd())

from duration import parse_duration  # noqa: E402


class TestDuration(unittest.TestCase):
    def test_hours(self):
        self.assertEqual(parse_duration('2h'), 7200)

    def test_minutes(self):
        self.assertEqual(parse_duration('45m'), 2700)

    def test_mixed(self):
        self.assertEqual(parse_duration('1h30m10s'), 5410)
