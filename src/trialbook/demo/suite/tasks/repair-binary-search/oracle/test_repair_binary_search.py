import unittest

from search import find


class TestFind(unittest.TestCase):
    def test_every_position(self):
        items = [1, 3, 5, 7, 9, 11]
        for i, x in enumerate(items):
            self.assertEqual(find(items, x), i)

    def test_missing(self):
        self.assertEqual(find([1, 3, 5], 4), -1)
        self.assertEqual(find([], 4), -1)

    def test_single(self):
        self.assertEqual(find([8], 8), 0)
