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
int main(void) {
    int provided;
    MPI_Datatype d = MPI_UNSIGNED_LONG_LONG;
    MPI_Comm c = MPI_COMM_WORLD;
    MPI_T_pvar_handle h = MPI_T_PVAR_ALL_HANDLES;
    (void)d, (void)c, (void)h;
    return MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) + PMPI_T_finalize() +
           (pvar_error_string(MPI_T_ERR_INVALID) != 0) + PVAR_CLASS_COUNTER;
}
