import os
import sys
import unittest

# The grader runs `python -I` from the oracle folder: the workspace goes LAST on sys.path, so
# nothing the agent wrote can stand in for the standard library or the test runner.
sys.path.append(os.getcwd())

from calendar_utils import is_leap  # noqa: E402


class TestLeap(unittest.TestCase):
    def test_ordinary(self):
        self.assertTrue(is_leap(2024))
        self.assertFalse(is_leap(2023))

    def test_centuries(self):
        self.assertFalse(is_leap(1900))
        self.assertTrue(is_leap(2000))
