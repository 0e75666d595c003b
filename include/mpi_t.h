/*
 * mpi_t.h — the MPI tool information interface (MPI_T) of libpvar.
 *
 * Every MPI 4.1 MPI_T function for init/finalize, enumerations, control
 * variables, performance variables and categories, each also exported
 * under its PMPI_T_ name (profiling interface, MPI 3.1 §14.3.10), plus the
 * MPI 4 event and source functions (events, sources, callbacks at the four
 * safety levels, dropped and free callbacks; docs/events.md).
 * Constants have the values of the MPI 5.0 standard ABI.
 *
 * Link with -lpvar (see `pkg-config --cflags --libs pvar`).
 * Guide: docs/c-interface.md.
 *
 * Coexisting with an MPI library's mpi.h (include mpi.h FIRST):
 *
 *   - no mpi.h seen (MPI_VERSION undefined): this header is standalone and
 *     declares the shared MPI types and constants it needs (MPI_Datatype,
 *     the seven datatypes of Table 14.3, MPI_Count, MPI_Aint, MPI_Info,
 *     MPI_Comm with MPI_COMM_WORLD/SELF/NULL, thread levels, MPI_SUCCESS,
 *     MPI_ERR_ARG, MPI_ERR_LASTCODE, MPI_MAX_ERROR_STRING) and the whole
 *     MPI_T interface;
 *   - mpi.h seen (MPI_VERSION defined): the shared declarations AND the
 *     MPI_T declarations come from mpi.h; this header only adds the pvar
 *     extras (pvar_error_string, PVAR_ABI_* values). Which library's
 *     MPI_T_ symbols a program uses is then decided by link order;
 *   - PVAR_MPI_T_ONLY defined: declare the MPI_T interface but never the
 *     shared MPI declarations — for an mpi.h (or a header of your own) that
 *     provides MPI_Datatype, MPI_Info, MPI_Count, MPI_Aint and the thread
 *     levels but no MPI_T_ declarations. Its MPI_Datatype and MPI_Info must
 *     be pointer-sized (MPI 5.0 ABI, Open MPI) and MPI_Count 64-bit; this is
 *     checked at compile time.
 */
#ifndef PVAR_MPI_T_H
#define PVAR_MPI_T_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------
 * The MPI 5.0 ABI values, always available under pvar's own names (use
 * these to compare with what libpvar returns when an mpi.h with other
 * handle values is in scope).
 * --------------------------------------------------------------------- */
#define PVAR_ABI_MPI_DATATYPE_NULL      0x200
#define PVAR_ABI_MPI_COUNT              0x202
#define PVAR_ABI_MPI_INT                0x209
#define PVAR_ABI_MPI_UNSIGNED           0x20d
#define PVAR_ABI_MPI_UNSIGNED_LONG      0x20e
#define PVAR_ABI_MPI_UNSIGNED_LONG_LONG 0x20f
#define PVAR_ABI_MPI_DOUBLE             0x214
#define PVAR_ABI_MPI_CHAR               0x243
#define PVAR_ABI_MPI_COMM_NULL          0x100
#define PVAR_ABI_MPI_COMM_WORLD         0x101
#define PVAR_ABI_MPI_COMM_SELF          0x102
#define PVAR_ABI_MPI_INFO_NULL          0x130
/* MPI_ERR_ARG: what MPI_T_init_thread returns for a thread level that is
 * not one of the four (MPICH's code; MPICH's own mpi.h has another value). */
#define PVAR_ABI_MPI_ERR_ARG            13

/* ------------------------------------------------------------------------
 * Shared MPI declarations (only without an mpi.h).
 * --------------------------------------------------------------------- */
#if !defined(MPI_VERSION) && !defined(PVAR_MPI_T_ONLY)
#define PVAR_MPI_T_STANDALONE 1

typedef struct MPI_ABI_Datatype *MPI_Datatype;
typedef struct MPI_ABI_Comm *MPI_Comm;
typedef struct MPI_ABI_Info *MPI_Info;
typedef int64_t MPI_Count;
typedef intptr_t MPI_Aint;

