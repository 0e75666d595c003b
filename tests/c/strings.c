/*
 * The string convention of MPI 3.1 §14.3.3 on every name and description
 * the interface returns: pvar, cvar and category names and descriptions,
 * enumeration names and item names (and pvar.h's pvar_cvar_get_string).
 *
 * For each string, with full length L (strlen + 1):
 *   - NULL buffer (any length) and length 0 (any buffer) return only L and
 *     leave the buffer untouched;
 *   - a NULL length pointer ignores the buffer (untouched);
 *   - for every n in 1 .. L+2: at most n-1 characters and a NUL are written,
 *     nothing after the NUL, the prefix is right, and *len == L;
 *   - names have at least one character.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "mpi_t.h"
#include "pvar.h"
#include "sample_component.h"

#define GUARD 0x7f
#define CAP 2048

/* A string getter: calls the interface with (buf, len). */
typedef int (*getter)(int what, int index, void *ctx, char *buf, int *len);

static int strings_checked;

static void check_string(const char *label, getter g, int what, int index, void *ctx,
                         int is_name) {
    static char full[CAP], buf[CAP + 8];
    int L, n, len, k;

    /* The reference: a buffer large enough. */
    len = CAP;
    CHECK_RC(g(what, index, ctx, full, &len), MPI_SUCCESS);
    L = len;
    CHECK(L >= 1 && L <= CAP);
    CHECK((int)strlen(full) + 1 == L);
    if (is_name) CHECK(L >= 2);

    /* NULL buffer: only the length. */
    len = 5;
    CHECK_RC(g(what, index, ctx, NULL, &len), MPI_SUCCESS);
    CHECK(len == L);
    /* Zero length: only the length, buffer untouched. */
    memset(buf, GUARD, sizeof buf);
    len = 0;
    CHECK_RC(g(what, index, ctx, buf, &len), MPI_SUCCESS);
    CHECK(len == L);
    CHECK((unsigned char)buf[0] == GUARD);
    /* NULL length: buffer ignored. */
    memset(buf, GUARD, sizeof buf);
    CHECK_RC(g(what, index, ctx, buf, NULL), MPI_SUCCESS);
    CHECK((unsigned char)buf[0] == GUARD);

    /* Every buffer size around the length. */
    for (n = 1; n <= L + 2; n++) {
        int ok = 1, w = n - 1 < L - 1 ? n - 1 : L - 1; /* characters written */
        memset(buf, GUARD, sizeof buf);
        len = n;
        if (g(what, index, ctx, buf, &len) != MPI_SUCCESS) ok = 0;
        if (len != L) ok = 0;
        if (memcmp(buf, full, (size_t)w) != 0) ok = 0;
        if (buf[w] != '\0') ok = 0;
        for (k = w + 1; k < n + 8 && k < (int)sizeof buf; k++)
            if ((unsigned char)buf[k] != GUARD) ok = 0;
        if (!ok) {
            fprintf(stderr, "%s %d: wrong result for buffer length %d (full \"%s\")\n", label,
                    index, n, full);
            CHECK(0);
            return;
        }
    }
    CHECK(1);
    strings_checked++;
}

enum { PVAR_NAME, PVAR_DESC, CVAR_NAME, CVAR_DESC, CAT_NAME, CAT_DESC, ENUM_NAME, ITEM_NAME };

