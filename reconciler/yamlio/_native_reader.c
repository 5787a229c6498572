/* The native half of reconciler/yamlio/libyaml.py: libyaml's events turned into data, start positions and
 * ends in one pass, with no Python object per event.
 *
 * Why it exists (measured, docs/development.md "The native YAML reader"): for a 5 MB values file the Python
 * path spends ~0.8 s in PyYAML's composer (a Python node and two marks per value) and ~0.65 s converting those
 * nodes; this reads the same file in a fraction of that.
 *
 * It reads a subset exactly as libyaml.py's converter does and *declines* (returns None) everything else, so
 * that libyaml.py's Python path -- and behind it ruamel -- read it as before: anchors and aliases, tags,
 * complex keys, plain keys that are not plain strings (numbers, booleans, nulls, Helm's yes/no/on/off), merge
 * keys, duplicate keys, a scalar document other than an empty one, nesting past the depth limit, more values
 * than the budget, and anything libyaml reports as an error. Which plain scalars are not plain strings,
 * libyaml.py says (`not_strings`, `number_starts`); those go to `plain_scalar` (libyaml.py's own resolution),
 * and a block scalar's end to `block_end` (spans.py's): no rule of YAML or Helm is written down twice.
 * tests/yamlio/test_native_reader.py holds both paths equal.
 *
 * It links the system's libyaml (0.2.5 on Debian 12), the composer PyYAML's (0.2.6 in its wheels). An
 * independent comparison of their events found one difference, an explicit key in a flow collection (`[? ]`):
 * libyaml.py sends every explicit key to ruamel before either reader runs, and the empty plain key it makes
 * is declined here. Relaxing either needs that difference looked at again.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>
#include <yaml.h>

/* spans.pack_start / pack_end: a line past this would not fit the packed int in 63 bits */
#define MAX_LINE (1ULL << 23)

typedef struct {
    yaml_parser_t parser;
    yaml_event_t event;
    int has_event;
    int declined;
    long long nodes;
    long long max_nodes;
    Py_ssize_t max_depth;
    unsigned long long last_end; /* packed end of the value read last */
    PyObject *ends;              /* the stream's: packed start -> packed end */
    PyObject *positions;         /* the document's: path -> (line, column) */
    PyObject *keys;              /* each distinct key string once: a values file repeats its keys */
    PyObject *not_strings;     /* frozenset: plain scalars resolved away from their text */
    const char *number_starts; /* a plain scalar starting with one of these may be a number */
    Py_ssize_t number_starts_length;
    PyObject *plain_scalar;
    PyObject *block_end;
} Reader;

static PyObject *decline(Reader *r) {
    r->declined = 1;
    return NULL;
}

/* The next event into r->event; 0 when libyaml reports an error (the stream is declined). */
static int next_event(Reader *r) {
    if (r->has_event) {
        yaml_event_delete(&r->event);
        r->has_event = 0;
    }
    if (!yaml_parser_parse(&r->parser, &r->event)) {
        r->declined = 1;
        return 0;
    }
    r->has_event = 1;
    return 1;
}

static unsigned long long pack_end(size_t line, size_t column) {
    return ((unsigned long long)line << 32) + column;
}

static unsigned long long pack_start(size_t line, size_t column, Py_ssize_t depth) {
    return (pack_end(line, column) << 8) + (unsigned long long)depth;
}

static int counted(Reader *r) {
    return ++r->nodes <= r->max_nodes;
}

/* Whether plain scalar `text` is read as its own text: not empty, not starting like a number, not one of the
 * words. 1 yes, 0 no, -1 an error. */
static int plain_string(Reader *r, PyObject *text, const char *value, size_t length) {
    if (length == 0 || memchr(r->number_starts, value[0], (size_t)r->number_starts_length) != NULL)
        return 0;
    int listed = PySet_Contains(r->not_strings, text);
    return listed < 0 ? -1 : !listed;
}

static int set_packed(PyObject *dict, unsigned long long key, unsigned long long value) {
    PyObject *k = PyLong_FromUnsignedLongLong(key);
    PyObject *v = k == NULL ? NULL : PyLong_FromUnsignedLongLong(value);
    int failed = v == NULL || PyDict_SetItem(dict, k, v) < 0;
    Py_XDECREF(k);
    Py_XDECREF(v);
    return failed ? -1 : 0;
}