/* The datatypes of Table 14.3 (and MPI_DATATYPE_NULL). */
#define MPI_DATATYPE_NULL      ((MPI_Datatype)PVAR_ABI_MPI_DATATYPE_NULL)
#define MPI_COUNT              ((MPI_Datatype)PVAR_ABI_MPI_COUNT)
#define MPI_INT                ((MPI_Datatype)PVAR_ABI_MPI_INT)
#define MPI_UNSIGNED           ((MPI_Datatype)PVAR_ABI_MPI_UNSIGNED)
#define MPI_UNSIGNED_LONG      ((MPI_Datatype)PVAR_ABI_MPI_UNSIGNED_LONG)
#define MPI_UNSIGNED_LONG_LONG ((MPI_Datatype)PVAR_ABI_MPI_UNSIGNED_LONG_LONG)
#define MPI_DOUBLE             ((MPI_Datatype)PVAR_ABI_MPI_DOUBLE)
#define MPI_CHAR               ((MPI_Datatype)PVAR_ABI_MPI_CHAR)

#define MPI_COMM_NULL  ((MPI_Comm)PVAR_ABI_MPI_COMM_NULL)
#define MPI_COMM_WORLD ((MPI_Comm)PVAR_ABI_MPI_COMM_WORLD)
#define MPI_COMM_SELF  ((MPI_Comm)PVAR_ABI_MPI_COMM_SELF)
#define MPI_INFO_NULL  ((MPI_Info)PVAR_ABI_MPI_INFO_NULL)

#define MPI_THREAD_SINGLE     0
#define MPI_THREAD_FUNNELED   1024
#define MPI_THREAD_SERIALIZED 2048
#define MPI_THREAD_MULTIPLE   4096

#define MPI_SUCCESS          0
#define MPI_ERR_ARG          PVAR_ABI_MPI_ERR_ARG
#define MPI_ERR_LASTCODE     16383
#define MPI_MAX_ERROR_STRING 512

#endif /* shared MPI declarations */

/* ------------------------------------------------------------------------
 * The MPI_T interface.
 * --------------------------------------------------------------------- */
#if !defined(MPI_VERSION) || defined(PVAR_MPI_T_ONLY)
#define PVAR_MPI_T_DECLARED 1

/* libpvar writes MPI_Datatype and MPI_Info values as pointer-sized handles
 * and MPI_Count as int64_t: an mpi.h with int handles (MPICH) cannot be
 * used with PVAR_MPI_T_ONLY. Fail at compile time rather than at run time. */
typedef char pvar_check_datatype_is_pointer_sized[sizeof(MPI_Datatype) == sizeof(void *) ? 1 : -1];
typedef char pvar_check_info_is_pointer_sized[sizeof(MPI_Info) == sizeof(void *) ? 1 : -1];
typedef char pvar_check_count_is_64_bit[sizeof(MPI_Count) == 8 ? 1 : -1];

/* Opaque handles: pointers to distinct incomplete structs. libpvar never
 * dereferences them; a freed, stale, foreign or made-up value is detected
 * and gets an error code. */
typedef struct MPI_ABI_T_enum *MPI_T_enum;
typedef struct MPI_ABI_T_cvar_handle *MPI_T_cvar_handle;
typedef struct MPI_ABI_T_pvar_handle *MPI_T_pvar_handle;
typedef struct MPI_ABI_T_pvar_session *MPI_T_pvar_session;
typedef struct MPI_ABI_T_event_registration *MPI_T_event_registration;
typedef struct MPI_ABI_T_event_instance *MPI_T_event_instance;

#define MPI_T_ENUM_NULL         ((MPI_T_enum)0)
#define MPI_T_CVAR_HANDLE_NULL  ((MPI_T_cvar_handle)0)
#define MPI_T_PVAR_SESSION_NULL ((MPI_T_pvar_session)0)
#define MPI_T_PVAR_HANDLE_NULL  ((MPI_T_pvar_handle)0)
/* Only for MPI_T_pvar_start, _stop and _reset. */
#define MPI_T_PVAR_ALL_HANDLES  ((MPI_T_pvar_handle)1)

