/*
 * The profiling interface (MPI 3.1 §14.2, §14.3.10): a PMPI-style tool
 * defines its own MPI_T_ functions, counts the calls and forwards them to
 * the PMPI_T_ entry points. Built against libpvar.so (the executable's
 * definitions interpose) and against the weakened libpvar.a
 * (scripts/weaken-static.sh: MPI_T_* weak, PMPI_T_* strong).
 */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "mpi_t.h"
#include "pvar.h"

static int wrapped_init, wrapped_get_num, wrapped_read, wrapped_finalize;

int MPI_T_init_thread(int required, int *provided) {
    wrapped_init++;
    return PMPI_T_init_thread(required, provided);
}

int MPI_T_pvar_get_num(int *num) {
    wrapped_get_num++;
    return PMPI_T_pvar_get_num(num);
}

int MPI_T_pvar_read(MPI_T_pvar_session s, MPI_T_pvar_handle h, void *buf) {
    wrapped_read++;
    return PMPI_T_pvar_read(s, h, buf);
}

int MPI_T_finalize(void) {
    wrapped_finalize++;
    return PMPI_T_finalize();
}

int main(void) {
    pvar_info i;
    pvar_var c;
    int provided, n = 0, count;
    MPI_T_pvar_session s;
    MPI_T_pvar_handle h;
    unsigned long long v = 0;

    memset(&i, 0, sizeof i);
    i.name = "pmpi_counter";
    i.var_class = PVAR_CLASS_COUNTER;
    i.continuous = PVAR_YES;
    CHECK_RC(pvar_register(&i, &c), MPI_SUCCESS);

    CHECK_RC(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided), MPI_SUCCESS);
    CHECK_RC(MPI_T_pvar_get_num(&n), MPI_SUCCESS);
    CHECK(n >= 1);
    CHECK_RC(MPI_T_pvar_session_create(&s), MPI_SUCCESS); /* not wrapped */
    CHECK_RC(MPI_T_pvar_handle_alloc(s, pvar_var_index(c), NULL, &h, &count), MPI_SUCCESS);
    pvar_add(c, 3);
    CHECK_RC(MPI_T_pvar_read(s, h, &v), MPI_SUCCESS);
    CHECK(v == 3);
    CHECK_RC(PMPI_T_pvar_read(s, h, &v), MPI_SUCCESS); /* bypasses the wrapper */
    CHECK_RC(MPI_T_pvar_session_free(&s), MPI_SUCCESS);
    CHECK_RC(MPI_T_finalize(), MPI_SUCCESS);

    CHECK(wrapped_init == 1);
    CHECK(wrapped_get_num == 1);
    CHECK(wrapped_read == 1);
    CHECK(wrapped_finalize == 1);
    return summary("pmpi_wrapper");
}
