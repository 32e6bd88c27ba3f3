import unittest

from config import parse


class TestParse(unittest.TestCase):
    def test_pairs(self):
        self.assertEqual(parse('a = 1\nb=2'), {'a': '1', 'b': '2'})

    def test_hash_in_value(self):
        self.assertEqual(parse('color = #ff0000'), {'color': '#ff0000'})

    def test_comments(self):
        self.assertEqual(parse('# note\n  # indented\nx=1'), {'x': '1'})