static int get(int what, int index, void *ctx, char *buf, int *len) {
    MPI_T_enum e = ctx ? *(MPI_T_enum *)ctx : MPI_T_ENUM_NULL;
    int v;
    switch (what) {
    case PVAR_NAME:
        return MPI_T_pvar_get_info(index, buf, len, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                                   NULL, NULL, NULL);
    case PVAR_DESC:
        return MPI_T_pvar_get_info(index, NULL, NULL, NULL, NULL, NULL, NULL, buf, len, NULL,
                                   NULL, NULL, NULL);
    case CVAR_NAME:
        return MPI_T_cvar_get_info(index, buf, len, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
    case CVAR_DESC:
        return MPI_T_cvar_get_info(index, NULL, NULL, NULL, NULL, NULL, buf, len, NULL, NULL);
    case CAT_NAME:
        return MPI_T_category_get_info(index, buf, len, NULL, NULL, NULL, NULL, NULL);
    case CAT_DESC:
        return MPI_T_category_get_info(index, NULL, NULL, buf, len, NULL, NULL, NULL);
    case ENUM_NAME:
        return MPI_T_enum_get_info(e, NULL, buf, len);
    case ITEM_NAME:
        return MPI_T_enum_get_item(e, index, &v, buf, len);
    }
    return -1;
}

static int get_cvar_string(int what, int index, void *ctx, char *buf, int *len) {
    (void)what, (void)index;
    return pvar_cvar_get_string((pvar_cvar)ctx, buf, len);
}

/* The name and item names of enumeration e, if any. */
static void check_enum_strings(MPI_T_enum e) {
    int num = 0, j;
    if (e == MPI_T_ENUM_NULL) return;
    check_string("enum name", get, ENUM_NAME, 0, &e, 1);
    CHECK_RC(MPI_T_enum_get_info(e, &num, NULL, NULL), MPI_SUCCESS);
    for (j = 0; j < num; j++) check_string("enum item", get, ITEM_NAME, j, &e, 1);
}

int main(void) {
    struct sample s;
    int provided, n, i;
    sample_component_init(&s);
    CHECK_RC(MPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided), MPI_SUCCESS);

    CHECK_RC(MPI_T_pvar_get_num(&n), MPI_SUCCESS);
    for (i = 0; i < n; i++) {
        MPI_T_enum e = MPI_T_ENUM_NULL;
        check_string("pvar name", get, PVAR_NAME, i, NULL, 1);
        check_string("pvar desc", get, PVAR_DESC, i, NULL, 0);
        CHECK_RC(MPI_T_pvar_get_info(i, NULL, NULL, NULL, NULL, NULL, &e, NULL, NULL, NULL, NULL,
                                     NULL, NULL),
                 MPI_SUCCESS);
        check_enum_strings(e);
    }
    CHECK_RC(MPI_T_cvar_get_num(&n), MPI_SUCCESS);
    for (i = 0; i < n; i++) {
        MPI_T_enum e = MPI_T_ENUM_NULL;
        check_string("cvar name", get, CVAR_NAME, i, NULL, 1);
        check_string("cvar desc", get, CVAR_DESC, i, NULL, 0);
        CHECK_RC(MPI_T_cvar_get_info(i, NULL, NULL, NULL, NULL, &e, NULL, NULL, NULL, NULL),
                 MPI_SUCCESS);
        check_enum_strings(e);
    }
    CHECK_RC(MPI_T_category_get_num(&n), MPI_SUCCESS);
    for (i = 0; i < n; i++) {
        check_string("category name", get, CAT_NAME, i, NULL, 1);
        check_string("category desc", get, CAT_DESC, i, NULL, 0);
    }
    /* A category without description: "" and length 1. */
    {
        int idx, len = 10;
        char d[10] = "xxxxxxxxx";
        CHECK_RC(MPI_T_category_get_index("sample_empty", &idx), MPI_SUCCESS);
        CHECK_RC(MPI_T_category_get_info(idx, NULL, NULL, d, &len, NULL, NULL, NULL),
                 MPI_SUCCESS);
        CHECK(len == 1 && d[0] == '\0');
    }
    /* The component side uses the same helper. */
    check_string("pvar_cvar_get_string", get_cvar_string, 0, 0, s.path, 1);

    printf("%d strings checked\n", strings_checked);
    CHECK(strings_checked > 40);
    CHECK_RC(MPI_T_finalize(), MPI_SUCCESS);
    return summary("strings");
}
