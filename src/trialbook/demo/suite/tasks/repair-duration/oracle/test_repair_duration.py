import unittest

from duration import parse_duration


class TestDuration(unittest.TestCase):
    def test_hours(self):
        self.assertEqual(parse_duration('2h'), 7200)

    def test_minutes(self):
        self.assertEqual(parse_duration('45m'), 2700)

    def test_mixed(self):
        self.assertEqual(parse_duration('1h30m10s'), 5410)
