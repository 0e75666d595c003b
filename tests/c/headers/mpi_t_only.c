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
    int provided, n = -1, rc, i, seen_unsigned_ll = 0;
    rc = MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    rc |= MPI_T_pvar_get_num(&n);
    for (i = 0; i < n; i++) {
        MPI_Datatype d;
        rc |= MPI_T_pvar_get_info(i, NULL, NULL, NULL, NULL, &d, NULL, NULL, NULL, NULL, NULL,
                                  NULL, NULL);
        if ((uintptr_t)d == PVAR_ABI_MPI_UNSIGNED_LONG_LONG) seen_unsigned_ll = 1;
    }
    rc |= !seen_unsigned_ll;
    rc |= MPI_T_finalize();
    printf("mpi_t_only: %s (%d pvars)\n", rc == MPI_SUCCESS && n > 0 ? "1 passed, 0 failed" : "0 passed, 1 failed", n);
    return rc != MPI_SUCCESS || n <= 0;
}
