/*
 * comms.c — communicator entries and the handle tables behind them.
 *
 * An entry holds what the wrappers need per communicator: its bound
 * variable instances (object = the handle's bits), its size, and the
 * MPI_COMM_WORLD rank of each rank it addresses (translated once, through
 * the remote group for an intercommunicator). Entries are made lazily at
 * a communicator's first recorded use, whatever made the communicator,
 * and dropped by the MPI_Comm_free and MPI_Comm_disconnect wrappers here,
 * before the handle can be reused. MPI_COMM_WORLD and MPI_COMM_SELF get
 * theirs at MPI_Init.
 *
 * The hot path is pm_comm_of() (record.h): a thread-local one-entry
 * cache validated by pm_comm_gen. On a miss, a lock-free lookup in the
 * table; the mutex is taken only to make or remove an entry. The same
 * table type keeps the persistent requests (completion.c) and the matched
 * messages (p2p.c).
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "interpose.h"

/* ---- recording state ---------------------------------------------------- */

/* Between MPI_Init and MPI_Finalize (lifecycle.c sets it): entries are made
 * only then. */
static atomic_int running;

int pm_running(void) { return atomic_load_explicit(&running, memory_order_acquire); }

void pm_running_set(int on) { atomic_store_explicit(&running, on, memory_order_release); }

/* ---- handle tables ---------------------------------------------------- */

#define PM_EMPTY UINT64_C(0)
#define PM_TOMB UINT64_MAX

typedef struct pm_slot {
    _Atomic uint64_t key;
    _Atomic(void *) value;
} pm_slot;

struct pm_slots {
    size_t mask;      /* capacity - 1 (a power of two) */
    unsigned shift;   /* 64 - log2(capacity) */
    pm_slots *retired; /* next outgrown array (freed at MPI_Finalize) */
    pm_slot slot[];
};

/* Outgrown slot arrays of every table: lookups may still walk them. */
static pm_slots *retired;
static pthread_mutex_t retired_lock = PTHREAD_MUTEX_INITIALIZER;

static size_t slot_of(uint64_t key, const pm_slots *s) {
    return (size_t)((key * UINT64_C(0x9E3779B97F4A7C15)) >> s->shift);
}

void *pm_table_get(pm_table *t, uint64_t key) {
    if (key == PM_EMPTY || key == PM_TOMB)
        return NULL;
    pm_slots *s = atomic_load_explicit(&t->slots, memory_order_acquire);
    if (s == NULL)
        return NULL;
    for (size_t i = slot_of(key, s), n = 0; n <= s->mask; i = (i + 1) & s->mask, n++) {
        /* Acquire: the value (stored before the key) and what it points to. */
        uint64_t k = atomic_load_explicit(&s->slot[i].key, memory_order_acquire);
        if (k == key)
            return atomic_load_explicit(&s->slot[i].value, memory_order_relaxed);
        if (k == PM_EMPTY)
            return NULL;
    }
    return NULL;
}

/* A new array holding the live entries of `old` at most a quarter full. */
static pm_slots *regrow(pm_table *t, pm_slots *old) {
    size_t live = atomic_load_explicit(&t->live, memory_order_relaxed), cap = 16;
    unsigned bits = 4;
    while (cap < (live + 1) * 4) {
        cap *= 2;
        bits++;
    }
    pm_slots *s = calloc(1, sizeof *s + cap * sizeof(pm_slot)); /* all EMPTY */
    if (s == NULL)
        return NULL;
    s->mask = cap - 1;
    s->shift = 64 - bits;
    for (size_t j = 0; old != NULL && j <= old->mask; j++) {
        uint64_t k = atomic_load_explicit(&old->slot[j].key, memory_order_relaxed);
        if (k == PM_EMPTY || k == PM_TOMB)
            continue;
        size_t i = slot_of(k, s);
        while (atomic_load_explicit(&s->slot[i].key, memory_order_relaxed) != PM_EMPTY)
            i = (i + 1) & s->mask;
        void *v = atomic_load_explicit(&old->slot[j].value, memory_order_relaxed);
        atomic_store_explicit(&s->slot[i].value, v, memory_order_relaxed);
        atomic_store_explicit(&s->slot[i].key, k, memory_order_relaxed);
    }
    t->used = live;
    atomic_store_explicit(&t->slots, s, memory_order_release);
    if (old != NULL) {
        pthread_mutex_lock(&retired_lock);
        old->retired = retired;
        retired = old;
        pthread_mutex_unlock(&retired_lock);
    }
    return s;
}

