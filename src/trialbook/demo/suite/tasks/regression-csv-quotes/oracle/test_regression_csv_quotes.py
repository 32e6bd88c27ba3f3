import os
import sys
import unittest

# The grader runs `python -I` from the oracle folder: the workspace goes LAST on sys.path, so
# nothing the agent wrote can stand in for the standard library or the test runner.
sys.path.append(os.getcwd())

from csvline import split_line  # noqa: E402


class ExistingBehaviourKept(unittest.TestCase):
    def test_plain(self):
        self.assertEqual(split_line('a,b,,d'), ['a', 'b', '', 'd'])

    def test_quoted_comma(self):
        self.assertEqual(split_line('"x,y",z'), ['x,y', 'z'])

    def test_empty_quoted(self):
        self.assertEqual(split_line('"",1'), ['', '1'])


class RequestedChange(unittest.TestCase):
    def test_doubled_quote(self):
        self.assertEqual(split_line('"say ""hi""",2'), ['say "hi"', '2'])
