/* PVAR_MPI_T_ONLY with an mpi.h that has no MPI_T: libpvar's MPI_T
 * declarations over the library's MPI types. Compares datatypes through the
 * PVAR_ABI_* values, since this mpi.h has other handle values. */
#include <stdio.h>
#include <mpi.h>
#include "mpi_t.h"
#ifdef PVAR_MPI_T_STANDALONE
#error "shared MPI declarations must come from mpi.h"
#endif
#ifndef PVAR_MPI_T_DECLARED
#error "MPI_T declarations expected"
#endif
int main(void) {
    int provided, n = -1, rc;
    rc = MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    rc |= MPI_T_pvar_get_num(&n);
    rc |= MPI_T_finalize();
    printf("mpi_t_only: %s (%d pvars)\n", rc == MPI_SUCCESS && n > 0 ? "1 passed, 0 failed" : "0 passed, 1 failed", n);
    return rc != MPI_SUCCESS || n <= 0;
}
