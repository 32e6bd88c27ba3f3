def parse(text):
    settings = {}
    for line in text.splitlines():
        if not line.strip() or line.strip().startswith("#"):
            continue
        key, _, value = line.partition("=")
        settings[key.strip()] = value.strip()
    return settings
