/* A strict, one-pass reader for flat JSONL ledgers, straight into column buffers.
 *
 * Why it exists: pyarrow's JSON reader, the strictest library reader (1 is not a boolean, 1.0 is not
 * an integer), spends about 4 CPU-seconds on a 1,000,000-row ledger; polars and DuckDB are faster
 * but turn a number given for a text field into text and drop unknown keys (DuckDB also takes true
 * for the integer 1, polars the first of two repeated keys), so neither tells a valid ledger from
 * an invalid one. This reader does only what a ledger needs:
 * one flat object per line, scalar values, and the types of trialbook.ledger._fields.
 *
 * It only ever accepts. Anything outside the subset it reads exactly -- an unknown, escaped or
 * repeated key, a value of the wrong JSON type, a number out of int64 or that overflows a double, a
 * control character or invalid UTF-8 in a string, an object spread over lines, trailing bytes, a
 * missing required field -- makes it decline (return None), and the caller reads the file the
 * precise way, which names every problem with its line. A text value containing escapes is handed
 * back raw and decoded by Python's own json module, so escapes need no code here.
 *
 * Values written per row (row r, field f):
 *   'S'/'s' text  -> int64 code into the field's labels (first-appearance order), -1 if absent
 *   'I'     int   -> int64                 'i' optional int   -> double, NaN if absent (|v| <= 2**53)
 *   'F'     float -> double                'f' optional float -> double, NaN if absent
 *   'B'     bool  -> uint8                 'b' optional bool  -> double 0/1, NaN if absent
 * Upper case is a required field: a row without it (or with null) declines. An integer literal in a
 * float field is converted exactly as Python's float(int(...)) does; other numbers are rounded
 * correctly (Clinger's exact fast path, else CPython's own PyOS_string_to_double).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <math.h>
#include <stdint.h>
#include <string.h>

#define MAX_FIELDS 64
#define KEY_SLOTS 256

typedef struct {
    int64_t off;   /* first byte of the raw text (after the opening quote) */
    int64_t len;   /* raw length in bytes */
    uint64_t hash; /* of field and bytes */
    int32_t field;
    int32_t escaped;
    int64_t code; /* position among its field's labels */
} Label;

typedef struct {
    Label *labels;
    int64_t n, cap;
    int64_t *slots; /* label index + 1; 0 = empty */
    int64_t nslots;
    int64_t next_code[MAX_FIELDS];
    /* the previous row's value of each field: consecutive rows mostly repeat run, task and status */
    int64_t last_off[MAX_FIELDS], last_len[MAX_FIELDS], last_code[MAX_FIELDS];
} Strings;

typedef struct {
    int nfields;
    const char *name[MAX_FIELDS];
    Py_ssize_t name_len[MAX_FIELDS];
    char kind[MAX_FIELDS];
    int key_slot[KEY_SLOTS]; /* field index + 1 */
    int follows[MAX_FIELDS + 1]; /* the field that came after this one last time (+1), a guess */
    char *col[MAX_FIELDS];
} Schema;

static uint64_t fnv(const char *p, int64_t n, uint64_t h) {
    for (int64_t i = 0; i < n; i++) {
        h ^= (unsigned char)p[i];
        h *= 1099511628211ULL;
    }
    return h;
}

/* Equality of n bytes, eight at a time (names and repeated values are short: a libc call costs more). */
static inline int same(const char *a, const char *b, int64_t n) {
    for (; n >= 8; a += 8, b += 8, n -= 8) {
        uint64_t x, y;
        memcpy(&x, a, 8);
        memcpy(&y, b, 8);
        if (x != y) return 0;
    }
    for (; n > 0; n--)
        if (*a++ != *b++) return 0;
    return 1;
}

static int strings_init(Strings *s) {
    memset(s, 0, sizeof *s);
    s->cap = 1024;
    s->nslots = 2048;
    s->labels = PyMem_RawMalloc(sizeof(Label) * (size_t)s->cap);
    s->slots = PyMem_RawCalloc((size_t)s->nslots, sizeof(int64_t));
    for (int f = 0; f < MAX_FIELDS; f++) s->last_len[f] = -1;
    return s->labels != NULL && s->slots != NULL;
}

