/* JSON for the C SDK: a small strict parser (RFC 8259) into a tree, and the buffer that writes
 * JSON and text. No WebAssembly here: tests/json_test.c beside it runs it natively. */
#include "palisade.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 128

struct palisade_json {
    palisade_json_kind kind;
    bool boolean;
    double number;
    /* A string's text, or NULL. */
    char *text;
    size_t text_len;
    /* An array's items or an object's values, and an object's keys. */
    palisade_json **items;
    char **keys;
    size_t len;
};

typedef struct parser {
    const char *at;
    const char *end;
    char *error;
    size_t error_len;
    bool failed;
} parser;

static void fail_at(parser *p, const char *start, const char *what) {
    if (p->failed) return;
    p->failed = true;
    if (p->error && p->error_len) {
        snprintf(p->error, p->error_len, "%s at byte %zu", what, (size_t)(p->at - start));
    }
}

static void skip_space(parser *p) {
    while (p->at < p->end &&
           (*p->at == ' ' || *p->at == '\t' || *p->at == '\n' || *p->at == '\r')) {
        p->at++;
    }
}

static palisade_json *new_value(palisade_json_kind kind) {
    palisade_json *value = calloc(1, sizeof *value);
    if (value) value->kind = kind;
    return value;
}

static bool push_item(palisade_json *container, palisade_json *item, char *key) {
    size_t len = container->len + 1;
    palisade_json **items = realloc(container->items, len * sizeof *items);
    if (!items) return false;
    container->items = items;
    if (container->kind == PALISADE_JSON_OBJECT) {
        char **keys = realloc(container->keys, len * sizeof *keys);
        if (!keys) return false;
        container->keys = keys;
        keys[container->len] = key;
    }
    items[container->len] = item;
    container->len = len;
    return true;
}

static void put_utf8(palisade_buf *out, uint32_t code) {
    char bytes[4];
    size_t n;
    if (code < 0x80) {
        bytes[0] = (char)code;
        n = 1;
    } else if (code < 0x800) {
        bytes[0] = (char)(0xC0 | (code >> 6));
        bytes[1] = (char)(0x80 | (code & 0x3F));
        n = 2;
    } else if (code < 0x10000) {
        bytes[0] = (char)(0xE0 | (code >> 12));
        bytes[1] = (char)(0x80 | ((code >> 6) & 0x3F));
        bytes[2] = (char)(0x80 | (code & 0x3F));
        n = 3;
    } else {
        bytes[0] = (char)(0xF0 | (code >> 18));
        bytes[1] = (char)(0x80 | ((code >> 12) & 0x3F));
        bytes[2] = (char)(0x80 | ((code >> 6) & 0x3F));
        bytes[3] = (char)(0x80 | (code & 0x3F));
        n = 4;
    }
    palisade_buf_append(out, bytes, n);
}

static int hex4(const char *at, const char *end, uint32_t *out) {
    if (end - at < 4) return 0;
    uint32_t code = 0;
    for (int i = 0; i < 4; i++) {
        char c = at[i];
        code <<= 4;
        if (c >= '0' && c <= '9') code |= (uint32_t)(c - '0');
        else if (c >= 'a' && c <= 'f') code |= (uint32_t)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') code |= (uint32_t)(c - 'A' + 10);
        else return 0;
    }
    *out = code;
    return 1;
}