int pm_table_put(pm_table *t, uint64_t key, void *value) {
    if (key == PM_EMPTY || key == PM_TOMB)
        return -1;
    pm_slots *s = atomic_load_explicit(&t->slots, memory_order_relaxed);
    if (s == NULL || (t->used + 1) * 2 > s->mask + 1) {
        s = regrow(t, s);
        if (s == NULL)
            return -1;
    }
    size_t i = slot_of(key, s);
    for (;; i = (i + 1) & s->mask) {
        uint64_t k = atomic_load_explicit(&s->slot[i].key, memory_order_relaxed);
        if (k == PM_EMPTY) {
            t->used++;
            break;
        }
        if (k == PM_TOMB)
            break;
    }
    atomic_store_explicit(&s->slot[i].value, value, memory_order_relaxed);
    atomic_store_explicit(&s->slot[i].key, key, memory_order_release);
    atomic_fetch_add_explicit(&t->live, 1, memory_order_relaxed);
    return 0;
}

void *pm_table_take(pm_table *t, uint64_t key) {
    if (key == PM_EMPTY || key == PM_TOMB)
        return NULL;
    pm_slots *s = atomic_load_explicit(&t->slots, memory_order_relaxed);
    for (size_t i = s ? slot_of(key, s) : 0, n = 0; s != NULL && n <= s->mask;
         i = (i + 1) & s->mask, n++) {
        uint64_t k = atomic_load_explicit(&s->slot[i].key, memory_order_relaxed);
        if (k == PM_EMPTY)
            return NULL;
        if (k == key) {
            void *v = atomic_load_explicit(&s->slot[i].value, memory_order_relaxed);
            atomic_store_explicit(&s->slot[i].key, PM_TOMB, memory_order_release);
            atomic_fetch_sub_explicit(&t->live, 1, memory_order_relaxed);
            return v;
        }
    }
    return NULL;
}

void pm_tables_release(void) {
    pthread_mutex_lock(&retired_lock);
    while (retired != NULL) {
        pm_slots *next = retired->retired;
        free(retired);
        retired = next;
    }
    pthread_mutex_unlock(&retired_lock);
}

/* ---- communicator entries ----------------------------------------------- */

_Thread_local pm_tls pm_tls_cache;
_Atomic uint64_t pm_comm_gen;

static pm_table comms = PM_TABLE_INIT;
static unsigned long next_seq; /* under comms.lock */
static MPI_Group world_group = MPI_GROUP_NULL;