static void strings_free(Strings *s) {
    PyMem_RawFree(s->labels);
    PyMem_RawFree(s->slots);
}

static int strings_grow(Strings *s) {
    int64_t nslots = s->nslots * 2;
    int64_t *slots = PyMem_RawCalloc((size_t)nslots, sizeof(int64_t));
    if (slots == NULL) return 0;
    for (int64_t i = 0; i < s->n; i++) {
        int64_t j = (int64_t)(s->labels[i].hash & (uint64_t)(nslots - 1));
        while (slots[j]) j = (j + 1) & (nslots - 1);
        slots[j] = i + 1;
    }
    PyMem_RawFree(s->slots);
    s->slots = slots;
    s->nslots = nslots;
    return 1;
}

/* The code of (field, raw bytes), adding a label the first time; -1 when out of memory. */
static int64_t strings_code(Strings *s, const char *buf, int field, int64_t off, int64_t len,
                            int escaped) {
    uint64_t h = fnv(buf + off, len, 14695981039346656037ULL ^ ((uint64_t)field * 0x9E3779B97F4A7C15ULL));
    int64_t j = (int64_t)(h & (uint64_t)(s->nslots - 1));
    int64_t code = -1;
    while (s->slots[j]) {
        Label *l = &s->labels[s->slots[j] - 1];
        if (l->hash == h && l->field == field && l->len == len &&
            memcmp(buf + l->off, buf + off, (size_t)len) == 0) {
            code = l->code;
            break;
        }
        j = (j + 1) & (s->nslots - 1);
    }
    if (code < 0) {
        if (s->n == s->cap) {
            Label *grown = PyMem_RawRealloc(s->labels, sizeof(Label) * (size_t)(s->cap * 2));
            if (grown == NULL) return -1;
            s->labels = grown;
            s->cap *= 2;
        }
        code = s->next_code[field]++;
        s->labels[s->n] = (Label){off, len, h, field, escaped, code};
        s->slots[j] = ++s->n;
        if (s->n * 2 > s->nslots && !strings_grow(s)) return -1;
    }
    s->last_off[field] = off;
    s->last_len[field] = len;
    s->last_code[field] = code;
    return code;
}

static int find_key(Schema *sc, const char *p, int64_t len, int prev) {
    int64_t j = (int64_t)(fnv(p, len, 14695981039346656037ULL) & (KEY_SLOTS - 1));
    while (sc->key_slot[j]) {
        int f = sc->key_slot[j] - 1;
        if (sc->name_len[f] == len && memcmp(sc->name[f], p, (size_t)len) == 0) {
            sc->follows[prev + 1] = f + 1;
            return f;
        }
        j = (j + 1) & (KEY_SLOTS - 1);
    }
    return -1;
}

#define IS_WS(c) ((c) == ' ' || (c) == '\t' || (c) == '\r')
#define IS_DIGIT(c) ((c) >= '0' && (c) <= '9')

/* Scan a JSON number at p; NULL if it is not one. *is_int: no fraction and no exponent. */
static const char *scan_number(const char *p, const char *end, int *is_int) {
    if (p < end && *p == '-') p++;
    if (p >= end) return NULL;
    if (*p == '0') {
        p++;
    } else if (*p >= '1' && *p <= '9') {
        while (p < end && IS_DIGIT(*p)) p++;
    } else {
        return NULL;
    }
    *is_int = 1;
    if (p < end && *p == '.') {
        p++;
        if (p >= end || !IS_DIGIT(*p)) return NULL;
        while (p < end && IS_DIGIT(*p)) p++;
        *is_int = 0;
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        p++;
        if (p < end && (*p == '+' || *p == '-')) p++;
        if (p >= end || !IS_DIGIT(*p)) return NULL;
        while (p < end && IS_DIGIT(*p)) p++;
        *is_int = 0;
    }
    return p;
}

