import os
import sys
import unittest

# The grader runs `python -I` from the oracle folder: the workspace goes LAST on sys.path, so
# nothing the agent wrote can stand in for the standard library or the test runner.
sys.path.append(os.getcwd())

from flat import flatten  # noqa: E402


class TestFlatten(unittest.TestCase):
    def test_one_level(self):
        self.assertEqual(flatten([1, [2, 3], 4]), [1, 2, 3, 4])

    def test_deep(self):
        self.assertEqual(flatten([[1, [2, [3, [4]]]], 5]), [1, 2, 3, 4, 5])

    def test_empty(self):
        self.assertEqual(flatten([[], [[]]]), [])
