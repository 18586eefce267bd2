/*
 * The table of workload kinds (policy/kinds/kinds.c): every row is
 * whole, and the rows find the kinds of the golden inputs: the pods of
 * test/golden/cases at admission, the objects of test/audit/inputs and
 * test/data/corpus/manifests in audit.
 */
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/yamltree.h"
#include "policy/k8s/pod.h"
#include "policy/k8s/yamljson.h"
#include "policy/kinds/expand.h"
#include "policy/kinds/kinds.h"
#include "policy/kinds/workload.h"
#include "test/unit/check.h"

/* Objects of each row met in the golden inputs; pods of each at admission. */
static int seen_object[64], seen_pod[64];

/* Governed wherever they run, in the namespace's mode. */
static bool
governed(enum owner o)
{
    return o != OWNER_MANAGED && o != OWNER_NONE && o != OWNER_FRAMEWORK;
}

static size_t
row(const struct kind *k)
{
    return (size_t)(k - kinds);
}

static void
check_table(void)
{
    bool opt_in_seen = false, framework_seen = false;

    CHECK(kinds_n <= sizeof(seen_object) / sizeof(seen_object[0]));
    for (size_t i = 0; i < kinds_n; i++) {
        const struct kind *k = &kinds[i];

        CHECK(k->name && k->name[0]);
        CHECK(k->kind && k->kind[0]);
        CHECK(k->groups[0] != NULL);
        /* An expander, or the reason there is none. */
        if (k->expand == NULL && (k->not_expanded == NULL ||
                                  k->not_expanded[0] == '\0'))
            fprintf(stderr, "row '%s': no expander and no reason\n",
                    k->name);
        CHECK(k->expand != NULL || (k->not_expanded && k->not_expanded[0]));
        CHECK(k->expand == NULL || !k->skip);
        CHECK(k->api == NULL || k->other_api != NULL);
        CHECK(k->fix != NULL);
        /* Governed rows first, each known by a mark: workload_read()
         * takes the first row whose marks a pod carries. */
        if (governed(k->owner)) {
            CHECK(!opt_in_seen && !framework_seen);
            CHECK(k->marks[0].label != NULL);
            CHECK(k->fix->nodes && k->fix->procs && k->fix->limits);
        } else if (k->owner == OWNER_FRAMEWORK) {
            /* Then the frameworks, each with its switch and a mark. */
            CHECK(!opt_in_seen);
            framework_seen = true;
            CHECK(k->framework != FRAMEWORK_NONE);
            CHECK(framework_key(k->framework)[0] != '\0');
            CHECK(k->marks[0].label != NULL || k->marks[0].field != NULL);
        } else if (k->owner == OWNER_MANAGED) {
            opt_in_seen = true;
        }
        CHECK((k->framework != FRAMEWORK_NONE) ==
              (k->owner == OWNER_FRAMEWORK));
        if (k->owner == OWNER_NONE)
            CHECK(k->marks[0].label == NULL);
        for (size_t j = 0; j < 2; j++)
            CHECK(k->marks[j].label || !k->marks[j].container);
        /* One row per group, kind and apiVersion (Kueue refuses a
         * second integration of one name). */
        for (size_t g = 0; g < 2 && k->groups[g]; g++) {
            const struct kind *near;
            CHECK(kinds_object(k->groups[g], k->api, k->kind, &near) == k);
        }
    }
    CHECK_INT(kinds_fix(OWNER_MANAGED)->nodes == NULL, 1);
    CHECK_INT(kinds_fix(OWNER_NONE)->nodes == NULL, 1);
}

static char *
slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    long n;

    if (f == NULL)
        return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 &&
        fseek(f, 0, SEEK_SET) == 0 && (buf = malloc((size_t)n + 1)) &&
        fread(buf, 1, (size_t)n, f) == (size_t)n) {
        buf[n] = '\0';
        *len = (size_t)n;
    } else {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    return buf;
}

