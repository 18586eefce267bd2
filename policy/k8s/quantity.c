/* quantity.c - the quantity grammar of k8s.io/apimachinery, read-only. */
#include "policy/k8s/quantity.h"

#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct suffix {
    const char *text;
    double factor;
};

/* What follows the number must be one of these exactly. */
static const struct suffix suffixes[] = {
    {"Ki", 1024.0},
    {"Mi", 1048576.0},
    {"Gi", 1073741824.0},
    {"Ti", 1099511627776.0},
    {"Pi", 1125899906842624.0},
    {"Ei", 1152921504606846976.0},
    {"n", 1e-9},
    {"u", 1e-6},
    {"m", 1e-3},
    {"", 1.0},
    {"k", 1e3},
    {"M", 1e6},
    {"G", 1e9},
    {"T", 1e12},
    {"P", 1e15},
    {"E", 1e18},
};

/* Reads [+-]digits[.digits]; returns chars used, 0 when none. */
static size_t
scan_number(const char *s, double *out)
{
    const char *p = s;
    size_t digits = 0;
    uint64_t whole = 0;

    if (*p == '+' || *p == '-')
        p++;
    while (isdigit((unsigned char)*p))
        whole = whole * 10 + (uint64_t)(*p++ - '0'), digits++;
    /* Most quantities are a count ("8"): up to 15 digits a double holds
     * it exactly, as strtod() would give it. */
    if (p == s + digits && digits > 0 && digits <= 15 && *p != '.') {
        *out = (double)whole;
        return digits;
    }
    if (*p == '.') {
        p++;
        while (isdigit((unsigned char)*p))
            p++, digits++;
    }
    if (digits == 0 || p - s >= 64)
        return 0;
    /* strtod alone would also eat the exponent: read only what we saw. */
    char text[64];
    memcpy(text, s, (size_t)(p - s));
    text[p - s] = '\0';
    *out = strtod(text, NULL);
    return (size_t)(p - s);
}

int
quantity_parse(const char *s, double *out)
{
    double number;
    size_t used = scan_number(s, &number);
    const char *rest = s + used;

    if (used == 0)
        return -1;
    if (*rest == '\0') {
        *out = number;
        return 0;
    }
    /* A decimal exponent: "1e3", "1E-2". */
    if ((*rest == 'e' || *rest == 'E') && rest[1] != '\0') {
        char *end;
        long exp = strtol(rest + 1, &end, 10);
        if (*end == '\0' && end != rest + 1 && labs(exp) < 300) {
            for (; exp > 0; exp--)
                number *= 10.0;
            for (; exp < 0; exp++)
                number /= 10.0;
            *out = number;
            return 0;
        }
    }
    for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
        if (strcmp(rest, suffixes[i].text) == 0) {
            *out = number * suffixes[i].factor;
            return 0;
        }
    }
    return -1;
}

/*
 * apimachinery's Quantity.UnmarshalJSON trims the text's white space
 * before it parses (strings.TrimSpace, pkg/api/resource/quantity.go):
 * the apiserver takes " 8" as 8, and so does this.
 */
static int
parse_trimmed(const char *s, double *out)
{
    char buf[64];
    size_t len;

    while (*s == ' ' || (*s >= '\t' && *s <= '\r'))
        s++;
    len = strlen(s);
    while (len > 0 && (s[len - 1] == ' ' ||
                       (s[len - 1] >= '\t' && s[len - 1] <= '\r')))
        len--;
    if (s[len] == '\0')
        return quantity_parse(s, out);
    if (len >= sizeof(buf))
        return -1;
    memcpy(buf, s, len);
    buf[len] = '\0';
    return quantity_parse(buf, out);
}

int
quantity_json(const cJSON *v, double *out)
{
    if (cJSON_IsNumber(v)) {
        *out = v->valuedouble;
        return 0;
    }
    if (cJSON_IsString(v))
        return parse_trimmed(v->valuestring, out);
    return -1;
}

const char *
quantity_count_problem(const cJSON *v)
{
    double value;

    if (quantity_json(v, &value) < 0)
        return "is not a quantity";
    if (value < 0)
        return "is negative";
    if (value != floor(value))
        return "is not a whole number";
    if (value >= 1e6)
        return "is too large (1,000,000 or more)";
    return NULL;
}

int
quantity_count(const cJSON *v, long *out)
{
    double value;

    if (quantity_json(v, &value) < 0)
        return -1;
    if (!(value >= 0 && value < 1e6) || value != floor(value))
        return -1;
    *out = (long)value;
    return 0;
}
