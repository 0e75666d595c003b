/* mpi.h first, no PVAR_MPI_T_ONLY: shared and MPI_T declarations are the
 * MPI library's; mpi_t.h adds only the pvar extras. */
#include <mpi.h>
#include "mpi_t.h"
#include "pvar.h"
#ifdef PVAR_MPI_T_STANDALONE
#error "shared MPI declarations must come from mpi.h"
#endif
#ifdef PVAR_MPI_T_DECLARED
#error "MPI_T declarations must come from mpi.h"
#endif
int main(void) {
    MPI_Datatype d = MPI_INT; /* the library's value */
    (void)d;
    return pvar_error_string(1006) == 0 && PVAR_ABI_MPI_INT == 0x209;
}
