def is_palindrome(text):
    kept = text.lower().replace(" ", "")
    return kept == kept[::-1]
