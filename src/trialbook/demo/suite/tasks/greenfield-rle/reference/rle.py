def encode(text):
    import itertools

    return "".join(f"{ch}{len(list(run))}" for ch, run in itertools.groupby(text))
