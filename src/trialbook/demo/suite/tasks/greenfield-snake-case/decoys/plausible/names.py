def snake_case(name):
    import re

    return re.sub(r"(?=[A-Z])", "_", name).lower()
