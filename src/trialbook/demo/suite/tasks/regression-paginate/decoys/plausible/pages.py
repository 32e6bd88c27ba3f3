def page_count(total, per_page):
    return total // per_page + 1


def paginate(items, page, per_page):
    """Items of 1-based page `page`."""
    start = (page - 1) * per_page
    return items[start : start + per_page]
