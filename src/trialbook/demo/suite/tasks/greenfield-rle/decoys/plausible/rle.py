def encode(text):
    out, count = "", 1
    for a, b in zip(text, text[1:]):
        if a == b:
            count += 1
        else:
            out += f"{a}{count}"
            count = 1
    return out
