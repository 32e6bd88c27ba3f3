SMALL = {"a", "an", "and", "of", "the", "in", "on"}


def title_case(text):
    words = text.split()
    return ' '.join(
        w if i and w in SMALL else w.capitalize() for i, w in enumerate(words)
    )
