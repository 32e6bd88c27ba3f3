def shift(text, k):
    out = []
    for c in text:
        if c.isalpha() and c.isascii():
            base = ord("A") if c.isupper() else ord("a")
            out.append(chr(base + (ord(c) - base + k) % 26))
        else:
            out.append(c)
    return "".join(out)