static int set_position(Reader *r, PyObject *path, yaml_mark_t mark) {
    PyObject *where = Py_BuildValue("(nn)", (Py_ssize_t)mark.line + 1, (Py_ssize_t)mark.column + 1);
    int failed = where == NULL || PyDict_SetItem(r->positions, path, where) < 0;
    Py_XDECREF(where);
    return failed ? -1 : 0;
}

/* `path` with `last` appended (a new reference; `last` is borrowed). */
static PyObject *child_path(PyObject *path, PyObject *last) {
    Py_ssize_t n = PyTuple_GET_SIZE(path);
    PyObject *child = PyTuple_New(n + 1);
    if (child == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PyTuple_GET_ITEM(path, i);
        Py_INCREF(item);
        PyTuple_SET_ITEM(child, i, item);
    }
    Py_INCREF(last);
    PyTuple_SET_ITEM(child, n, last);
    return child;
}

static PyObject *read_node(Reader *r, PyObject *path);

static PyObject *read_scalar(Reader *r) {
    yaml_event_t *e = &r->event;
    const char *value = (const char *)e->data.scalar.value;
    size_t length = e->data.scalar.length;
    yaml_scalar_style_t style = e->data.scalar.style;
    PyObject *text = PyUnicode_DecodeUTF8(value, (Py_ssize_t)length, "strict");
    if (text == NULL)
        return NULL;
    if (style == YAML_LITERAL_SCALAR_STYLE || style == YAML_FOLDED_SCALAR_STYLE) {
        PyObject *end = PyObject_CallFunction(r->block_end, "nnn", (Py_ssize_t)e->start_mark.index,
                                              (Py_ssize_t)e->end_mark.index, (Py_ssize_t)e->end_mark.line);
        if (end == NULL) {
            Py_DECREF(text);
            return NULL;
        }
        r->last_end = PyLong_AsUnsignedLongLong(end);
        Py_DECREF(end);
        if (PyErr_Occurred()) {
            Py_DECREF(text);
            return NULL;
        }
        return text;
    }
    r->last_end = pack_end(e->end_mark.line + 1, e->end_mark.column + 1);
    if (style != YAML_PLAIN_SCALAR_STYLE)
        return text;
    int kept = plain_string(r, text, value, length);
    if (kept == 1)
        return text;
    PyObject *resolved = kept == 0 ? PyObject_CallOneArg(r->plain_scalar, text) : NULL;
    Py_DECREF(text);
    return resolved;
}

/* A mapping's key: a plain string or a quoted scalar, read as its text; any other key is declined. */
static PyObject *read_key(Reader *r) {
    yaml_event_t *e = &r->event;
    if (e->type != YAML_SCALAR_EVENT || e->data.scalar.anchor != NULL || e->data.scalar.tag != NULL)
        return decline(r);
    if (!counted(r))
        return decline(r);
    const char *value = (const char *)e->data.scalar.value;
    size_t length = e->data.scalar.length;
    PyObject *text = PyUnicode_DecodeUTF8(value, (Py_ssize_t)length, "strict");
    if (text == NULL)
        return NULL;
    int kept = e->data.scalar.style == YAML_PLAIN_SCALAR_STYLE ? plain_string(r, text, value, length) : 1;
    if (kept != 1) {
        Py_DECREF(text);
        return kept == 0 ? decline(r) : NULL;
    }
    PyObject *known = PyDict_SetDefault(r->keys, text, text);
    Py_XINCREF(known);
    Py_DECREF(text);
    return known;
}

static void collection_end(Reader *r, int flow, int empty) {
    if (flow || empty)
        r->last_end = pack_end(r->event.end_mark.line + 1, r->event.end_mark.column + 1);
    /* else: a block collection ends where its last child's value ends, which was read last */
}

/* One entry of a collection: its position, its value, and where that value ends. `where` is the key's
 * start in a mapping, the item's own in a sequence. */