/* The largest magnitude an optional integer column (a double) holds exactly: 2**53. */
#define EXACT_INT 9007199254740992LL

/* An integer literal [s, e) as int64; 0 when it has more than 18 digits (the caller declines). */
static int parse_int(const char *s, const char *e, int64_t *out) {
    int neg = *s == '-';
    if (neg) s++;
    if (e - s > 18) return 0;
    int64_t v = 0;
    for (; s < e; s++) v = v * 10 + (*s - '0');
    *out = neg ? -v : v;
    return 1;
}

static const double POW10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                 1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* A JSON number [s, e) as the double Python's json module would give; 0 if not finite. */
static int parse_double(const char *s, const char *e, int is_int, double *out) {
    if (is_int) {
        int64_t v;
        if (parse_int(s, e, &v)) {
            *out = (double)v; /* as float(int(text)): "-0" is 0.0 */
            return 1;
        }
    } else {
        /* Clinger: at most 15 significant digits and a power of ten up to 22 are both exact, so
           one multiplication or division rounds correctly. */
        const char *p = s;
        int neg = *p == '-';
        if (neg) p++;
        uint64_t m = 0;
        int digits = 0, frac = 0, exp10 = 0, ok = 1;
        for (; p < e && (IS_DIGIT(*p) || *p == '.'); p++) {
            if (*p == '.') {
                frac = 1;
                continue;
            }
            if (m == 0 && *p == '0') {
                if (frac) exp10--;
                continue;
            }
            if (++digits > 15) {
                ok = 0;
                break;
            }
            m = m * 10 + (uint64_t)(*p - '0');
            if (frac) exp10--;
        }
        if (ok && p < e) { /* exponent */
            p++;
            int eneg = 0;
            if (*p == '+' || *p == '-') eneg = *p++ == '-';
            int ev = 0;
            for (; p < e; p++) {
                if (ev > 10000) {
                    ok = 0;
                    break;
                }
                ev = ev * 10 + (*p - '0');
            }
            exp10 += eneg ? -ev : ev;
        }
        if (ok && (m == 0 || (exp10 >= -22 && exp10 <= 22))) {
            double v = (double)m;
            if (m != 0) v = exp10 < 0 ? v / POW10[-exp10] : v * POW10[exp10];
            *out = neg ? -v : v;
            return 1;
        }
    }
    char small[64];
    char *text = small;
    size_t n = (size_t)(e - s);
    if (n >= sizeof small) {
        text = PyMem_RawMalloc(n + 1); /* parse_all runs without the GIL */
        if (text == NULL) return 0;
    }
    memcpy(text, s, n);
    text[n] = '\0';
    char *stop = NULL;
    /* Python's correctly rounded, locale-free conversion, under the GIL for the moment it takes
       (a rare path: most numbers take the exact one above) */
    PyGILState_STATE gil = PyGILState_Ensure();
    double v = PyOS_string_to_double(text, &stop, NULL);
    int good = !(v == -1.0 && PyErr_Occurred()) && stop == text + n;
    if (!good) PyErr_Clear();
    PyGILState_Release(gil);
    if (text != small) PyMem_RawFree(text);
    if (!good) return 0;
    if (!isfinite(v)) return 0;
    *out = v;
    return 1;
}

enum { DECLINE = -1, NO_MEMORY = -2 };

/* Parse every line into the columns. Returns rows, DECLINE, NO_MEMORY, or -(3 + f) when field f
   occurs but was given no column. */
