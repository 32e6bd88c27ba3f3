import unittest

from pages import page_count, paginate


class TestPages(unittest.TestCase):
    def test_paginate(self):
        self.assertEqual(paginate(list(range(7)), 2, 3), [3, 4, 5])

    def test_count(self):
        self.assertEqual(page_count(7, 3), 3)
        self.assertEqual(page_count(6, 3), 2)
        self.assertEqual(page_count(0, 3), 1)
