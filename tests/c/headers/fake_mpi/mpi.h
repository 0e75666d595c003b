/* A stand-in for an MPI library's mpi.h WITHOUT MPI_T declarations and with
 * its own (non-ABI, MPICH-like integer) handle values: used to check that
 * mpi_t.h coexists with it (after_mpi_h.c, mpi_t_only.c). */
#ifndef FAKE_MPI_H
#define FAKE_MPI_H
#include <stdint.h>
#define MPI_VERSION 4
#define MPI_SUBVERSION 1
typedef int MPI_Datatype;
typedef int MPI_Comm;
typedef int MPI_Info;
typedef int64_t MPI_Count;
typedef intptr_t MPI_Aint;
#define MPI_INT ((MPI_Datatype)0x4c000405)
#define MPI_UNSIGNED ((MPI_Datatype)0x4c000406)
#define MPI_COMM_WORLD ((MPI_Comm)0x44000000)
#define MPI_INFO_NULL ((MPI_Info)0x1c000000)
#define MPI_THREAD_SINGLE 0
#define MPI_THREAD_MULTIPLE 3
#define MPI_SUCCESS 0
#define MPI_ERR_LASTCODE 0x3fffffff
#endif