static int64_t parse_all(Schema *sc, Strings *st, const char *buf, int64_t size, int64_t max_rows,
                         int64_t *lines) {
    const char *p = buf, *end = buf + size;
    int64_t row = 0, lineno = 0;
    uint64_t required = 0;
    for (int f = 0; f < sc->nfields; f++)
        if (sc->kind[f] >= 'A' && sc->kind[f] <= 'Z') required |= 1ULL << f;
    while (p < end) {
        lineno++;
        while (p < end && IS_WS(*p)) p++;
        if (p == end) break;
        if (*p == '\n') {
            p++;
            continue;
        }
        if (*p != '{' || row >= max_rows) return DECLINE;
        p++;
        uint64_t seen = 0, present = 0;
        int prev = -1;
        while (p < end && IS_WS(*p)) p++;
        if (p < end && *p == '}') {
            p++;
        } else {
            for (;;) {
                if (p >= end || *p != '"') return DECLINE;
                const char *k = ++p;
                /* most rows name their keys in the order of the row before: test that guess in
                   place (a name holds no quote, backslash or control byte, so a match followed by
                   a quote is exactly what the scan below would find) */
                int f = sc->follows[prev + 1] - 1;
                if (f >= 0 && end - k > sc->name_len[f] && k[sc->name_len[f]] == '"' &&
                    same(k, sc->name[f], sc->name_len[f])) {
                    p = k + sc->name_len[f];
                } else {
                    while (p < end && *p != '"' && *p != '\\' && (unsigned char)*p >= 0x20) p++;
                    if (p >= end || *p != '"') return DECLINE;
                    f = find_key(sc, k, p - k, prev);
                }
                if (f < 0 || (seen >> f) & 1) return DECLINE; /* unknown or repeated key */
                seen |= 1ULL << f;
                prev = f;
                p++;
                while (p < end && IS_WS(*p)) p++;
                if (p >= end || *p != ':') return DECLINE;
                p++;
                while (p < end && IS_WS(*p)) p++;
                if (p >= end) return DECLINE;
                char kind = sc->kind[f];
                char *col = sc->col[f];
                if (*p == 'n') {
                    if (end - p < 4 || memcmp(p, "null", 4) != 0) return DECLINE;
                    p += 4; /* null: not recorded, as if absent */
                } else {
                    if (col == NULL) return -(3 + f);
                    present |= 1ULL << f;
                    switch (kind) {
                    case 'S':
                    case 's': {
                        if (*p != '"') return DECLINE;
                        const char *v = ++p;
                        /* the same raw text as this field's previous value, up to a quote: the
                           scan below would stop at that very quote, so the code is known */
                        int64_t n = st->last_len[f];
                        if (n >= 0 && end - v > n && v[n] == '"' &&
                            same(v, buf + st->last_off[f], n)) {
                            ((int64_t *)col)[row] = st->last_code[f];
                            p = v + n + 1;
                            break;
                        }
                        int escaped = 0;
                        for (;;) {
                            if (p >= end) return DECLINE;
                            unsigned char c = (unsigned char)*p;
                            if (c == '"') break;
                            if (c < 0x20) return DECLINE;
                            if (c == '\\') { /* skip the escaped byte; Python decodes it later */
                                if (end - p < 2) return DECLINE;
                                escaped = 1;
                                p += 2;
                            } else {
                                p++;
                            }
                        }
                        int64_t code = strings_code(st, buf, f, v - buf, p - v, escaped);
                        if (code < 0) return NO_MEMORY;
                        ((int64_t *)col)[row] = code;
                        p++;
                        break;
                    }
                    case 'B':
                    case 'b': {
                        int truth;
                        if (end - p >= 4 && memcmp(p, "true", 4) == 0) {
                            truth = 1;
                            p += 4;
                        } else if (end - p >= 5 && memcmp(p, "false", 5) == 0) {
                            truth = 0;
                            p += 5;
                        } else {
                            return DECLINE;
                        }
                        if (kind == 'B')
                            ((uint8_t *)col)[row] = (uint8_t)truth;
                        else
                            ((double *)col)[row] = truth;
                        break;
                    }
                    default: {
                        int is_int = 0;
                        const char *e = scan_number(p, end, &is_int);
                        if (e == NULL) return DECLINE;
                        if (kind == 'I' || kind == 'i') {
                            int64_t v;
                            if (!is_int || !parse_int(p, e, &v)) return DECLINE;
                            if (kind == 'I')
                                ((int64_t *)col)[row] = v;
                            else if (v > EXACT_INT || v < -EXACT_INT)
                                return DECLINE; /* a double would round it: the precise path refuses it */
                            else
                                ((double *)col)[row] = (double)v;
                        } else {
                            double v;
                            if (!parse_double(p, e, is_int, &v)) return DECLINE;
                            ((double *)col)[row] = v;
                        }
                        p = e;
                    }
                    }
                }
                while (p < end && IS_WS(*p)) p++;
                if (p >= end) return DECLINE;
                if (*p == '}') {
                    p++;
                    break;
                }
                if (*p != ',') return DECLINE;
                p++;
                while (p < end && IS_WS(*p)) p++;
            }
        }
        while (p < end && IS_WS(*p)) p++;
        if (p < end) {
            if (*p != '\n') return DECLINE; /* trailing bytes after the object */
            p++;
        }
        if ((present & required) != required) return DECLINE;
        for (int f = 0; f < sc->nfields; f++) {
            if ((present >> f) & 1 || sc->col[f] == NULL) continue;
            if (sc->kind[f] == 's')
                ((int64_t *)sc->col[f])[row] = -1;
            else
                ((double *)sc->col[f])[row] = NAN;
        }
        lines[row++] = lineno;
    }
    return row;
}

