/*
 * library.c — the MPI library's MPI_T ABI, as its mpi.h describes it, for
 * the merged MPI_T of libpvar_mpi (mpi/src/mpit/, docs/mpi.md "One MPI_T
 * for the job").
 *
 * The Rust half is compiled once, without any mpi.h: it knows pvar's own
 * constants (the MPI 5.0 ABI values of include/mpi_t.h) but not the
 * library's. This file is compiled per MPI library with its compiler
 * wrapper and hands Rust one read-only table: the library's handle sizes,
 * the values of its datatypes and MPI_T constants, and pointers to its
 * PMPI_T_* functions. The layout is mirrored by `LibraryAbi` in
 * mpi/src/library.rs; `version` and `size` are checked there before
 * anything else is read.
 *
 * Arrays of constants are in the order of the MPI 5.0 ABI values they
 * translate (element k of `err` is the library's code for pvar's 1001 + k,
 * and so on), so Rust translates with one index. Handle values are stored
 * as their bits zero-extended to 64 (MPICH's handles are 4-byte ints,
 * Open MPI's pointers).
 */
#include <mpi.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Bump together with LIBRARY_VERSION in mpi/src/library.rs whenever the
 * layout below changes. */
#define PVAR_MPI_LIBRARY_VERSION 2

/* The Rust half writes and reads these as 64-bit values. */
_Static_assert(sizeof(MPI_Count) == 8, "MPI_Count must be 64-bit");
_Static_assert(sizeof(MPI_Aint) == 8, "MPI_Aint must be 64-bit");
_Static_assert(sizeof(void *) == 8, "64-bit targets only");
_Static_assert(sizeof(MPI_T_pvar_handle) == sizeof(void *), "pointer-sized MPI_T handles");
_Static_assert(sizeof(MPI_T_pvar_session) == sizeof(void *), "pointer-sized MPI_T handles");
_Static_assert(sizeof(MPI_T_cvar_handle) == sizeof(void *), "pointer-sized MPI_T handles");
_Static_assert(sizeof(MPI_T_enum) == sizeof(void *), "pointer-sized MPI_T handles");

struct pvar_mpi_library {
    uint32_t version; /* PVAR_MPI_LIBRARY_VERSION */
    uint32_t size;    /* sizeof(struct pvar_mpi_library) */
    int32_t mpi_version;
    int32_t mpi_subversion;
    const char *name; /* "MPICH", "Open MPI" or "MPI" */

    int32_t success; /* MPI_SUCCESS */
    /* MPI_T_ERR_* for pvar's 1001..1018: CANNOT_INIT, NOT_ACCESSIBLE,
     * NOT_INITIALIZED, NOT_SUPPORTED, MEMORY, INVALID, INVALID_INDEX,
     * INVALID_ITEM, INVALID_SESSION, INVALID_HANDLE, INVALID_NAME,
     * OUT_OF_HANDLES, OUT_OF_SESSIONS, CVAR_SET_NOT_NOW, CVAR_SET_NEVER,
     * PVAR_NO_WRITE, PVAR_NO_STARTSTOP, PVAR_NO_ATOMIC. A code the library
     * does not define is its MPI_T_ERR_INVALID. */
    int32_t err[18];
    /* MPI_T_VERBOSITY_{USER,TUNER,MPIDEV}_{BASIC,DETAIL,ALL} */
    int32_t verbosity[9];
    /* MPI_T_BIND_NO_OBJECT .. MPI_T_BIND_MPI_SESSION (pvar's 1..12) */
    int32_t bind[12];
    /* MPI_T_SCOPE_CONSTANT .. MPI_T_SCOPE_ALL_EQ (pvar's 1..7) */
    int32_t scope[7];
    /* MPI_T_PVAR_CLASS_STATE .. MPI_T_PVAR_CLASS_GENERIC (pvar's 1..10) */
    int32_t pvar_class[10];
    /* MPI_THREAD_SINGLE, _FUNNELED, _SERIALIZED, _MULTIPLE */
    int32_t thread[4];
    /* MPI_T_CB_REQUIRE_NONE, _MPI_RESTRICTED, _THREAD_SAFE,
     * _ASYNC_SIGNAL_SAFE; MPI_T_SOURCE_ORDERED, _UNORDERED (MPI 4; pvar's
     * values for an MPI 3 library, whose tools cannot name them) */
    int32_t cb_safety[4];
    int32_t source_order[2];