/* Return codes (Table 14.5); MPI_SUCCESS < MPI_T_ERR_* <= MPI_ERR_LASTCODE. */
#define MPI_T_ERR_CANNOT_INIT       1001
#define MPI_T_ERR_NOT_ACCESSIBLE    1002
#define MPI_T_ERR_NOT_INITIALIZED   1003
#define MPI_T_ERR_NOT_SUPPORTED     1004
#define MPI_T_ERR_MEMORY            1005
#define MPI_T_ERR_INVALID           1006
#define MPI_T_ERR_INVALID_INDEX     1007
#define MPI_T_ERR_INVALID_ITEM      1008 /* deprecated; never returned */
#define MPI_T_ERR_INVALID_SESSION   1009
#define MPI_T_ERR_INVALID_HANDLE    1010
#define MPI_T_ERR_INVALID_NAME      1011
#define MPI_T_ERR_OUT_OF_HANDLES    1012
#define MPI_T_ERR_OUT_OF_SESSIONS   1013
#define MPI_T_ERR_CVAR_SET_NOT_NOW  1014
#define MPI_T_ERR_CVAR_SET_NEVER    1015
#define MPI_T_ERR_PVAR_NO_WRITE     1016
#define MPI_T_ERR_PVAR_NO_STARTSTOP 1017
#define MPI_T_ERR_PVAR_NO_ATOMIC    1018

/* Verbosity (Table 14.1), monotonic. */
#define MPI_T_VERBOSITY_USER_BASIC    0x09
#define MPI_T_VERBOSITY_USER_DETAIL   0x0a
#define MPI_T_VERBOSITY_USER_ALL      0x0c
#define MPI_T_VERBOSITY_TUNER_BASIC   0x11
#define MPI_T_VERBOSITY_TUNER_DETAIL  0x12
#define MPI_T_VERBOSITY_TUNER_ALL     0x14
#define MPI_T_VERBOSITY_MPIDEV_BASIC  0x21
#define MPI_T_VERBOSITY_MPIDEV_DETAIL 0x22
#define MPI_T_VERBOSITY_MPIDEV_ALL    0x24

/* Binding (Table 14.2). */
#define MPI_T_BIND_NO_OBJECT      1
#define MPI_T_BIND_MPI_COMM       2
#define MPI_T_BIND_MPI_DATATYPE   3
#define MPI_T_BIND_MPI_ERRHANDLER 4
#define MPI_T_BIND_MPI_FILE       5
#define MPI_T_BIND_MPI_GROUP      6
#define MPI_T_BIND_MPI_OP         7
#define MPI_T_BIND_MPI_REQUEST    8
#define MPI_T_BIND_MPI_WIN        9
#define MPI_T_BIND_MPI_MESSAGE    10
#define MPI_T_BIND_MPI_INFO       11
#define MPI_T_BIND_MPI_SESSION    12

/* Control variable scopes. */
#define MPI_T_SCOPE_CONSTANT 1
#define MPI_T_SCOPE_READONLY 2
#define MPI_T_SCOPE_LOCAL    3
#define MPI_T_SCOPE_GROUP    4
#define MPI_T_SCOPE_GROUP_EQ 5
#define MPI_T_SCOPE_ALL      6
#define MPI_T_SCOPE_ALL_EQ   7

/* Performance variable classes. */
#define MPI_T_PVAR_CLASS_STATE         1
#define MPI_T_PVAR_CLASS_LEVEL         2
#define MPI_T_PVAR_CLASS_SIZE          3
#define MPI_T_PVAR_CLASS_PERCENTAGE    4
#define MPI_T_PVAR_CLASS_HIGHWATERMARK 5
#define MPI_T_PVAR_CLASS_LOWWATERMARK  6
#define MPI_T_PVAR_CLASS_COUNTER       7
#define MPI_T_PVAR_CLASS_AGGREGATE     8
#define MPI_T_PVAR_CLASS_TIMER         9
#define MPI_T_PVAR_CLASS_GENERIC       10

/* Events (MPI 4): callback safety and source ordering. */
typedef enum MPI_T_cb_safety {
    MPI_T_CB_REQUIRE_NONE = 0x00,
    MPI_T_CB_REQUIRE_MPI_RESTRICTED = 0x03,
    MPI_T_CB_REQUIRE_THREAD_SAFE = 0x0F,
    MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE = 0x3F
} MPI_T_cb_safety;

