import os
import sys
import unittest

# The grader runs `python -I` from the oracle folder: the workspace goes LAST on sys.path, so
# nothing the agent wrote can stand in for the standard library or the test runner.
sys.path.append(os.getcwd())

from names import snake_case  # noqa: E402


class TestSnake(unittest.TestCase):
    def test_camel(self):
        self.assertEqual(snake_case('parseValue'), 'parse_value')

    def test_pascal(self):
        self.assertEqual(snake_case('ParseValue'), 'parse_value')

    def test_plain(self):
        self.assertEqual(snake_case('value'), 'value')
