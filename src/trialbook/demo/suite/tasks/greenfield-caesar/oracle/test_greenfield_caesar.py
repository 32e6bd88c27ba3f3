import unittest

from caesar import shift


class TestShift(unittest.TestCase):
    def test_basic(self):
        self.assertEqual(shift('abc', 1), 'bcd')

    def test_wrap(self):
        self.assertEqual(shift('xyz', 3), 'abc')

    def test_case_and_other(self):
        self.assertEqual(shift('Hi, Zed!', 1), 'Ij, Afe!')