/* A string's text after its opening quote; NULL on bad input. */
static char *parse_string(parser *p, const char *start, size_t *len) {
    palisade_buf out = {0};
    p->at++;
    while (p->at < p->end && *p->at != '"') {
        unsigned char c = (unsigned char)*p->at;
        if (c < 0x20) {
            fail_at(p, start, "a control character inside a string");
            break;
        }
        if (c != '\\') {
            const char *run = p->at;
            while (p->at < p->end && *p->at != '"' && *p->at != '\\' &&
                   (unsigned char)*p->at >= 0x20) {
                p->at++;
            }
            palisade_buf_append(&out, run, (size_t)(p->at - run));
            continue;
        }
        if (p->end - p->at < 2) break;
        char escape = p->at[1];
        p->at += 2;
        switch (escape) {
            case '"': palisade_buf_append(&out, "\"", 1); break;
            case '\\': palisade_buf_append(&out, "\\", 1); break;
            case '/': palisade_buf_append(&out, "/", 1); break;
            case 'b': palisade_buf_append(&out, "\b", 1); break;
            case 'f': palisade_buf_append(&out, "\f", 1); break;
            case 'n': palisade_buf_append(&out, "\n", 1); break;
            case 'r': palisade_buf_append(&out, "\r", 1); break;
            case 't': palisade_buf_append(&out, "\t", 1); break;
            case 'u': {
                uint32_t code;
                if (!hex4(p->at, p->end, &code)) {
                    fail_at(p, start, "a bad \\u escape");
                    break;
                }
                p->at += 4;
                if (code >= 0xD800 && code <= 0xDBFF) {
                    uint32_t low;
                    if (p->end - p->at >= 6 && p->at[0] == '\\' && p->at[1] == 'u' &&
                        hex4(p->at + 2, p->end, &low) && low >= 0xDC00 && low <= 0xDFFF) {
                        p->at += 6;
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
                    } else {
                        code = 0xFFFD; /* a lone surrogate: the replacement character */
                    }
                } else if (code >= 0xDC00 && code <= 0xDFFF) {
                    code = 0xFFFD;
                }
                put_utf8(&out, code);
                break;
            }
            default: fail_at(p, start, "a bad escape"); break;
        }
        if (p->failed) break;
    }
    if (!p->failed && (p->at >= p->end || *p->at != '"')) fail_at(p, start, "an unterminated string");
    if (!p->failed && out.failed) fail_at(p, start, "out of memory");
    if (p->failed) {
        palisade_buf_free(&out);
        return NULL;
    }
    p->at++;
    if (!out.data) {
        out.data = calloc(1, 1);
        if (!out.data) {
            fail_at(p, start, "out of memory");
            return NULL;
        }
    }
    *len = out.len;
    return out.data;
}

static palisade_json *parse_value(parser *p, const char *start, int depth);

static palisade_json *parse_container(parser *p, const char *start, int depth, bool object) {
    palisade_json *value = new_value(object ? PALISADE_JSON_OBJECT : PALISADE_JSON_ARRAY);
    if (!value) {
        fail_at(p, start, "out of memory");
        return NULL;
    }
    char close = object ? '}' : ']';
    p->at++;
    skip_space(p);
    if (p->at < p->end && *p->at == close) {
        p->at++;
        return value;
    }
    for (;;) {
        char *key = NULL;
        if (object) {
            skip_space(p);
            size_t key_len;
            if (p->at >= p->end || *p->at != '"') {
                fail_at(p, start, "an object key that is not a string");
                break;
            }
            key = parse_string(p, start, &key_len);
            if (!key) break;
            skip_space(p);
            if (p->at >= p->end || *p->at != ':') {
                free(key);
                fail_at(p, start, "a missing ':'");
                break;
            }
            p->at++;
        }
        palisade_json *item = parse_value(p, start, depth + 1);
        if (!item || !push_item(value, item, key)) {
            free(key);
            palisade_json_free(item);
            fail_at(p, start, "out of memory");
            break;
        }
        skip_space(p);
        if (p->at < p->end && *p->at == ',') {
            p->at++;
            continue;
        }
        if (p->at < p->end && *p->at == close) {
            p->at++;
            return value;
        }
        fail_at(p, start, object ? "a missing ',' or '}'" : "a missing ',' or ']'");
        break;
    }
    palisade_json_free(value);
    return NULL;
}

static bool is_digit(char c) { return c >= '0' && c <= '9'; }

