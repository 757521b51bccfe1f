// The MPI communicator's factory, for communicator.cpp (defined only in builds with MPI: communicator_mpi.cpp).
#pragma once

#include <memory>

#include "engine/dist/communicator.h"

namespace engine {

// Initialises MPI (unless the program already has) on MPI_COMM_WORLD; finalises it on destruction when it
// initialised it. Throws engine::Error when MPI cannot start.
std::unique_ptr<Communicator> make_mpi_communicator();

}  // namespace engine