/* A golden review's pod: its owner at admission is its row's. */
static void
check_pod(const char *path, const cJSON *pod)
{
    struct workload w;
    const struct kind *k = kinds_pod(pod, NULL);

    workload_read(pod, &w);
    if (governed(w.owner)) {
        CHECK(k != NULL);
        if (k && k->owner != w.owner)
            fprintf(stderr, "%s: owner %s, row '%s'\n", path,
                    owner_name(w.owner), k->name);
        CHECK(k && k->owner == w.owner);
    } else if (k) {
        CHECK(!governed(k->owner));
    }
    if (k)
        seen_pod[row(k)]++;
}

static void
check_goldens(void)
{
    glob_t g;
    int n = 0;

    CHECK(glob("test/golden/cases/*.in.json", 0, NULL, &g) == 0);
    for (size_t i = 0; i < g.gl_pathc; i++) {
        size_t len;
        char *text = slurp(g.gl_pathv[i], &len);
        cJSON *review = text ? cJSON_Parse(text) : NULL;
        const cJSON *obj =
            json_get(json_get(review, "request"), "object");
        const char *kind = json_string(obj, "kind");

        if (kind && strcmp(kind, "Pod") == 0) {
            check_pod(g.gl_pathv[i], obj);
            n++;
        }
        cJSON_Delete(review);
        free(text);
    }
    globfree(&g);
    CHECK(n > 100);
}

/* One object: expand() dispatches to its row, and the pods it builds
 * carry that row's marks, read back as a kind of the same owner. */
static void
check_object(const char *path, const cJSON *obj)
{
    const char *kind = json_string(obj, "kind");
    const char *api = json_string(obj, "apiVersion");
    const struct kind *k, *near;
    struct expansion e;
    char group[128];

    if (kind == NULL)
        return;
    k = kinds_object(expand_api_group(obj, group, sizeof(group)), api, kind,
                     &near);
    CHECK(expand(obj, NULL, &e) == 0);
    if (k) {
        seen_object[row(k)]++;
        if (k->expand && e.skipped)
            fprintf(stderr, "%s: %s %s skipped: %s\n", path, kind,
                    api ? api : "", e.note ? e.note : "");
        CHECK(k->expand == NULL || !e.skipped);
        CHECK(!k->skip || e.skipped);
        if (k->expand)
            CHECK(e.job.owner ==
                  (governed(k->owner)                   ? k->owner
                   : k->framework != FRAMEWORK_NONE &&
                           k->job_level                 ? OWNER_FRAMEWORK
                                                        : OWNER_NONE));
        for (size_t i = 0; k->expand && k->marks[0].label && i < e.n_groups;
             i++) {
            const cJSON *pod = e.groups[i].pod;
            const struct kind *p = kinds_pod(pod, NULL);
            bool marked = kinds_marked(&k->marks[0], pod) ||
                          kinds_marked(&k->marks[1], pod);
            /* RayJob and RayCluster pods carry the same marks. A
             * framework's pods may lack them where the object does not
             * use what the row governs (a Volcano Job with no plugin):
             * then they are read as no kind at all. */
            bool ok = marked ? p && p->owner == k->owner
                             : k->framework != FRAMEWORK_NONE && p == NULL;
            if (!ok)
                fprintf(stderr, "%s: %s '%s' pod is read as '%s'\n", path,
                        k->name, e.groups[i].role, p ? p->name : "none");
            CHECK(ok);
        }
    } else if (near) {
        CHECK(e.skipped); /* another apiVersion of a kind */
    } else {
        /* No row: read through its pod templates, or skipped. */
        CHECK(e.skipped || (e.note && strstr(e.note, "does not know")));
    }
    expansion_free(&e);
}