static PyObject *read_entry(Reader *r, PyObject *child, yaml_mark_t where, Py_ssize_t depth) {
    if (where.line + 1 >= MAX_LINE)
        return decline(r);
    if (set_position(r, child, where) < 0)
        return NULL;
    PyObject *value = read_node(r, child);
    if (value == NULL)
        return NULL;
    if (set_packed(r->ends, pack_start(where.line + 1, where.column + 1, depth), r->last_end) < 0) {
        Py_DECREF(value);
        return NULL;
    }
    return value;
}

static PyObject *read_sequence(Reader *r, PyObject *path) {
    int flow = r->event.data.sequence_start.style == YAML_FLOW_SEQUENCE_STYLE;
    Py_ssize_t depth = PyTuple_GET_SIZE(path) + 1;
    PyObject *items = PyList_New(0);
    if (items == NULL)
        return NULL;
    for (Py_ssize_t i = 0;; i++) {
        if (!next_event(r))
            goto failed;
        if (r->event.type == YAML_SEQUENCE_END_EVENT)
            break;
        PyObject *index = PyLong_FromSsize_t(i);
        PyObject *child = index == NULL ? NULL : child_path(path, index);
        Py_XDECREF(index);
        if (child == NULL)
            goto failed;
        PyObject *item = read_entry(r, child, r->event.start_mark, depth);
        Py_DECREF(child);
        if (item == NULL)
            goto failed;
        int appended = PyList_Append(items, item);
        Py_DECREF(item);
        if (appended < 0)
            goto failed;
    }
    collection_end(r, flow, PyList_GET_SIZE(items) == 0);
    return items;
failed:
    Py_DECREF(items);
    return NULL;
}

static PyObject *read_mapping(Reader *r, PyObject *path) {
    int flow = r->event.data.mapping_start.style == YAML_FLOW_MAPPING_STYLE;
    Py_ssize_t depth = PyTuple_GET_SIZE(path) + 1;
    PyObject *out = PyDict_New();
    if (out == NULL)
        return NULL;
    for (;;) {
        if (!next_event(r))
            goto failed;
        if (r->event.type == YAML_MAPPING_END_EVENT)
            break;
        yaml_mark_t where = r->event.start_mark;
        PyObject *key = read_key(r);
        if (key == NULL)
            goto failed;
        int duplicate = PyDict_Contains(out, key);
        if (duplicate != 0) {
            if (duplicate == 1)
                r->declined = 1; /* ruamel names both lines */
            Py_DECREF(key);
            goto failed;
        }
        PyObject *child = child_path(path, key);
        if (child == NULL || !next_event(r)) {
            Py_DECREF(key);
            Py_XDECREF(child);
            goto failed;
        }
        PyObject *value = read_entry(r, child, where, depth);
        Py_DECREF(child);
        int stored = value == NULL ? -1 : PyDict_SetItem(out, key, value);
        Py_DECREF(key);
        Py_XDECREF(value);
        if (stored < 0)
            goto failed;
    }
    collection_end(r, flow, PyDict_GET_SIZE(out) == 0);
    return out;
failed:
    Py_DECREF(out);
    return NULL;
}

/* The value whose first event is r->event. */
static PyObject *read_node(Reader *r, PyObject *path) {
    yaml_event_t *e = &r->event;
    switch (e->type) {
    case YAML_SCALAR_EVENT:
        if (e->data.scalar.anchor != NULL || e->data.scalar.tag != NULL || !counted(r))
            return decline(r);
        return read_scalar(r);
    case YAML_SEQUENCE_START_EVENT:
        if (e->data.sequence_start.anchor != NULL || e->data.sequence_start.tag != NULL || !counted(r) ||
            PyTuple_GET_SIZE(path) >= r->max_depth)
            return decline(r);
        return read_sequence(r, path);
    case YAML_MAPPING_START_EVENT:
        if (e->data.mapping_start.anchor != NULL || e->data.mapping_start.tag != NULL || !counted(r) ||
            PyTuple_GET_SIZE(path) >= r->max_depth)
            return decline(r);
        return read_mapping(r, path);
    default: /* an alias */
        return decline(r);
    }
}

/* A document's root scalar: a plain one that resolves to null (an empty document) is skipped, Py_None
 * returned for it; any other declined. */
