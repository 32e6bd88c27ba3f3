import os
import sys
import unittest

# The grader runs `python -I` from the oracle folder: the workspace goes LAST on sys.path, so
# nothing the agent wrote can stand in for the standard library or the test runner.
sys.path.append(os.getcwd())

from rle import encode  # noqa: E402


class TestEncode(unittest.TestCase):
    def test_runs(self):
        self.assertEqual(encode('aaabcc'), 'a3b1c2')

    def test_single(self):
        self.assertEqual(encode('z'), 'z1')

    def test_empty(self):
        self.assertEqual(encode(''), '')
