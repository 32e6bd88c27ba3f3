import os
import sys
import unittest

# The grader runs `python -I` from the oracle folder: the workspace goes LAST on sys.path, so
# nothing the agent wrote can stand in for the standard library or the test runner.
sys.path.append(os.getcwd())

from money import format_price  # noqa: E402


class ExistingBehaviourKept(unittest.TestCase):
    def test_positive(self):
        self.assertEqual(format_price(105), '$1.05')
        self.assertEqual(format_price(0), '$0.00')


class RequestedChange(unittest.TestCase):
    def test_negative(self):
        self.assertEqual(format_price(-105), '-$1.05')
        self.assertEqual(format_price(-5), '-$0.05')