static palisade_json *parse_number(parser *p, const char *start) {
    const char *begin = p->at;
    const char *at = p->at;
    if (at < p->end && *at == '-') at++;
    if (at < p->end && *at == '0') {
        at++;
    } else if (at < p->end && is_digit(*at)) {
        while (at < p->end && is_digit(*at)) at++;
    } else {
        fail_at(p, start, "an unexpected character");
        return NULL;
    }
    if (at < p->end && *at == '.') {
        at++;
        if (at >= p->end || !is_digit(*at)) {
            fail_at(p, start, "a bad number");
            return NULL;
        }
        while (at < p->end && is_digit(*at)) at++;
    }
    if (at < p->end && (*at == 'e' || *at == 'E')) {
        at++;
        if (at < p->end && (*at == '+' || *at == '-')) at++;
        if (at >= p->end || !is_digit(*at)) {
            fail_at(p, start, "a bad number");
            return NULL;
        }
        while (at < p->end && is_digit(*at)) at++;
    }
    char small[64];
    size_t len = (size_t)(at - begin);
    char *text = len < sizeof small ? small : malloc(len + 1);
    palisade_json *value = new_value(PALISADE_JSON_NUMBER);
    if (!text || !value) {
        if (text != small) free(text);
        free(value);
        fail_at(p, start, "out of memory");
        return NULL;
    }
    memcpy(text, begin, len);
    text[len] = '\0';
    value->number = strtod(text, NULL);
    if (text != small) free(text);
    p->at = at;
    return value;
}

static bool literal(parser *p, const char *word) {
    size_t len = strlen(word);
    if ((size_t)(p->end - p->at) < len || memcmp(p->at, word, len) != 0) return false;
    p->at += len;
    return true;
}

static palisade_json *parse_value(parser *p, const char *start, int depth) {
    if (depth > MAX_DEPTH) {
        fail_at(p, start, "nesting deeper than 128 levels");
        return NULL;
    }
    skip_space(p);
    if (p->at >= p->end) {
        fail_at(p, start, "unexpected end of input");
        return NULL;
    }
    switch (*p->at) {
        case '{': return parse_container(p, start, depth, true);
        case '[': return parse_container(p, start, depth, false);
        case '"': {
            palisade_json *value = new_value(PALISADE_JSON_STRING);
            if (!value) {
                fail_at(p, start, "out of memory");
                return NULL;
            }
            value->text = parse_string(p, start, &value->text_len);
            if (!value->text) {
                free(value);
                return NULL;
            }
            return value;
        }
        case 't':
        case 'f': {
            bool truth = *p->at == 't';
            if (!literal(p, truth ? "true" : "false")) break;
            palisade_json *value = new_value(PALISADE_JSON_BOOL);
            if (value) value->boolean = truth;
            else fail_at(p, start, "out of memory");
            return value;
        }
        case 'n': {
            if (!literal(p, "null")) break;
            palisade_json *value = new_value(PALISADE_JSON_NULL);
            if (!value) fail_at(p, start, "out of memory");
            return value;
        }
        default: return parse_number(p, start);
    }
    fail_at(p, start, "an unexpected character");
    return NULL;
}

palisade_json *palisade_json_parse(const char *text, size_t len, char *error, size_t error_len) {
    parser p = {text, text + len, error, error_len, false};
    if (error && error_len) error[0] = '\0';
    palisade_json *value = parse_value(&p, text, 0);
    if (value) {
        skip_space(&p);
        if (p.at != p.end) {
            fail_at(&p, text, "text after the value");
            palisade_json_free(value);
            return NULL;
        }
    }
    return value;
}

void palisade_json_free(palisade_json *value) {
    if (!value) return;
    for (size_t i = 0; i < value->len; i++) {
        palisade_json_free(value->items[i]);
        if (value->keys) free(value->keys[i]);
    }
    free(value->items);
    free(value->keys);
    free(value->text);
    free(value);
}

palisade_json_kind palisade_json_type(const palisade_json *value) {
    return value ? value->kind : PALISADE_JSON_NULL;
}

const palisade_json *palisade_json_get(const palisade_json *object, const char *key) {
    if (!object || object->kind != PALISADE_JSON_OBJECT || !key) return NULL;
    /* The last of duplicate keys wins, as in most parsers. */
    for (size_t i = object->len; i-- > 0;) {
        if (strcmp(object->keys[i], key) == 0) return object->items[i];
    }
    return NULL;
}

size_t palisade_json_len(const palisade_json *value) {
    if (!value || (value->kind != PALISADE_JSON_ARRAY && value->kind != PALISADE_JSON_OBJECT)) {
        return 0;
    }
    return value->len;
}

const palisade_json *palisade_json_at(const palisade_json *value, size_t index) {
    if (index >= palisade_json_len(value)) return NULL;
    return value->items[index];
}

const char *palisade_json_key_at(const palisade_json *object, size_t index) {
    if (!object || object->kind != PALISADE_JSON_OBJECT || index >= object->len) return NULL;
    return object->keys[index];
}

