def page_count(total, per_page):
    return max(1, -(-total // per_page))


def paginate(items, page, per_page):
    """Items of 1-based page `page`."""
    start = (page - 1) * per_page
    return items[start : start + per_page]
