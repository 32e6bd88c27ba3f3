import re

UNITS = {"h": 60, "m": 60, "s": 1}


def parse_duration(text):
    """Seconds in a duration such as 2h, 45m, 1h30m10s."""
    total = 0
    for amount, unit in re.findall(r"(\d+)([hms])", text):
        total += int(amount) * UNITS[unit]
    return total
