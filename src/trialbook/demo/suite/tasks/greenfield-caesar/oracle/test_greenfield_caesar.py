import os
import sys
import unittest

# The grader runs `python -I` from the oracle folder: the workspace goes LAST on sys.path, so
# nothing the agent wrote can stand in for the standard library or the test runner.
sys.path.append(os.getcwd())

from caesar import shift  # noqa: E402


class TestShift(unittest.TestCase):
    def test_basic(self):
        self.assertEqual(shift('abc', 1), 'bcd')

    def test_wrap(self):
        self.assertEqual(shift('xyz', 3), 'abc')

    def test_case_and_other(self):
        self.assertEqual(shift('Hi, Zed!', 1), 'Ij, Afe!')
