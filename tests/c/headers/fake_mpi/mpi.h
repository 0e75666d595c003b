/* A stand-in for an MPI library's mpi.h WITHOUT MPI_T declarations and with
 * its own (non-ABI, Open MPI-like: pointers to library objects) handle
 * values: used to check that mpi_t.h coexists with it (after_mpi_h.c,
 * mpi_t_only.c). */
#ifndef FAKE_MPI_H
#define FAKE_MPI_H
#include <stdint.h>
#define MPI_VERSION 4
#define MPI_SUBVERSION 1
typedef struct fake_datatype *MPI_Datatype;
typedef struct fake_comm *MPI_Comm;
typedef struct fake_info *MPI_Info;
typedef int64_t MPI_Count;
typedef intptr_t MPI_Aint;
extern struct fake_datatype fake_mpi_int, fake_mpi_unsigned;
extern struct fake_comm fake_mpi_comm_world;
#define MPI_INT (&fake_mpi_int)
#define MPI_UNSIGNED (&fake_mpi_unsigned)
#define MPI_COMM_WORLD (&fake_mpi_comm_world)
#define MPI_INFO_NULL ((MPI_Info)0)
#define MPI_THREAD_SINGLE 0
#define MPI_THREAD_MULTIPLE 3
#define MPI_SUCCESS 0
#define MPI_ERR_LASTCODE 0x3fffffff
#endif
