import unittest

from names import snake_case


class TestSnake(unittest.TestCase):
    def test_camel(self):
        self.assertEqual(snake_case('parseValue'), 'parse_value')

    def test_pascal(self):
        self.assertEqual(snake_case('ParseValue'), 'parse_value')

    def test_plain(self):
        self.assertEqual(snake_case('value'), 'value')
