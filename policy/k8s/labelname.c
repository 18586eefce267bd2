/*
 * labelname.c - see labelname.h. Written from kubernetes/kubernetes
 * staging/src/k8s.io/apimachinery/pkg/api/validate/content/kube.go
 * (IsLabelKey, IsLabelValue; the prefix is IsDNS1123Subdomain of the
 * same package) at 26c0309663d6df7426e5ce03835f15c34b1c7399;
 * pkg/labels/selector.go NewRequirement (008b3652959c) applies both.
 */
#include "policy/k8s/labelname.h"

#include <string.h>

#define NAME_MAX_LEN 63       /* labelKeyMaxLength, LabelValueMaxLength */
#define SUBDOMAIN_MAX_LEN 253 /* DNS1123SubdomainMaxLength */

static bool
is_alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c >= '0' && c <= '9');
}

/* ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9], n bytes of s, n > 0. */
static bool
name_part(const char *s, size_t n)
{
    if (n == 0 || !is_alnum(s[0]) || !is_alnum(s[n - 1]))
        return false;
    for (size_t i = 1; i + 1 < n; i++)
        if (!is_alnum(s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.')
            return false;
    return true;
}

/* [a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)* */
static bool
dns1123_subdomain(const char *s, size_t n)
{
    size_t start = 0;

    if (n == 0 || n > SUBDOMAIN_MAX_LEN)
        return false;
    for (size_t i = 0; i <= n; i++) {
        if (i < n && s[i] != '.') {
            char c = s[i];
            if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                  c == '-'))
                return false;
            continue;
        }
        /* One label, s[start, i): alphanumeric at both ends. */
        if (i == start || s[start] == '-' || s[i - 1] == '-')
            return false;
        start = i + 1;
    }
    return true;
}

bool
label_key_valid(const char *key)
{
    const char *slash, *name;

    if (key == NULL)
        return false;
    slash = strchr(key, '/');
    name = slash ? slash + 1 : key;
    if (slash && (strchr(name, '/') ||
                  !dns1123_subdomain(key, (size_t)(slash - key))))
        return false;
    return strlen(name) <= NAME_MAX_LEN && name_part(name, strlen(name));
}

bool
label_value_valid(const char *value)
{
    size_t n = value ? strlen(value) : 0;

    if (value == NULL)
        return false;
    return n == 0 || (n <= NAME_MAX_LEN && name_part(value, n));
}