static PyObject *root_scalar(Reader *r) {
    yaml_event_t *e = &r->event;
    if (e->data.scalar.anchor != NULL || e->data.scalar.tag != NULL || !counted(r) ||
        e->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
        return decline(r);
    PyObject *text = PyUnicode_DecodeUTF8((const char *)e->data.scalar.value, (Py_ssize_t)e->data.scalar.length,
                                          "strict");
    PyObject *value = text == NULL ? NULL : PyObject_CallOneArg(r->plain_scalar, text);
    Py_XDECREF(text);
    if (value == NULL || value == Py_None)
        return value;
    Py_DECREF(value);
    return decline(r);
}

/* One document, its start event current: (data, positions), Py_None for an empty one, NULL when declined. */
static PyObject *read_document(Reader *r) {
    if (!next_event(r))
        return NULL;
    if (r->event.type == YAML_SCALAR_EVENT)
        return root_scalar(r);
    PyObject *root = PyTuple_New(0);
    r->positions = root == NULL ? NULL : Py_BuildValue("{O(ii)}", root, 1, 1);
    PyObject *data = r->positions == NULL ? NULL : read_node(r, root);
    Py_XDECREF(root);
    PyObject *read = data == NULL ? NULL : PyTuple_Pack(2, data, r->positions);
    Py_XDECREF(data);
    Py_CLEAR(r->positions);
    return read;
}

static PyObject *read_stream(Reader *r) {
    PyObject *documents = PyList_New(0);
    if (documents == NULL || !next_event(r))
        goto failed;
    if (r->event.type != YAML_STREAM_START_EVENT) {
        r->declined = 1;
        goto failed;
    }
    for (;;) {
        if (!next_event(r))
            goto failed;
        if (r->event.type == YAML_STREAM_END_EVENT)
            break;
        if (r->event.type != YAML_DOCUMENT_START_EVENT) {
            r->declined = 1;
            goto failed;
        }
        PyObject *document = read_document(r);
        if (document == NULL)
            goto failed;
        int appended = document == Py_None || PyList_Append(documents, document) == 0;
        Py_DECREF(document);
        if (!appended || !next_event(r))
            goto failed;
        if (r->event.type != YAML_DOCUMENT_END_EVENT) {
            r->declined = 1;
            goto failed;
        }
    }
    return Py_BuildValue("(NO)", documents, r->ends); /* N: the tuple takes the list's reference */
failed:
    Py_XDECREF(documents);
    return NULL;
}

static PyObject *native_read(PyObject *module, PyObject *args) {
    (void)module;
    Py_buffer text;
    Reader r;
    memset(&r, 0, sizeof(r));
    if (!PyArg_ParseTuple(args, "y*LnO!y#OO", &text, &r.max_nodes, &r.max_depth, &PyFrozenSet_Type, &r.not_strings,
                          &r.number_starts, &r.number_starts_length, &r.plain_scalar, &r.block_end))
        return NULL;
    PyObject *result = NULL;
    r.ends = PyDict_New();
    r.keys = PyDict_New();
    if (r.ends != NULL && r.keys != NULL && yaml_parser_initialize(&r.parser)) {
        yaml_parser_set_input_string(&r.parser, (const unsigned char *)text.buf, (size_t)text.len);
        result = read_stream(&r);
        if (r.has_event)
            yaml_event_delete(&r.event);
        yaml_parser_delete(&r.parser);
    } else if (!PyErr_Occurred()) {
        PyErr_NoMemory();
    }
    Py_XDECREF(r.ends);
    Py_XDECREF(r.keys);
    Py_XDECREF(r.positions);
    PyBuffer_Release(&text);
    if (result == NULL && r.declined && !PyErr_Occurred())
        Py_RETURN_NONE;
    return result;
}

static PyMethodDef methods[] = {
    {"read", native_read, METH_VARARGS,
     "read(text: bytes, max_nodes, max_depth, not_strings, number_starts, plain_scalar, block_end)"
     " -> ([(data, positions)], ends) | None"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_native_reader", NULL, -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__native_reader(void) {
    return PyModule_Create(&module);
}
