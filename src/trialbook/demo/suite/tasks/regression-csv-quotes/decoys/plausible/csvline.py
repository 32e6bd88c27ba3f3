def split_line(line):
    fields, current, quoted = [], [], False
    line = line.replace('""', '\x00')
    for ch in line:
        if ch == '"':
            quoted = not quoted
        elif ch == ',' and not quoted:
            fields.append(''.join(current))
            current = []
        else:
            current.append(ch)
    fields.append(''.join(current))
    return [f.replace('\x00', '"') for f in fields]
