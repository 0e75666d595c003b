/* mpi_t.h and pvar.h on their own (also compiled as C++). */
#include "mpi_t.h"
#include "pvar.h"
#include "mpi_t.h" /* include guard */
#ifndef PVAR_MPI_T_STANDALONE
#error "standalone mode expected"
#endif
#ifndef PVAR_MPI_T_DECLARED
#error "MPI_T declarations expected"
#endif
/* Every use-site macro (with and without -DPVAR_NO_UPDATES). */
static void use_sites(pvar_var v, size_t i) {
    PVAR_COUNTER_INC(v);
    PVAR_COUNTER_INC_AT(v, i);
    PVAR_COUNTER_ADD(v, 2);
    PVAR_COUNTER_ADD_AT(v, i, 2);
    PVAR_AGGREGATE_ADD(v, 3);
    PVAR_AGGREGATE_ADD_AT(v, i, 3);
    PVAR_AGGREGATE_ADD_DOUBLE(v, 0.5);
    PVAR_AGGREGATE_ADD_DOUBLE_AT(v, i, 0.5);
    PVAR_LEVEL_INC(v);
    PVAR_LEVEL_DEC(v);
    PVAR_LEVEL_INC_AT(v, i);
    PVAR_LEVEL_DEC_AT(v, i);
}
int main(void) {
    use_sites(0, 0);
    int provided;
    MPI_Datatype d = MPI_UNSIGNED_LONG_LONG;
    MPI_Comm c = MPI_COMM_WORLD;
    MPI_T_pvar_handle h = MPI_T_PVAR_ALL_HANDLES;
    (void)d, (void)c, (void)h;
    return MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) + PMPI_T_finalize() +
           (pvar_error_string(MPI_T_ERR_INVALID) != 0) + PVAR_CLASS_COUNTER;
}