static int by_int(const void *a, const void *b) {
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* `n` world ranks (sorted in place; -1: outside MPI_COMM_WORLD) as ranges,
 * "0-3,6,8-9" ("?" first if some are outside), at p, which follows the
 * label's '[' or '|'. Returns the end. */
static char *ranges(char *p, int *ranks, int n) {
    qsort(ranks, (size_t)n, sizeof *ranks, by_int);
    int i = 0;
    while (i < n && ranks[i] < 0)
        i++;
    if (i > 0)
        *p++ = '?';
    while (i < n) {
        int j = i;
        while (j + 1 < n && ranks[j + 1] <= ranks[j] + 1)
            j++;
        if (p[-1] != '[' && p[-1] != '|')
            *p++ = ',';
        p += ranks[j] == ranks[i] ? sprintf(p, "%d", ranks[i])
                                  : sprintf(p, "%d-%d", ranks[i], ranks[j]);
        i = j + 1;
    }
    return p;
}

/* The world ranks of the `n` members of `group` (malloc'd; -1 for a
 * process outside MPI_COMM_WORLD), or NULL. */
static int *world_ranks(MPI_Group group, int n) {
    size_t bytes = sizeof(int) * (size_t)(n > 0 ? n : 1);
    int *in = malloc(bytes), *out = malloc(bytes);
    int ok = in != NULL && out != NULL;
    for (int i = 0; ok && i < n; i++)
        in[i] = i;
    ok = ok && PMPI_Group_translate_ranks(group, n, in, world_group, out) == MPI_SUCCESS;
    free(in);
    if (!ok) {
        free(out);
        return NULL;
    }
    for (int i = 0; i < n; i++)
        if (out[i] == MPI_UNDEFINED)
            out[i] = -1;
    return out;
}

/* The lowest world rank of a sorted group (INT_MAX: none). */
static int lowest(const int *sorted, int n) {
    for (int i = 0; i < n; i++)
        if (sorted[i] >= 0)
            return sorted[i];
    return INT_MAX;
}

/* "comm[<members>]", or for an intercommunicator "comm[<one
 * group>|<the other>]" with the group holding the lowest world rank first,
 * so that both sides name it alike. NULL if out of memory. */
static char *members_label(const int *local, int nlocal, const int *remote, int nremote) {
    char *label = malloc(16 + 12 * ((size_t)nlocal + (size_t)nremote));
    int *a = malloc(sizeof(int) * ((size_t)nlocal + (size_t)nremote + 1));
    if (label == NULL || a == NULL) {
        free(label);
        free(a);
        return NULL;
    }
    int *first = a, nfirst = nlocal, *second = a + nlocal, nsecond = remote ? nremote : 0;
    memcpy(first, local, sizeof(int) * (size_t)nfirst);
    if (remote != NULL)
        memcpy(second, remote, sizeof(int) * (size_t)nsecond);
    qsort(first, (size_t)nfirst, sizeof(int), by_int);
    qsort(second, (size_t)nsecond, sizeof(int), by_int);
    if (remote != NULL && lowest(second, nsecond) < lowest(first, nfirst)) {
        int *t = first, nt = nfirst;
        first = second, nfirst = nsecond;
        second = t, nsecond = nt;
    }
    char *p = label + sprintf(label, "comm[");
    p = ranges(p, first, nfirst);
    if (remote != NULL) {
        *p++ = '|';
        p = ranges(p, second, nsecond);
    }
    strcpy(p, "]");
    free(a);
    return label;
}

static void drop_instances(pm_comm *e) {
    for (int b = 0; b < PM_BOUND_VARS; b++) {
        if (e->var[b] != NULL) {
            pvar_bound_drop(pm_vars.bound[b], e->key);
            pvar_var_free(e->var[b]);
        }
    }
}

static void entry_free(pm_comm *e) {
    free((int *)e->world_rank);
    free(e->label);
    free(e);
}

/* Live entries whose members are `label`'s, not named by a fixed label
 * (under comms.lock). */
static unsigned same_members(const char *label) {
    pm_slots *s = atomic_load_explicit(&comms.slots, memory_order_relaxed);
    unsigned n = 0;
    for (size_t i = 0; s != NULL && i <= s->mask; i++) {
        uint64_t k = atomic_load_explicit(&s->slot[i].key, memory_order_relaxed);
        if (k == PM_EMPTY || k == PM_TOMB)
            continue;
        const pm_comm *o = atomic_load_explicit(&s->slot[i].value, memory_order_relaxed);
        n += !o->fixed_label && strcmp(o->label, label) == 0;
    }
    return n;
}

/* Makes and publishes the entry of `comm` (under comms.lock), or NULL. */
static pm_comm *entry_add(MPI_Comm comm, uint64_t key, const char *fixed_label) {
    pm_comm *e = calloc(1, sizeof *e);
    if (e == NULL)
        return NULL;
    e->key = key;
    e->world = comm == MPI_COMM_WORLD;
    e->fixed_label = fixed_label != NULL;
    MPI_Group local = MPI_GROUP_NULL, remote = MPI_GROUP_NULL;
    int *local_ranks = NULL, *remote_ranks = NULL;
    int ok = PMPI_Comm_test_inter(comm, &e->inter) == MPI_SUCCESS &&
             PMPI_Comm_size(comm, &e->size) == MPI_SUCCESS &&
             PMPI_Comm_rank(comm, &e->rank) == MPI_SUCCESS &&
             PMPI_Comm_group(comm, &local) == MPI_SUCCESS &&
             (local_ranks = world_ranks(local, e->size)) != NULL;
    e->peers = e->size;
    if (ok && e->inter)
        ok = PMPI_Comm_remote_size(comm, &e->peers) == MPI_SUCCESS &&
             PMPI_Comm_remote_group(comm, &remote) == MPI_SUCCESS &&
             (remote_ranks = world_ranks(remote, e->peers)) != NULL;
    if (ok)
        e->label = fixed_label ? strdup(fixed_label)
                               : members_label(local_ranks, e->size, remote_ranks, e->peers);
    if (local != MPI_GROUP_NULL)
        PMPI_Group_free(&local);
    if (remote != MPI_GROUP_NULL)
        PMPI_Group_free(&remote);
    /* The ranks a send addresses: the remote group's for an intercommunicator. */
    e->world_rank = e->inter ? remote_ranks : local_ranks;
    free(e->inter ? local_ranks : remote_ranks);
    if (!ok || e->label == NULL) {
        entry_free(e);
        return NULL;
    }
    /* Complete before it is published: lookups read it without the lock. */
    for (int b = 0; b < PM_BOUND_VARS; b++) {
        pvar_bound bound = pm_vars.bound[b];
        if (bound == NULL || pvar_bound_create(bound, key, 0, &e->var[b]) != 0)
            e->var[b] = NULL;
    }
    e->seq = next_seq++;
    unsigned same = e->fixed_label ? 0 : same_members(e->label);
    if (pm_table_put(&comms, key, e) != 0) {
        drop_instances(e);
        entry_free(e);
        return NULL;
    }
    atomic_fetch_add_explicit(&pm_comm_gen, 1, memory_order_release);
    /* The name readers outside MPI_T show (pvar read / top): as the report
     * names it, "#k" after k live communicators with the same members
     * made before this one. Best effort: without it they show the handle. */
    char *name = malloc(strlen(e->label) + 16);
    if (name != NULL) {
        if (same > 0)
            sprintf(name, "%s#%u", e->label, same);
        else
            strcpy(name, e->label);
        pvar_object_label(PVAR_BIND_MPI_COMM, key, name);
        free(name);
    }
    return e;
}

pm_comm *pm_comm_lookup(pm_tls *t, MPI_Comm comm, int make) {
    t->fast_comm = NULL; /* emptied with (before) the sites it was filled from */
    if (!pm_running() || comm == MPI_COMM_NULL)
        return NULL;
    uint64_t key = pm_comm_key(comm);
    /* The generation before the lookup: an entry removed after it makes the
     * cache miss again. */
    uint64_t gen = atomic_load_explicit(&pm_comm_gen, memory_order_acquire);
    pm_comm *e = pm_table_get(&comms, key);
    if (e == NULL && make) {
        pthread_mutex_lock(&comms.lock);
        e = pm_table_get(&comms, key);
        if (e == NULL)
            e = entry_add(comm, key, NULL);
        gen = atomic_load_explicit(&pm_comm_gen, memory_order_relaxed);
        pthread_mutex_unlock(&comms.lock);
    }
    if (e == NULL)
        return NULL;
    for (int v = 0; v < PM_CELL_VARS; v++)
        t->site[v].cell = NULL;
    t->key = key;
    t->gen = gen;
    t->comm = e;
    return e;
}

/* Drops the entry of `comm` (before the MPI library frees the handle,
 * which it may then reuse). */
static void forget(MPI_Comm comm) {
    uint64_t key = pm_comm_key(comm);
    pthread_mutex_lock(&comms.lock);
    pm_comm *e = pm_table_take(&comms, key);
    if (e != NULL) {
        atomic_fetch_add_explicit(&pm_comm_gen, 1, memory_order_release);
        drop_instances(e);
        pvar_object_label(PVAR_BIND_MPI_COMM, key, NULL);
    }
    pthread_mutex_unlock(&comms.lock);
    if (e != NULL)
        entry_free(e);
}

void pm_comms_start(void) {
    PMPI_Comm_group(MPI_COMM_WORLD, &world_group);
    pthread_mutex_lock(&comms.lock);
    entry_add(MPI_COMM_WORLD, pm_comm_key(MPI_COMM_WORLD), "MPI_COMM_WORLD");
    entry_add(MPI_COMM_SELF, pm_comm_key(MPI_COMM_SELF), "MPI_COMM_SELF");
    pthread_mutex_unlock(&comms.lock);
}

void pm_comms_stop(void) {
    if (world_group != MPI_GROUP_NULL)
        PMPI_Group_free(&world_group);
    pm_tables_release();
}

static int by_seq(const void *a, const void *b) {
    unsigned long x = (*(pm_comm *const *)a)->seq, y = (*(pm_comm *const *)b)->seq;
    return (x > y) - (x < y);
}

size_t pm_comm_labels(uint64_t **objects, char ***labels) {
    *objects = NULL;
    *labels = NULL;
    pthread_mutex_lock(&comms.lock);
    pm_slots *s = atomic_load_explicit(&comms.slots, memory_order_relaxed);
    size_t max = atomic_load_explicit(&comms.live, memory_order_relaxed), n = 0;
    pm_comm **live = malloc((max + 1) * sizeof *live);
    uint64_t *obj = malloc((max + 1) * sizeof *obj);
    char **lab = calloc(max + 1, sizeof *lab);
    int ok = live != NULL && obj != NULL && lab != NULL;
    for (size_t i = 0; ok && s != NULL && i <= s->mask; i++) {
        uint64_t k = atomic_load_explicit(&s->slot[i].key, memory_order_relaxed);
        if (k != PM_EMPTY && k != PM_TOMB)
            live[n++] = atomic_load_explicit(&s->slot[i].value, memory_order_relaxed);
    }
    if (ok)
        qsort(live, n, sizeof *live, by_seq);
    for (size_t i = 0; ok && i < n; i++) {
        /* "#k": k earlier live communicators of this process have the
         * same members. */
        unsigned same = 0;
        for (size_t j = 0; j < i && !live[i]->fixed_label; j++)
            same += !live[j]->fixed_label && strcmp(live[j]->label, live[i]->label) == 0;
        obj[i] = live[i]->key;
        lab[i] = malloc(strlen(live[i]->label) + 16);
        ok = lab[i] != NULL;
        if (ok && same > 0)
            sprintf(lab[i], "%s#%u", live[i]->label, same);
        else if (ok)
            strcpy(lab[i], live[i]->label);
    }
    pthread_mutex_unlock(&comms.lock);
    free(live);
    if (!ok) {
        pm_comm_labels_free(obj, lab, n);
        return 0;
    }
    *objects = obj;
    *labels = lab;
    return n;
}

void pm_comm_labels_free(uint64_t *objects, char **labels, size_t n) {
    for (size_t i = 0; labels != NULL && i < n; i++)
        free(labels[i]);
    free(labels);
    free(objects);
}

/* ---- wrappers ------------------------------------------------------------ */

int MPI_Comm_free(MPI_Comm *comm) {
    if (PM_ON)
        forget(*comm);
    return PMPI_Comm_free(comm);
}

int MPI_Comm_disconnect(MPI_Comm *comm) {
    if (PM_ON)
        forget(*comm);
    return PMPI_Comm_disconnect(comm);
}

/* ---- datatype sizes ---------------------------------------------------------- */

/* The miss path of pm_type_size (record.h): asks the library, and keeps
 * the answer in the thread's one-entry cache if `type` is predefined. */
MPI_Count pm_type_size_miss(pm_tls *t, MPI_Datatype type) {
    int size, ni, na, nd, combiner;
    MPI_Count big;
    if (PMPI_Type_size(type, &size) != MPI_SUCCESS)
        return -1;
    if (size != MPI_UNDEFINED)
        big = size;
    else if (PMPI_Type_size_x(type, &big) != MPI_SUCCESS) /* larger than INT_MAX bytes */
        return -1;
    if (big > 0 && PMPI_Type_get_envelope(type, &ni, &na, &nd, &combiner) == MPI_SUCCESS &&
        combiner == MPI_COMBINER_NAMED) {
        t->type_size = 0; /* never a half-written entry */
        t->type = type;
        t->type_size = (uint64_t)big;
    }
    return big;
}

/* ---- the fast block (record.h) ------------------------------------------------ */

int pm_fast_fill(pm_tls *t, const pm_comm *c) {
    t->fast_comm = NULL;
    if (c == NULL || c != t->comm) /* only the entry the sites are for */
        return 0;
    enum { N = PM_CELL_VARS + 3 };
    pvar_site *sites[N];
    pvar_var vars[N];
    uint64_t *cells[N];
    for (int v = 0; v < PM_CELL_VARS; v++) {
        sites[v] = &t->site[v];
        vars[v] = c->var[v];
    }
    sites[PM_CELL_VARS] = &t->peer_msgs;
    vars[PM_CELL_VARS] = pm_vars.peer_msgs;
    sites[PM_CELL_VARS + 1] = &t->peer_bytes;
    vars[PM_CELL_VARS + 1] = pm_vars.peer_bytes;
    sites[PM_CELL_VARS + 2] = &t->requests;
    vars[PM_CELL_VARS + 2] = pm_vars.requests;
    for (int k = 0; k < N; k++) {
        cells[k] = pvar_site_cell(sites[k], vars[k], 0, PVAR_SITE_INT);
        /* Every site filled, for its variable, from one thread record. */
        if (cells[k] == NULL || sites[k]->cell != cells[k] || sites[k]->var != vars[k] ||
            sites[k]->owner != sites[0]->owner ||
            sites[k]->incarnation != sites[0]->incarnation)
            return 0;
    }
    if (t->peer_msgs.count != t->peer_bytes.count)
        return 0;
    for (int v = 0; v < PM_CELL_VARS; v++)
        t->cell[v] = cells[v];
    t->peer_msgs_cell = cells[PM_CELL_VARS];
    t->peer_bytes_cell = cells[PM_CELL_VARS + 1];
    t->requests_cell = cells[PM_CELL_VARS + 2];
    t->peer_cells = t->peer_msgs.count;
    t->owner = sites[0]->owner;
    t->incarnation = sites[0]->incarnation;
    t->fast_comm = c;
    return PVAR_LOAD_RELAXED_(t->owner) == t->incarnation;
}