const char *palisade_json_string(const palisade_json *value, const char *fallback, size_t *len) {
    if (!value || value->kind != PALISADE_JSON_STRING) {
        if (len) *len = fallback ? strlen(fallback) : 0;
        return fallback;
    }
    if (len) *len = value->text_len;
    return value->text;
}

double palisade_json_number(const palisade_json *value, double fallback) {
    return value && value->kind == PALISADE_JSON_NUMBER ? value->number : fallback;
}

bool palisade_json_bool(const palisade_json *value, bool fallback) {
    return value && value->kind == PALISADE_JSON_BOOL ? value->boolean : fallback;
}

void palisade_buf_append(palisade_buf *buf, const char *bytes, size_t len) {
    if (buf->failed) return;
    if (buf->len + len + 1 > buf->cap) {
        size_t cap = buf->cap ? buf->cap : 64;
        while (cap < buf->len + len + 1) {
            if (cap > SIZE_MAX / 2) {
                buf->failed = true;
                return;
            }
            cap *= 2;
        }
        char *data = realloc(buf->data, cap);
        if (!data) {
            buf->failed = true;
            return;
        }
        buf->data = data;
        buf->cap = cap;
    }
    if (len) memcpy(buf->data + buf->len, bytes, len);
    buf->len += len;
    buf->data[buf->len] = '\0';
}

void palisade_buf_puts(palisade_buf *buf, const char *text) {
    palisade_buf_append(buf, text, strlen(text));
}

void palisade_buf_vprintf(palisade_buf *buf, const char *format, va_list args) {
    char small[256];
    va_list again;
    va_copy(again, args);
    int n = vsnprintf(small, sizeof small, format, args);
    if (n < 0) {
        va_end(again);
        buf->failed = true;
        return;
    }
    if ((size_t)n < sizeof small) {
        palisade_buf_append(buf, small, (size_t)n);
    } else {
        char *big = malloc((size_t)n + 1);
        if (!big) {
            buf->failed = true;
        } else {
            vsnprintf(big, (size_t)n + 1, format, again);
            palisade_buf_append(buf, big, (size_t)n);
            free(big);
        }
    }
    va_end(again);
}

void palisade_buf_printf(palisade_buf *buf, const char *format, ...) {
    va_list args;
    va_start(args, format);
    palisade_buf_vprintf(buf, format, args);
    va_end(args);
}

void palisade_buf_json_string(palisade_buf *buf, const char *text, size_t len) {
    static const char hex[] = "0123456789abcdef";
    palisade_buf_append(buf, "\"", 1);
    size_t run = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)text[i];
        const char *escape = NULL;
        char unicode[6];
        switch (c) {
            case '"': escape = "\\\""; break;
            case '\\': escape = "\\\\"; break;
            case '\n': escape = "\\n"; break;
            case '\r': escape = "\\r"; break;
            case '\t': escape = "\\t"; break;
            case '\b': escape = "\\b"; break;
            case '\f': escape = "\\f"; break;
            default:
                if (c < 0x20) {
                    memcpy(unicode, "\\u00", 4);
                    unicode[4] = hex[c >> 4];
                    unicode[5] = hex[c & 15];
                }
        }
        if (!escape && c >= 0x20) continue;
        palisade_buf_append(buf, text + run, i - run);
        if (escape) palisade_buf_puts(buf, escape);
        else palisade_buf_append(buf, unicode, 6);
        run = i + 1;
    }
    palisade_buf_append(buf, text + run, len - run);
    palisade_buf_append(buf, "\"", 1);
}

void palisade_buf_json_number(palisade_buf *buf, double number) {
    if (isnan(number) || isinf(number)) {
        palisade_buf_puts(buf, "null");
        return;
    }
    double whole;
    if (modf(number, &whole) == 0.0 && fabs(number) < 9007199254740992.0) {
        palisade_buf_printf(buf, "%.0f", number);
    } else {
        palisade_buf_printf(buf, "%.17g", number);
    }
}

void palisade_buf_free(palisade_buf *buf) {
    free(buf->data);
    buf->data = NULL;
    buf->len = buf->cap = 0;
    buf->failed = false;
}