    /* sizeof the handle type of each binding, indexed by pvar's bind value
     * (object_size[2] = sizeof(MPI_Comm)); [0] unused. */
    uint32_t object_size[13];
    uint32_t datatype_size; /* sizeof(MPI_Datatype) */
    uint32_t info_size;     /* sizeof(MPI_Info) */
    /* MPI_INT, MPI_UNSIGNED, MPI_UNSIGNED_LONG, MPI_UNSIGNED_LONG_LONG,
     * MPI_COUNT, MPI_CHAR, MPI_DOUBLE */
    uint64_t datatype[7];
    uint64_t enum_null;        /* MPI_T_ENUM_NULL */
    uint64_t pvar_all_handles; /* MPI_T_PVAR_ALL_HANDLES */
    uint64_t info_null;        /* MPI_INFO_NULL */

    /* The library's MPI_T (MPI 3.1). */
    int (*init_thread)(int, int *);
    int (*finalize)(void);
    int (*enum_get_info)(MPI_T_enum, int *, char *, int *);
    int (*enum_get_item)(MPI_T_enum, int, int *, char *, int *);
    int (*cvar_get_num)(int *);
    int (*cvar_get_info)(int, char *, int *, int *, MPI_Datatype *, MPI_T_enum *, char *, int *,
                         int *, int *);
    int (*cvar_get_index)(const char *, int *);
    int (*cvar_handle_alloc)(int, void *, MPI_T_cvar_handle *, int *);
    int (*cvar_handle_free)(MPI_T_cvar_handle *);
    int (*cvar_read)(MPI_T_cvar_handle, void *);
    int (*cvar_write)(MPI_T_cvar_handle, const void *);
    int (*pvar_get_num)(int *);
    int (*pvar_get_info)(int, char *, int *, int *, int *, MPI_Datatype *, MPI_T_enum *, char *,
                         int *, int *, int *, int *, int *);
    int (*pvar_get_index)(const char *, int, int *);
    int (*pvar_session_create)(MPI_T_pvar_session *);
    int (*pvar_session_free)(MPI_T_pvar_session *);
    int (*pvar_handle_alloc)(MPI_T_pvar_session, int, void *, MPI_T_pvar_handle *, int *);
    int (*pvar_handle_free)(MPI_T_pvar_session, MPI_T_pvar_handle *);
    int (*pvar_start)(MPI_T_pvar_session, MPI_T_pvar_handle);
    int (*pvar_stop)(MPI_T_pvar_session, MPI_T_pvar_handle);
    int (*pvar_read)(MPI_T_pvar_session, MPI_T_pvar_handle, void *);
    int (*pvar_write)(MPI_T_pvar_session, MPI_T_pvar_handle, const void *);
    int (*pvar_reset)(MPI_T_pvar_session, MPI_T_pvar_handle);
    int (*pvar_readreset)(MPI_T_pvar_session, MPI_T_pvar_handle, void *);
    int (*category_get_num)(int *);
    int (*category_get_info)(int, char *, int *, char *, int *, int *, int *, int *);
    int (*category_get_index)(const char *, int *);
    int (*category_get_cvars)(int, int, int[]);
    int (*category_get_pvars)(int, int, int[]);
    int (*category_get_categories)(int, int, int[]);
    int (*category_changed)(int *);
    /* MPI 4 (NULL for an MPI 3 library). The library's own events are not
     * forwarded: event_get_num tells the merged layer how many it hides
     * (one note on stderr if any); the other three are not called. */
    int (*category_get_num_events)(int, int *);
    int (*category_get_events)(int, int, int[]);
    int (*event_get_num)(int *);
    int (*source_get_num)(int *);
    /* The info objects MPI_T_event_handle_get_info / _callback_get_info
     * return for pvar's events: a new object while MPI is initialised. */
    int (*info_create)(MPI_Info *);
    int (*initialized)(int *);
    int (*finalized)(int *);
};