static void
check_doc(const char *path, const struct ynode *doc)
{
    struct load_error err;
    cJSON *obj = yaml_to_json(doc, &err);
    const cJSON *item;
    const char *kind = json_string(obj, "kind");

    if (kind && strcmp(kind, "List") == 0) {
        cJSON_ArrayForEach(item, json_get(obj, "items"))
            check_object(path, item);
    } else if (obj) {
        check_object(path, obj);
    }
    cJSON_Delete(obj);
}

/* Each "---" chunk on its own, as audit reads them: a chunk that is not
 * YAML is audit's to report, not the table's. */
static void
check_manifest(const char *path)
{
    size_t len;
    char *text = slurp(path, &len);
    char *chunk = text;

    CHECK(text != NULL);
    while (chunk && *chunk) {
        char *next = strstr(chunk, "\n---");
        struct load_error err;
        struct ytree *t;

        if (next)
            *next++ = '\0';
        if ((t = ytree_parse(chunk, strlen(chunk), &err)) != NULL) {
            for (size_t i = 0; i < t->n_docs; i++)
                check_doc(path, t->docs[i]);
            ytree_free(t);
        }
        chunk = next ? strchr(next, '\n') : NULL;
    }
    free(text);
}

static void
check_manifests(void)
{
    static const char *const globs[] = {"test/audit/inputs/*.yaml",
                                        "test/data/corpus/manifests/*.yaml"};

    for (size_t j = 0; j < 2; j++) {
        glob_t g;
        CHECK(glob(globs[j], 0, NULL, &g) == 0);
        for (size_t i = 0; i < g.gl_pathc; i++)
            check_manifest(g.gl_pathv[i]);
        globfree(&g);
    }
}

/* How often the row of that name was met; -1 and a failure: no row. */
static int
seen(const char *name, const int *counts)
{
    for (size_t r = 0; r < kinds_n; r++)
        if (strcmp(kinds[r].name, name) == 0) {
            CHECK(counts[r] > 0);
            return counts[r];
        }
    fprintf(stderr, "no row '%s'\n", name);
    CHECK(0);
    return -1;
}

int
main(void)
{
    /* Kinds the golden inputs hold: each must be found through its row. */
    static const char *const in_objects[] = {
        "PyTorchJob", "MPIJob v1 (Training Operator 1.x)",
        "MPIJob v2beta1 (mpi-operator v2)", "TrainJob", "TrainingRuntime",
        "ClusterTrainingRuntime", "JAXJob", "JobSet",
        "Volcano Job (mpi, pytorch plugin)", "RayCluster", "RayJob",
        "LeaderWorkerSet", "MPIJob v1alpha2 (mpi-operator v0.2)",
        "Deployment", "DaemonSet", "Job", "Pod"};
    static const char *const in_pods[] = {
        "PyTorchJob", "MPIJob v1 (Training Operator 1.x)",
        "MPIJob v2beta1 (mpi-operator v2)", "TrainJob", "JAXJob",
        /* The frameworks (a Ray pod is read as RayJob's, the first of
         * the two rows with its mark). */
        "MPIJob v1alpha2 (mpi-operator v0.2)",
        "Volcano Job (mpi, pytorch plugin)", "RayJob", "LeaderWorkerSet",
        "JobSet", "PodGroup (gang)"};

    check_table();
    check_goldens();
    check_manifests();
    for (size_t i = 0; i < kinds_n; i++)
        printf("# %-34s %3d objects, %3d golden pods\n", kinds[i].name,
               seen_object[i], seen_pod[i]);
    for (size_t i = 0; i < sizeof(in_objects) / sizeof(in_objects[0]); i++)
        if (seen(in_objects[i], seen_object) == 0)
            fprintf(stderr, "no object of '%s' found\n", in_objects[i]);
    for (size_t i = 0; i < sizeof(in_pods) / sizeof(in_pods[0]); i++)
        if (seen(in_pods[i], seen_pod) == 0)
            fprintf(stderr, "no golden pod of '%s' found\n", in_pods[i]);
    CHECK_DONE();
}
