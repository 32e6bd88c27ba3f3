import unittest

from roman import to_roman


class TestRoman(unittest.TestCase):
    def test_small(self):
        self.assertEqual([to_roman(i) for i in (1, 4, 9)], ['I', 'IV', 'IX'])

    def test_tens(self):
        self.assertEqual(to_roman(49), 'XLIX')
        self.assertEqual(to_roman(94), 'XCIV')

    def test_large(self):
        self.assertEqual(to_roman(1994), 'MCMXCIV')