/* The bits of a handle value, zero-extended to 64. */
static uint64_t bits(const void *p, size_t n)
{
    if (n == sizeof(uint32_t)) {
        uint32_t v;
        memcpy(&v, p, sizeof v);
        return v;
    }
    if (n == sizeof(uint64_t)) {
        uint64_t v;
        memcpy(&v, p, sizeof v);
        return v;
    }
    return 0;
}
#define SET_BITS(dst, type, value)                      \
    do {                                                \
        type set_bits_v_ = (value);                     \
        (dst) = bits(&set_bits_v_, sizeof set_bits_v_); \
    } while (0)

/* Error codes an older library lacks become its generic MPI_T_ERR_INVALID. */
#ifndef MPI_T_ERR_NOT_ACCESSIBLE
#define PVAR_LIB_ERR_NOT_ACCESSIBLE MPI_T_ERR_INVALID
#else
#define PVAR_LIB_ERR_NOT_ACCESSIBLE MPI_T_ERR_NOT_ACCESSIBLE
#endif
#ifndef MPI_T_ERR_NOT_SUPPORTED
#define PVAR_LIB_ERR_NOT_SUPPORTED MPI_T_ERR_INVALID
#else
#define PVAR_LIB_ERR_NOT_SUPPORTED MPI_T_ERR_NOT_SUPPORTED
#endif

static struct pvar_mpi_library lib;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void fill(void)
{
    struct pvar_mpi_library *l = &lib;
    memset(l, 0, sizeof *l);
    l->version = PVAR_MPI_LIBRARY_VERSION;
    l->size = (uint32_t)sizeof *l;
    l->mpi_version = MPI_VERSION;
    l->mpi_subversion = MPI_SUBVERSION;
#if defined(MPICH_VERSION)
    l->name = "MPICH";
#elif defined(OPEN_MPI)
    l->name = "Open MPI";
#else
    l->name = "MPI";
#endif