typedef enum MPI_T_source_order {
    MPI_T_SOURCE_ORDERED = 1,
    MPI_T_SOURCE_UNORDERED = 2
} MPI_T_source_order;

typedef void MPI_T_event_cb_function(MPI_T_event_instance event_instance,
    MPI_T_event_registration event_registration, MPI_T_cb_safety cb_safety,
    void *user_data);
typedef void MPI_T_event_free_cb_function(
    MPI_T_event_registration event_registration, MPI_T_cb_safety cb_safety,
    void *user_data);
typedef void MPI_T_event_dropped_cb_function(MPI_Count count,
    MPI_T_event_registration event_registration, int source_index,
    MPI_T_cb_safety cb_safety, void *user_data);

/*
 * Behaviour common to every function below:
 *   - before MPI_T_init_thread, or after the last MPI_T_finalize, every
 *     function except MPI_T_init_thread returns MPI_T_ERR_NOT_INITIALIZED;
 *   - strings follow §14.3.3 (at most n-1 chars plus NUL; *len is always
 *     set to strlen+1; NULL buffer or *len == 0 only returns the length;
 *     NULL len ignores the buffer);
 *   - every OUT pointer of the *_get_info calls may be NULL (ignored);
 *     other NULL OUT pointers give MPI_T_ERR_INVALID;
 *   - values are fitted to their class when read: an MPI_UNSIGNED value
 *     past UINT_MAX saturates for LEVEL, SIZE and the watermarks (which
 *     must not overflow) and wraps for COUNTER, AGGREGATE, TIMER and
 *     GENERIC; PERCENTAGE reads lie in [0, 1]; MPI_DOUBLE LEVEL, SIZE and
 *     watermark reads are never negative;
 *   - MPI_T_init_thread provides the level required (any of the four; any
 *     other value is MPI_ERR_ARG, as in MPICH); all functions are
 *     thread-safe; start/stop/read/write/reset/readreset are also
 *     async-signal-safe for handles of any size and datatype (no lock, no
 *     allocation: values go through a stack buffer, 256 elements at a
 *     time; docs/c-interface.md, docs/signal-safety.md).
 */
/* Initialization and finalization (14.3.4) */
int MPI_T_init_thread(int required, int *provided);
int PMPI_T_init_thread(int required, int *provided);
int MPI_T_finalize(void);
int PMPI_T_finalize(void);

/* Enumerations (14.3.5) */
int MPI_T_enum_get_info(MPI_T_enum enumtype, int *num, char *name, int *name_len);
int PMPI_T_enum_get_info(MPI_T_enum enumtype, int *num, char *name, int *name_len);
int MPI_T_enum_get_item(MPI_T_enum enumtype, int index, int *value, char *name, int *name_len);
int PMPI_T_enum_get_item(MPI_T_enum enumtype, int index, int *value, char *name, int *name_len);

/* Control variables (14.3.6) */
int MPI_T_cvar_get_num(int *num_cvar);
int PMPI_T_cvar_get_num(int *num_cvar);
int MPI_T_cvar_get_info(int cvar_index, char *name, int *name_len, int *verbosity,
    MPI_Datatype *datatype, MPI_T_enum *enumtype, char *desc, int *desc_len,
    int *bind, int *scope);
int PMPI_T_cvar_get_info(int cvar_index, char *name, int *name_len, int *verbosity,
    MPI_Datatype *datatype, MPI_T_enum *enumtype, char *desc, int *desc_len,
    int *bind, int *scope);
int MPI_T_cvar_get_index(const char *name, int *cvar_index);
int PMPI_T_cvar_get_index(const char *name, int *cvar_index);
int MPI_T_cvar_handle_alloc(int cvar_index, void *obj_handle, MPI_T_cvar_handle *handle,
    int *count);
int PMPI_T_cvar_handle_alloc(int cvar_index, void *obj_handle, MPI_T_cvar_handle *handle,
    int *count);
