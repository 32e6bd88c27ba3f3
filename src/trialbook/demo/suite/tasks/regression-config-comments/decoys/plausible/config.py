def parse(text):
    settings = {}
    for line in text.splitlines():
        line = line.split("#")[0]
        if not line.strip():
            continue
        key, _, value = line.partition("=")
        settings[key.strip()] = value.strip()
    return settings
