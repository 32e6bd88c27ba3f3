import re


def slugify(title):
    lowered = title.lower()
    return re.sub(r"[^a-z0-9]+", "-", lowered)
