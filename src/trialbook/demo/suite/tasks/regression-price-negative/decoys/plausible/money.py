def format_price(cents):
    if cents < 0:
        return "-" + format_price(-cents)
    return f"${cents // 100}.{cents % 100:02d}".replace("$0.", "$.")
