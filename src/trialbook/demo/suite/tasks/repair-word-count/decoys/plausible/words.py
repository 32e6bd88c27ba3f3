def count_words(text):
    return len(text.strip().split(" ")) if text else 0
