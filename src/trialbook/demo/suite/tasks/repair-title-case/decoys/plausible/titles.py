SMALL = {"a", "an", "and", "of", "the", "in", "on"}


def title_case(text):
    return text.capitalize()