int MPI_T_cvar_handle_free(MPI_T_cvar_handle *handle);
int PMPI_T_cvar_handle_free(MPI_T_cvar_handle *handle);
int MPI_T_cvar_read(MPI_T_cvar_handle handle, void *buf);
int PMPI_T_cvar_read(MPI_T_cvar_handle handle, void *buf);
int MPI_T_cvar_write(MPI_T_cvar_handle handle, const void *buf);
int PMPI_T_cvar_write(MPI_T_cvar_handle handle, const void *buf);

/* Performance variables (14.3.7) */
int MPI_T_pvar_get_num(int *num_pvar);
int PMPI_T_pvar_get_num(int *num_pvar);
/* *atomic = 1: MPI_T_pvar_readreset is atomic PER ELEMENT (each element's
 * value and its reset come from one read, so no update is lost or counted
 * twice); the elements of a handle with count > 1 are not read and reset
 * as one, so an update may land after element 0's reset and before element
 * 1's. */
int MPI_T_pvar_get_info(int pvar_index, char *name, int *name_len, int *verbosity,
    int *var_class, MPI_Datatype *datatype, MPI_T_enum *enumtype, char *desc,
    int *desc_len, int *bind, int *readonly, int *continuous, int *atomic);
int PMPI_T_pvar_get_info(int pvar_index, char *name, int *name_len, int *verbosity,
    int *var_class, MPI_Datatype *datatype, MPI_T_enum *enumtype, char *desc,
    int *desc_len, int *bind, int *readonly, int *continuous, int *atomic);
int MPI_T_pvar_get_index(const char *name, int var_class, int *pvar_index);
int PMPI_T_pvar_get_index(const char *name, int var_class, int *pvar_index);
int MPI_T_pvar_session_create(MPI_T_pvar_session *session);
int PMPI_T_pvar_session_create(MPI_T_pvar_session *session);
int MPI_T_pvar_session_free(MPI_T_pvar_session *session);
int PMPI_T_pvar_session_free(MPI_T_pvar_session *session);
int MPI_T_pvar_handle_alloc(MPI_T_pvar_session session, int pvar_index, void *obj_handle,
    MPI_T_pvar_handle *handle, int *count);
int PMPI_T_pvar_handle_alloc(MPI_T_pvar_session session, int pvar_index, void *obj_handle,
    MPI_T_pvar_handle *handle, int *count);
int MPI_T_pvar_handle_free(MPI_T_pvar_session session, MPI_T_pvar_handle *handle);
int PMPI_T_pvar_handle_free(MPI_T_pvar_session session, MPI_T_pvar_handle *handle);
int MPI_T_pvar_start(MPI_T_pvar_session session, MPI_T_pvar_handle handle);
int PMPI_T_pvar_start(MPI_T_pvar_session session, MPI_T_pvar_handle handle);
int MPI_T_pvar_stop(MPI_T_pvar_session session, MPI_T_pvar_handle handle);
int PMPI_T_pvar_stop(MPI_T_pvar_session session, MPI_T_pvar_handle handle);
int MPI_T_pvar_read(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf);
int PMPI_T_pvar_read(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf);
int MPI_T_pvar_write(MPI_T_pvar_session session, MPI_T_pvar_handle handle, const void *buf);
int PMPI_T_pvar_write(MPI_T_pvar_session session, MPI_T_pvar_handle handle, const void *buf);
int MPI_T_pvar_reset(MPI_T_pvar_session session, MPI_T_pvar_handle handle);
int PMPI_T_pvar_reset(MPI_T_pvar_session session, MPI_T_pvar_handle handle);
/* Atomic per element, not per handle (see MPI_T_pvar_get_info). */
int MPI_T_pvar_readreset(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf);
int PMPI_T_pvar_readreset(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf);

/* Categories (14.3.8) */
int MPI_T_category_get_num(int *num_cat);
int PMPI_T_category_get_num(int *num_cat);
int MPI_T_category_get_info(int cat_index, char *name, int *name_len, char *desc,
    int *desc_len, int *num_cvars, int *num_pvars, int *num_categories);
int PMPI_T_category_get_info(int cat_index, char *name, int *name_len, char *desc,
    int *desc_len, int *num_cvars, int *num_pvars, int *num_categories);