    l->success = MPI_SUCCESS;
    const int32_t err[18] = {
        MPI_T_ERR_CANNOT_INIT,
        PVAR_LIB_ERR_NOT_ACCESSIBLE,
        MPI_T_ERR_NOT_INITIALIZED,
        PVAR_LIB_ERR_NOT_SUPPORTED,
        MPI_T_ERR_MEMORY,
        MPI_T_ERR_INVALID,
        MPI_T_ERR_INVALID_INDEX,
        MPI_T_ERR_INVALID_ITEM,
        MPI_T_ERR_INVALID_SESSION,
        MPI_T_ERR_INVALID_HANDLE,
        MPI_T_ERR_INVALID_NAME,
        MPI_T_ERR_OUT_OF_HANDLES,
        MPI_T_ERR_OUT_OF_SESSIONS,
        MPI_T_ERR_CVAR_SET_NOT_NOW,
        MPI_T_ERR_CVAR_SET_NEVER,
        MPI_T_ERR_PVAR_NO_WRITE,
        MPI_T_ERR_PVAR_NO_STARTSTOP,
        MPI_T_ERR_PVAR_NO_ATOMIC,
    };
    memcpy(l->err, err, sizeof err);
    const int32_t verbosity[9] = {
        MPI_T_VERBOSITY_USER_BASIC,
        MPI_T_VERBOSITY_USER_DETAIL,
        MPI_T_VERBOSITY_USER_ALL,
        MPI_T_VERBOSITY_TUNER_BASIC,
        MPI_T_VERBOSITY_TUNER_DETAIL,
        MPI_T_VERBOSITY_TUNER_ALL,
        MPI_T_VERBOSITY_MPIDEV_BASIC,
        MPI_T_VERBOSITY_MPIDEV_DETAIL,
        MPI_T_VERBOSITY_MPIDEV_ALL,
    };
    memcpy(l->verbosity, verbosity, sizeof verbosity);
    /* MPI_T_BIND_MPI_SESSION is an enumerator (not testable with #ifdef)
     * that neither MPICH 4.0 nor Open MPI 4.1 defines: define
     * PVAR_HAVE_MPI_T_BIND_MPI_SESSION for a library that does. Otherwise
     * the value after MPI_T_BIND_MPI_INFO stands for it (the next
     * enumerator in both libraries' ordering). */
#ifdef PVAR_HAVE_MPI_T_BIND_MPI_SESSION
    const int32_t bind_session = MPI_T_BIND_MPI_SESSION;
#else
    const int32_t bind_session = MPI_T_BIND_MPI_INFO + 1;
#endif
    const int32_t bind[12] = {
        MPI_T_BIND_NO_OBJECT,
        MPI_T_BIND_MPI_COMM,
        MPI_T_BIND_MPI_DATATYPE,
        MPI_T_BIND_MPI_ERRHANDLER,
        MPI_T_BIND_MPI_FILE,
        MPI_T_BIND_MPI_GROUP,
        MPI_T_BIND_MPI_OP,
        MPI_T_BIND_MPI_REQUEST,
        MPI_T_BIND_MPI_WIN,
        MPI_T_BIND_MPI_MESSAGE,
        MPI_T_BIND_MPI_INFO,
        bind_session,
    };
    memcpy(l->bind, bind, sizeof bind);
    const int32_t scope[7] = {
        MPI_T_SCOPE_CONSTANT,
        MPI_T_SCOPE_READONLY,
        MPI_T_SCOPE_LOCAL,
        MPI_T_SCOPE_GROUP,
        MPI_T_SCOPE_GROUP_EQ,
        MPI_T_SCOPE_ALL,
        MPI_T_SCOPE_ALL_EQ,
    };
    memcpy(l->scope, scope, sizeof scope);
    const int32_t pvar_class[10] = {
        MPI_T_PVAR_CLASS_STATE,
        MPI_T_PVAR_CLASS_LEVEL,
        MPI_T_PVAR_CLASS_SIZE,
        MPI_T_PVAR_CLASS_PERCENTAGE,
        MPI_T_PVAR_CLASS_HIGHWATERMARK,
        MPI_T_PVAR_CLASS_LOWWATERMARK,
        MPI_T_PVAR_CLASS_COUNTER,
        MPI_T_PVAR_CLASS_AGGREGATE,
        MPI_T_PVAR_CLASS_TIMER,
        MPI_T_PVAR_CLASS_GENERIC,
    };
    memcpy(l->pvar_class, pvar_class, sizeof pvar_class);
    const int32_t thread[4] = {
        MPI_THREAD_SINGLE,
        MPI_THREAD_FUNNELED,
        MPI_THREAD_SERIALIZED,
        MPI_THREAD_MULTIPLE,
    };
    memcpy(l->thread, thread, sizeof thread);
#if MPI_VERSION >= 4
    const int32_t cb_safety[4] = {
        MPI_T_CB_REQUIRE_NONE,
        MPI_T_CB_REQUIRE_MPI_RESTRICTED,
        MPI_T_CB_REQUIRE_THREAD_SAFE,
        MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE,
    };
    const int32_t source_order[2] = {MPI_T_SOURCE_ORDERED, MPI_T_SOURCE_UNORDERED};
#else
    const int32_t cb_safety[4] = {0x00, 0x03, 0x0F, 0x3F};
    const int32_t source_order[2] = {1, 2};
#endif
    memcpy(l->cb_safety, cb_safety, sizeof cb_safety);
    memcpy(l->source_order, source_order, sizeof source_order);

