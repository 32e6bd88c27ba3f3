def split_line(line):
    fields, current, quoted = [], [], False
    i = 0
    while i < len(line):
        ch = line[i]
        i += 1
        if ch == '"' and quoted and line[i : i + 1] == '"':
            current.append('"')
            i += 1
        elif ch == '"':
            quoted = not quoted
        elif ch == ',' and not quoted:
            fields.append(''.join(current))
            current = []
        else:
            current.append(ch)
    fields.append(''.join(current))
    return fields