static PyObject *labels_list(Strings *st, const char *buf, int nfields, Schema *sc) {
    PyObject *out = PyList_New(nfields);
    if (out == NULL) return NULL;
    for (int f = 0; f < nfields; f++) {
        PyObject *item;
        if (sc->kind[f] == 'S' || sc->kind[f] == 's')
            item = PyList_New((Py_ssize_t)st->next_code[f]);
        else
            item = Py_NewRef(Py_None);
        if (item == NULL) goto fail;
        PyList_SET_ITEM(out, f, item);
    }
    for (int64_t i = 0; i < st->n; i++) {
        Label *l = &st->labels[i];
        PyObject *text = l->escaped
                             ? PyBytes_FromStringAndSize(buf + l->off, (Py_ssize_t)l->len)
                             : PyUnicode_DecodeUTF8(buf + l->off, (Py_ssize_t)l->len, "strict");
        if (text == NULL) goto fail;
        PyList_SET_ITEM(PyList_GET_ITEM(out, l->field), (Py_ssize_t)l->code, text);
    }
    return out;
fail:
    Py_DECREF(out);
    return NULL;
}

PyDoc_STRVAR(parse_doc,
             "parse(data, names, kinds, columns, lines) -> (rows, labels) | int | None\n\n"
             "Read flat JSONL ``data`` into ``columns`` (one writable buffer or None per field of\n"
             "``names``/``kinds``) and ``lines`` (int64, one per row; its length bounds the rows).\n"
             "Returns (rows, labels), labels[f] listing field f's distinct texts in code order (str,\n"
             "or the raw bytes of a text with escapes); an int f when field f occurs but its\n"
             "column is None; None when the file is outside what this reader accepts.");

