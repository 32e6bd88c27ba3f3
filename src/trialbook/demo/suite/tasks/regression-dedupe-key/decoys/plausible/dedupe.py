def dedupe(items, key=None):
    if key is not None:
        return list({key(i): i for i in items}.values())
    seen, out = set(), []
    for item in items:
        if item not in seen:
            seen.add(item)
            out.append(item)
    return out
