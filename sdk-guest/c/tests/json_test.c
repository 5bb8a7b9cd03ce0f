/* The C SDK's JSON parser and writer, natively (tests/tests/native_languages.rs runs it). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "palisade.h"

static int failures;

#define CHECK(cond)                                                        \
    do {                                                                   \
        if (!(cond)) {                                                     \
            fprintf(stderr, "%s:%d: failed: %s\n", __FILE__, __LINE__, #cond); \
            failures++;                                                    \
        }                                                                  \
    } while (0)

static palisade_json *parse(const char *text) {
    return palisade_json_parse(text, strlen(text), NULL, 0);
}

static void refuses(const char *text, const char *reason) {
    char error[128];
    palisade_json *value = palisade_json_parse(text, strlen(text), error, sizeof error);
    if (value) {
        fprintf(stderr, "accepted bad JSON: %s\n", text);
        failures++;
        palisade_json_free(value);
        return;
    }
    if (!strstr(error, reason)) {
        fprintf(stderr, "for %s: reason \"%s\" does not say \"%s\"\n", text, error, reason);
        failures++;
    }
}

static void reads_objects_arrays_and_scalars(void) {
    palisade_json *v = parse(" {\"name\": \"Ada\", \"n\": -12.5e1, \"ok\": true, \"none\": null,"
                             " \"list\": [1, [2], {}], \"name\": \"Grace\"} ");
    CHECK(palisade_json_type(v) == PALISADE_JSON_OBJECT);
    CHECK(palisade_json_len(v) == 6);
    /* The last of duplicate keys wins. */
    CHECK(strcmp(palisade_json_string(palisade_json_get(v, "name"), "", NULL), "Grace") == 0);
    CHECK(palisade_json_number(palisade_json_get(v, "n"), 0) == -125.0);
    CHECK(palisade_json_bool(palisade_json_get(v, "ok"), false));
    CHECK(palisade_json_type(palisade_json_get(v, "none")) == PALISADE_JSON_NULL);
    CHECK(palisade_json_get(v, "missing") == NULL);
    const palisade_json *list = palisade_json_get(v, "list");
    CHECK(palisade_json_len(list) == 3);
    CHECK(palisade_json_number(palisade_json_at(list, 0), 0) == 1.0);
    CHECK(palisade_json_type(palisade_json_at(list, 1)) == PALISADE_JSON_ARRAY);
    CHECK(palisade_json_at(list, 3) == NULL);
    CHECK(strcmp(palisade_json_key_at(v, 1), "n") == 0);
    /* Wrong kinds read as the fallback. */
    CHECK(strcmp(palisade_json_string(palisade_json_get(v, "n"), "fallback", NULL), "fallback") == 0);
    CHECK(palisade_json_number(palisade_json_get(v, "name"), 7) == 7);
    CHECK(palisade_json_get(list, "x") == NULL);
    palisade_json_free(v);
}

static void decodes_escapes_to_utf8(void) {
    palisade_json *v = parse("\"a\\\"b\\\\c\\/\\n\\t\\u00e9\\u2713\\ud83d\\ude00\\u0000z\"");
    size_t len;
    const char *text = palisade_json_string(v, NULL, &len);
    const char expected[] = "a\"b\\c/\n\t\xc3\xa9\xe2\x9c\x93\xf0\x9f\x98\x80\0z";
    CHECK(len == sizeof expected - 1);
    CHECK(text && memcmp(text, expected, len) == 0);
    palisade_json_free(v);
    /* A lone surrogate becomes U+FFFD rather than invalid UTF-8. */
    v = parse("\"\\ud800x\"");
    CHECK(strcmp(palisade_json_string(v, "", NULL), "\xef\xbf\xbdx") == 0);
    palisade_json_free(v);
}

static void refuses_what_is_not_json(void) {
    refuses("", "unexpected end");
    refuses("{\"a\":1,}", "an object key that is not a string");
    refuses("[1 2]", "a missing ','");
    refuses("\"abc", "an unterminated string");
    refuses("\"a\nb\"", "a control character");
    refuses("01", "text after the value");
    refuses("1.", "a bad number");
    refuses("tru", "an unexpected character");
    refuses("\"\\x\"", "a bad escape");
    refuses("\"\\u12g4\"", "a bad \\u escape");
    refuses("{} {}", "text after the value");
    /* Nesting is bounded: a hostile document cannot exhaust the stack. */
    char deep[300];
    memset(deep, '[', sizeof deep - 1);
    deep[sizeof deep - 1] = '\0';
    refuses(deep, "nesting deeper than 128 levels");
}

static void writes_json(void) {
    palisade_buf buf = {0};
    palisade_buf_puts(&buf, "[");
    palisade_buf_json_string(&buf, "q\"\\\n\x01\xc3\xa9", 7);
    palisade_buf_puts(&buf, ",");
    palisade_buf_json_number(&buf, 3);
    palisade_buf_puts(&buf, ",");
    palisade_buf_json_number(&buf, 0.1);
    palisade_buf_puts(&buf, ",");
    palisade_buf_json_number(&buf, NAN);
    palisade_buf_printf(&buf, ",%d]", 42);
    CHECK(!buf.failed);
    CHECK(strcmp(buf.data, "[\"q\\\"\\\\\\n\\u0001\xc3\xa9\",3,0.10000000000000001,null,42]") == 0);
    /* What it writes, it reads back. */
    palisade_json *v = palisade_json_parse(buf.data, buf.len, NULL, 0);
    CHECK(palisade_json_len(v) == 5);
    CHECK(strcmp(palisade_json_string(palisade_json_at(v, 0), "", NULL), "q\"\\\n\x01\xc3\xa9") == 0);
    CHECK(palisade_json_number(palisade_json_at(v, 2), 0) == 0.1);
    palisade_json_free(v);
    palisade_buf_free(&buf);
    /* A long formatted string grows the buffer past its first size. */
    char long_text[1000];
    memset(long_text, 'x', sizeof long_text - 1);
    long_text[sizeof long_text - 1] = '\0';
    palisade_buf_printf(&buf, "<%s>", long_text);
    CHECK(buf.len == sizeof long_text + 1);
    palisade_buf_free(&buf);
}

int main(void) {
    reads_objects_arrays_and_scalars();
    decodes_escapes_to_utf8();
    refuses_what_is_not_json();
    writes_json();
    if (failures) {
        fprintf(stderr, "%d checks failed\n", failures);
        return 1;
    }
    printf("json_test: all checks passed\n");
    return 0;
}