static PyObject *parse(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer data = {0}, kinds = {0}, lines = {0};
    PyObject *names, *columns;
    if (!PyArg_ParseTuple(args, "y*O!y*O!w*", &data, &PyTuple_Type, &names, &kinds, &PyList_Type,
                          &columns, &lines))
        return NULL;
    Py_buffer cols[MAX_FIELDS];
    int ncols = 0;
    PyObject *result = NULL;
    Schema sc;
    Strings st;
    int strings_ready = 0;
    memset(&sc, 0, sizeof sc);
    Py_ssize_t nfields = PyTuple_GET_SIZE(names);
    int64_t max_rows = (int64_t)(lines.len / (Py_ssize_t)sizeof(int64_t));
    if (nfields > MAX_FIELDS || kinds.len != nfields || PyList_GET_SIZE(columns) != nfields) {
        PyErr_SetString(PyExc_ValueError, "names, kinds and columns must match (at most 64)");
        goto done;
    }
    sc.nfields = (int)nfields;
    for (int f = 0; f < sc.nfields; f++) {
        PyObject *name = PyTuple_GET_ITEM(names, f);
        if (!PyBytes_Check(name)) {
            PyErr_SetString(PyExc_TypeError, "names must be bytes");
            goto done;
        }
        sc.name[f] = PyBytes_AS_STRING(name);
        sc.name_len[f] = PyBytes_GET_SIZE(name);
        sc.kind[f] = ((const char *)kinds.buf)[f];
        if (strchr("SsIiFfBb", sc.kind[f]) == NULL || sc.kind[f] == '\0') {
            PyErr_Format(PyExc_ValueError, "unknown kind %c", sc.kind[f]);
            goto done;
        }
        int64_t j = (int64_t)(fnv(sc.name[f], sc.name_len[f], 14695981039346656037ULL) & (KEY_SLOTS - 1));
        while (sc.key_slot[j]) j = (j + 1) & (KEY_SLOTS - 1);
        sc.key_slot[j] = f + 1;
        PyObject *c = PyList_GET_ITEM(columns, f);
        if (c == Py_None) continue;
        if (PyObject_GetBuffer(c, &cols[ncols], PyBUF_WRITABLE) < 0) goto done;
        Py_ssize_t width = sc.kind[f] == 'B' ? 1 : 8;
        if (cols[ncols].len < max_rows * width) {
            ncols++;
            PyErr_Format(PyExc_ValueError, "column %d is shorter than lines", f);
            goto done;
        }
        sc.col[f] = cols[ncols].buf;
        ncols++;
    }
    if (!strings_init(&st)) {
        PyErr_NoMemory();
        goto done;
    }
    strings_ready = 1;
    int64_t rows;
    /* the buffers are held (Py_buffer) and parse_all touches no Python object but through the
       GIL it takes back: another thread runs meanwhile (the next chunk is read while one parses) */
    Py_BEGIN_ALLOW_THREADS
    rows = parse_all(&sc, &st, data.buf, (int64_t)data.len, max_rows, lines.buf);
    Py_END_ALLOW_THREADS
    if (rows == NO_MEMORY) {
        PyErr_NoMemory();
    } else if (rows == DECLINE) {
        result = Py_NewRef(Py_None);
    } else if (rows < 0) {
        result = PyLong_FromLongLong(-rows - 3);
    } else {
        PyObject *labels = labels_list(&st, data.buf, sc.nfields, &sc);
        if (labels == NULL) {
            if (PyErr_ExceptionMatches(PyExc_UnicodeDecodeError)) {
                PyErr_Clear(); /* invalid UTF-8 in a text: the precise reader names it */
                result = Py_NewRef(Py_None);
            }
        } else {
            result = Py_BuildValue("(LN)", (long long)rows, labels);
        }
    }
done:
    if (strings_ready) strings_free(&st);
    for (int i = 0; i < ncols; i++) PyBuffer_Release(&cols[i]);
    PyBuffer_Release(&data);
    PyBuffer_Release(&kinds);
    PyBuffer_Release(&lines);
    return result;
}

PyDoc_STRVAR(count_lines_doc, "count_lines(data) -> int: newlines in data, plus one.");

static PyObject *count_lines(PyObject *self, PyObject *arg) {
    (void)self;
    Py_buffer data;
    if (PyObject_GetBuffer(arg, &data, PyBUF_SIMPLE) < 0) return NULL;
    const char *p = data.buf, *end = p + data.len;
    long long n = 1;
    Py_BEGIN_ALLOW_THREADS
    while ((p = memchr(p, '\n', (size_t)(end - p))) != NULL) {
        n++;
        p++;
    }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&data);
    return PyLong_FromLongLong(n);
}

static PyMethodDef methods[] = {
    {"parse", parse, METH_VARARGS, parse_doc},
    {"count_lines", count_lines, METH_O, count_lines_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "_cjsonl",
    .m_doc = "A strict one-pass reader for flat JSONL ledgers.",
    .m_size = -1,
    .m_methods = methods,
};

PyMODINIT_FUNC PyInit__cjsonl(void) { return PyModule_Create(&module); }