int MPI_T_category_get_index(const char *name, int *cat_index);
int PMPI_T_category_get_index(const char *name, int *cat_index);
int MPI_T_category_get_cvars(int cat_index, int len, int indices[]);
int PMPI_T_category_get_cvars(int cat_index, int len, int indices[]);
int MPI_T_category_get_pvars(int cat_index, int len, int indices[]);
int PMPI_T_category_get_pvars(int cat_index, int len, int indices[]);
int MPI_T_category_get_categories(int cat_index, int len, int indices[]);
int PMPI_T_category_get_categories(int cat_index, int len, int indices[]);
/* The change stamp: a change and its stamp become visible at once, so two
 * calls that return the same value saw the same categories. The stamp is
 * counted in 64 bits and returned modulo 2^31: non-negative, it wraps to 0
 * after INT_MAX (equal values then also follow a multiple of 2^31 changes). */
int MPI_T_category_changed(int *update_number);
int PMPI_T_category_changed(int *update_number);
int MPI_T_category_get_num_events(int cat_index, int *num_events);
int PMPI_T_category_get_num_events(int cat_index, int *num_events);
int MPI_T_category_get_events(int cat_index, int len, int indices[]);
int PMPI_T_category_get_events(int cat_index, int len, int indices[]);

/* Events and sources (MPI 4). An MPI_T_event_registration is a
 * generation-checked key (stale or foreign values: MPI_T_ERR_INVALID_HANDLE);
 * an MPI_T_event_instance is valid only inside the callback that received it
 * and on its thread (anything else: MPI_T_ERR_INVALID_HANDLE). Info hints are
 * ignored; the *_get_info functions return MPI_INFO_NULL (libpvar has no
 * MPI_Info to make; inside an MPI job, the interposer's merged MPI_T returns
 * a new, empty MPI_Info of the library from event_handle_get_info and
 * event_callback_get_info while MPI is initialised: free it with
 * MPI_Info_free; docs/mpi.md). An invalid
 * cb_safety value is MPI_T_ERR_INVALID; so is a callback_set/get_info at a
 * level with no callback. event_read/copy/get_timestamp/get_source and
 * source_get_timestamp (source 0) are async-signal-safe. */
int MPI_T_source_get_num(int *num_sources);
int PMPI_T_source_get_num(int *num_sources);
int MPI_T_source_get_info(int source_index, char *name, int *name_len, char *desc,
    int *desc_len, MPI_T_source_order *ordering, MPI_Count *ticks_per_second,
    MPI_Count *max_ticks, MPI_Info *info);
int PMPI_T_source_get_info(int source_index, char *name, int *name_len, char *desc,
    int *desc_len, MPI_T_source_order *ordering, MPI_Count *ticks_per_second,
    MPI_Count *max_ticks, MPI_Info *info);
int MPI_T_source_get_timestamp(int source_index, MPI_Count *timestamp);
int PMPI_T_source_get_timestamp(int source_index, MPI_Count *timestamp);
int MPI_T_event_get_num(int *num_events);
int PMPI_T_event_get_num(int *num_events);
/* *num_elements: on return the element count; on entry the capacity of the
 * arrays, read only when one of them is not NULL (negative: INVALID). With
 * both arrays NULL it may be left uninitialised. */
int MPI_T_event_get_info(int event_index, char *name, int *name_len, int *verbosity,
    MPI_Datatype array_of_datatypes[], MPI_Aint array_of_displacements[],
    int *num_elements, MPI_T_enum *enumtype, MPI_Info *info, char *desc,
    int *desc_len, int *bind);
int PMPI_T_event_get_info(int event_index, char *name, int *name_len, int *verbosity,
    MPI_Datatype array_of_datatypes[], MPI_Aint array_of_displacements[],
    int *num_elements, MPI_T_enum *enumtype, MPI_Info *info, char *desc,
    int *desc_len, int *bind);
int MPI_T_event_get_index(const char *name, int *event_index);
int PMPI_T_event_get_index(const char *name, int *event_index);
int MPI_T_event_handle_alloc(int event_index, void *obj_handle, MPI_Info info,
    MPI_T_event_registration *event_registration);
