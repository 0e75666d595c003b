/*
 * The C interface in one file: a component registers a counter with
 * pvar.h and counts messages with PVAR_COUNTER_INC (a per-call-site,
 * per-thread cached cell); a tool finds the counter through mpi_t.h by
 * name, reads it through a session handle, and lists every performance
 * variable. Build it against an installed libpvar (docs/c-interface.md):
 *
 *   cc examples/c/hello_tool.c -o hello_tool $(pkg-config --cflags --libs pvar)
 */
#include <stdio.h>
#include <string.h>

#include "mpi_t.h"
#include "pvar.h"

/* The component: registers its variable once, then counts. */
static pvar_var msgs_sent;

static int component_init(void) {
    pvar_info info = {0};
    info.name = "hello_msgs_sent";
    info.description = "messages the hello component sent";
    info.var_class = PVAR_CLASS_COUNTER;
    if (pvar_register(&info, &msgs_sent) != 0) {
        fprintf(stderr, "pvar_register: %s\n", pvar_last_error());
        return 1;
    }
    return 0;
}

static void component_send(void) { PVAR_COUNTER_INC(msgs_sent); }

/* The tool: everything through MPI_T. */
static int tool(void) {
    int provided, index, count, num, i;
    MPI_T_pvar_session session;
    MPI_T_pvar_handle handle;
    unsigned long long value = 0;

    if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS) return 1;
    if (MPI_T_pvar_get_index("hello_msgs_sent", MPI_T_PVAR_CLASS_COUNTER, &index) != MPI_SUCCESS)
        return 1;
    if (MPI_T_pvar_session_create(&session) != MPI_SUCCESS) return 1;
    if (MPI_T_pvar_handle_alloc(session, index, NULL, &handle, &count) != MPI_SUCCESS) return 1;
    if (MPI_T_pvar_start(session, handle) != MPI_SUCCESS) return 1;

    for (i = 0; i < 1000; i++) component_send();

    if (MPI_T_pvar_read(session, handle, &value) != MPI_SUCCESS) return 1;
    printf("hello_msgs_sent read by the tool: %llu\n", value);

    MPI_T_pvar_get_num(&num);
    printf("%d performance variables:\n", num);
    for (i = 0; i < num; i++) {
        char name[128];
        int name_len = sizeof name, verbosity, var_class, bind, readonly, continuous, atomic;
        MPI_Datatype datatype;
        MPI_T_enum enumtype;
        if (MPI_T_pvar_get_info(i, name, &name_len, &verbosity, &var_class, &datatype, &enumtype,
                                NULL, NULL, &bind, &readonly, &continuous,
                                &atomic) == MPI_SUCCESS)
            printf("  %3d %s\n", i, name);
    }

    MPI_T_pvar_handle_free(session, &handle);
    MPI_T_pvar_session_free(&session);
    MPI_T_finalize();
    return value == 1000 ? 0 : 1;
}

int main(void) {
    if (component_init() != 0) return 1;
    return tool();
}