    l->object_size[1] = 0; /* MPI_T_BIND_NO_OBJECT: no handle */
    l->object_size[2] = sizeof(MPI_Comm);
    l->object_size[3] = sizeof(MPI_Datatype);
    l->object_size[4] = sizeof(MPI_Errhandler);
    l->object_size[5] = sizeof(MPI_File);
    l->object_size[6] = sizeof(MPI_Group);
    l->object_size[7] = sizeof(MPI_Op);
    l->object_size[8] = sizeof(MPI_Request);
    l->object_size[9] = sizeof(MPI_Win);
    l->object_size[10] = sizeof(MPI_Message);
    l->object_size[11] = sizeof(MPI_Info);
#if MPI_VERSION >= 4
    l->object_size[12] = sizeof(MPI_Session);
#else
    l->object_size[12] = sizeof(void *);
#endif
    l->datatype_size = sizeof(MPI_Datatype);
    l->info_size = sizeof(MPI_Info);
    SET_BITS(l->datatype[0], MPI_Datatype, MPI_INT);
    SET_BITS(l->datatype[1], MPI_Datatype, MPI_UNSIGNED);
    SET_BITS(l->datatype[2], MPI_Datatype, MPI_UNSIGNED_LONG);
    SET_BITS(l->datatype[3], MPI_Datatype, MPI_UNSIGNED_LONG_LONG);
    SET_BITS(l->datatype[4], MPI_Datatype, MPI_COUNT);
    SET_BITS(l->datatype[5], MPI_Datatype, MPI_CHAR);
    SET_BITS(l->datatype[6], MPI_Datatype, MPI_DOUBLE);
    SET_BITS(l->enum_null, MPI_T_enum, MPI_T_ENUM_NULL);
    /* MPICH's is an extern const object, not a constant expression: hence
     * the run-time fill. */
    SET_BITS(l->pvar_all_handles, MPI_T_pvar_handle, MPI_T_PVAR_ALL_HANDLES);
    SET_BITS(l->info_null, MPI_Info, MPI_INFO_NULL);

    l->init_thread = PMPI_T_init_thread;
    l->finalize = PMPI_T_finalize;
    l->enum_get_info = PMPI_T_enum_get_info;
    l->enum_get_item = PMPI_T_enum_get_item;
    l->cvar_get_num = PMPI_T_cvar_get_num;
    l->cvar_get_info = PMPI_T_cvar_get_info;
    l->cvar_get_index = PMPI_T_cvar_get_index;
    l->cvar_handle_alloc = PMPI_T_cvar_handle_alloc;
    l->cvar_handle_free = PMPI_T_cvar_handle_free;
    l->cvar_read = PMPI_T_cvar_read;
    l->cvar_write = PMPI_T_cvar_write;
    l->pvar_get_num = PMPI_T_pvar_get_num;
    l->pvar_get_info = PMPI_T_pvar_get_info;
    l->pvar_get_index = PMPI_T_pvar_get_index;
    l->pvar_session_create = PMPI_T_pvar_session_create;
    l->pvar_session_free = PMPI_T_pvar_session_free;
    l->pvar_handle_alloc = PMPI_T_pvar_handle_alloc;
    l->pvar_handle_free = PMPI_T_pvar_handle_free;
    l->pvar_start = PMPI_T_pvar_start;
    l->pvar_stop = PMPI_T_pvar_stop;
    l->pvar_read = PMPI_T_pvar_read;
    l->pvar_write = PMPI_T_pvar_write;
    l->pvar_reset = PMPI_T_pvar_reset;
    l->pvar_readreset = PMPI_T_pvar_readreset;
    l->category_get_num = PMPI_T_category_get_num;
    l->category_get_info = PMPI_T_category_get_info;
    l->category_get_index = PMPI_T_category_get_index;
    l->category_get_cvars = PMPI_T_category_get_cvars;
    l->category_get_pvars = PMPI_T_category_get_pvars;
    l->category_get_categories = PMPI_T_category_get_categories;
    l->category_changed = PMPI_T_category_changed;
#if MPI_VERSION >= 4
    l->category_get_num_events = PMPI_T_category_get_num_events;
    l->category_get_events = PMPI_T_category_get_events;
    l->event_get_num = PMPI_T_event_get_num;
    l->source_get_num = PMPI_T_source_get_num;
#endif
    l->info_create = PMPI_Info_create;
    l->initialized = PMPI_Initialized;
    l->finalized = PMPI_Finalized;
}

/* The library's MPI_T ABI; filled on the first call (thread-safe), then a
 * constant. Called by the Rust half (mpi/src/library.rs). */
const struct pvar_mpi_library *pvar_mpi_library(void);

const struct pvar_mpi_library *pvar_mpi_library(void)
{
    pthread_once(&once, fill);
    return &lib;
}