int PMPI_T_event_handle_alloc(int event_index, void *obj_handle, MPI_Info info,
    MPI_T_event_registration *event_registration);
int MPI_T_event_handle_set_info(MPI_T_event_registration event_registration, MPI_Info info);
int PMPI_T_event_handle_set_info(MPI_T_event_registration event_registration, MPI_Info info);
int MPI_T_event_handle_get_info(MPI_T_event_registration event_registration,
    MPI_Info *info_used);
int PMPI_T_event_handle_get_info(MPI_T_event_registration event_registration,
    MPI_Info *info_used);
int MPI_T_event_register_callback(MPI_T_event_registration event_registration,
    MPI_T_cb_safety cb_safety, MPI_Info info, void *user_data,
    MPI_T_event_cb_function *event_cb_function);
int PMPI_T_event_register_callback(MPI_T_event_registration event_registration,
    MPI_T_cb_safety cb_safety, MPI_Info info, void *user_data,
    MPI_T_event_cb_function *event_cb_function);
int MPI_T_event_callback_set_info(MPI_T_event_registration event_registration,
    MPI_T_cb_safety cb_safety, MPI_Info info);
int PMPI_T_event_callback_set_info(MPI_T_event_registration event_registration,
    MPI_T_cb_safety cb_safety, MPI_Info info);
int MPI_T_event_callback_get_info(MPI_T_event_registration event_registration,
    MPI_T_cb_safety cb_safety, MPI_Info *info_used);
int PMPI_T_event_callback_get_info(MPI_T_event_registration event_registration,
    MPI_T_cb_safety cb_safety, MPI_Info *info_used);
int MPI_T_event_handle_free(MPI_T_event_registration event_registration, void *user_data,
    MPI_T_event_free_cb_function *free_cb_function);
int PMPI_T_event_handle_free(MPI_T_event_registration event_registration, void *user_data,
    MPI_T_event_free_cb_function *free_cb_function);
/* The dropped handler hears the losses since it was set or last called:
 * before the registration's next delivery, with that delivery's cb_safety
 * and its callback's user_data. A registration with a handler and no
 * callback loses every event raised for it; its handler hears of them at
 * the first point where nothing is required of a callback (the raise
 * itself, else pvar_event_deliver(MPI_T_CB_REQUIRE_NONE)), told
 * MPI_T_CB_REQUIRE_NONE, with user_data NULL. MPI_T_event_handle_free
 * called outside callbacks reports what is left first. docs/events.md. */
int MPI_T_event_set_dropped_handler(MPI_T_event_registration event_registration,
    MPI_T_event_dropped_cb_function *dropped_cb_function);
int PMPI_T_event_set_dropped_handler(MPI_T_event_registration event_registration,
    MPI_T_event_dropped_cb_function *dropped_cb_function);
int MPI_T_event_read(MPI_T_event_instance event_instance, int element_index,
    void *buffer);
int PMPI_T_event_read(MPI_T_event_instance event_instance, int element_index,
    void *buffer);
int MPI_T_event_copy(MPI_T_event_instance event_instance, void *buffer);
int PMPI_T_event_copy(MPI_T_event_instance event_instance, void *buffer);
int MPI_T_event_get_timestamp(MPI_T_event_instance event_instance,
    MPI_Count *event_timestamp);
int PMPI_T_event_get_timestamp(MPI_T_event_instance event_instance,
    MPI_Count *event_timestamp);
int MPI_T_event_get_source(MPI_T_event_instance event_instance, int *source_index);
int PMPI_T_event_get_source(MPI_T_event_instance event_instance, int *source_index);
#endif /* MPI_T interface */

/* ------------------------------------------------------------------------
 * pvar extras (always declared).
 * --------------------------------------------------------------------- */

/* A readable, static, NUL-terminated string for every MPI_T return code,
 * e.g. "MPI_T_ERR_INVALID_HANDLE: the handle is invalid"; "unknown error
 * code" for others. Never NULL; callable at any time, async-signal-safe. */
const char *pvar_error_string(int code);

#ifdef __cplusplus
}
#endif

#endif /* PVAR_MPI_T_H */
