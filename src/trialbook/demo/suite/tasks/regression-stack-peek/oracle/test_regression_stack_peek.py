import os
import sys
import unittest

# The grader runs `python -I` from the oracle folder: the workspace goes LAST on sys.path, so
# nothing the agent wrote can stand in for the standard library or the test runner.
sys.path.append(os.getcwd())

from stack import Stack  # noqa: E402


class ExistingBehaviourKept(unittest.TestCase):
    def test_push_pop(self):
        s = Stack()
        s.push(1)
        s.push(2)
        self.assertEqual(s.pop(), 2)
        self.assertEqual(len(s), 1)


class RequestedChange(unittest.TestCase):
    def test_peek(self):
        s = Stack()
        s.push('x')
        self.assertEqual(s.peek(), 'x')
        self.assertEqual(len(s), 1)

    def test_peek_empty(self):
        with self.assertRaises(IndexError):
            Stack().peek()
