# Decides whether data-parallel training over MPI is built (engine/src/dist/communicator_mpi.cpp). AUTO turns it
# on when an MPI with C++ support is found (Debian: libopenmpi-dev); without it everything else builds the same
# and training runs in one process. Sets WB_MPI_ENABLED, and MPIEXEC_EXECUTABLE for the tests.
set(WB_MPI_ENABLED OFF)
if(NOT WB_WITH_MPI STREQUAL "OFF")
  find_package(MPI COMPONENTS CXX QUIET)
  if(MPI_CXX_FOUND)
    set(WB_MPI_ENABLED ON)
  elseif(WB_WITH_MPI STREQUAL "ON")
    message(FATAL_ERROR "WB_WITH_MPI=ON but no MPI for C++ was found (Debian: libopenmpi-dev)")
  endif()
endif()
message(STATUS "LLM Workbench: MPI data parallelism ${WB_MPI_ENABLED}")
