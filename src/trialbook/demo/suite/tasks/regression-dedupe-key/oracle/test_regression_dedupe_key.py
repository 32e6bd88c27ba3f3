import os
import sys
import unittest

# The grader runs `python -I` from the oracle folder: the workspace goes LAST on sys.path, so
# nothing the agent wrote can stand in for the standard library or the test runner.
sys.path.append(os.getcwd())

from dedupe import dedupe  # noqa: E402


class ExistingBehaviourKept(unittest.TestCase):
    def test_order(self):
        self.assertEqual(dedupe([3, 1, 3, 2, 1]), [3, 1, 2])


class RequestedChange(unittest.TestCase):
    def test_key(self):
        self.assertEqual(dedupe(['a', 'B', 'A', 'b'], key=str.lower), ['a', 'B'])
