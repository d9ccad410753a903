# The targets applications link, by the names they have in an installed package (find_package(peerreduce)
# in peerreduce-config.cmake) and, through these aliases, in this build tree (add_subdirectory or
# FetchContent):
#   peerreduce::peerreduce         libpeerreduce.so: the library, the GPU kernels and the simulator
#   peerreduce::sim                the same library, for programs that also use the simulator's headers
#   peerreduce::mpi                libpeerreduce_mpi.so, the MPI bootstrap (when MPI was found)
#   peerreduce::peerreduce_static  the static libraries (libpeerreduce.a and the kernels' archives)
#   peerreduce::sim_static         ... with the simulator (libpeerreduce_sim.a)
#   peerreduce::mpi_static         ... with the MPI bootstrap (libpeerreduce_mpi.a)
# Every one carries the public include directory and C++20 (the public C++ headers use std::span);
# nothing of the sources' folders or of this project's compiler flags reaches an application.
set(peerreduce_export_names
  peerreduce_shared peerreduce
  peerreduce_sim_shared sim
  peerreduce peerreduce_static
  peerreduce_sim sim_static
  peerreduce_kernels kernels_static)
if(TARGET peerreduce_kernels_gpu)
  list(APPEND peerreduce_export_names peerreduce_kernels_gpu kernels_gpu_static)
endif()
if(TARGET peerreduce_mpi_shared)
  list(APPEND peerreduce_export_names peerreduce_mpi_shared mpi peerreduce_mpi mpi_static)
endif()

set(peerreduce_exported_targets)
while(peerreduce_export_names)
  list(POP_FRONT peerreduce_export_names target export_name)
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${export_name})
  add_library(peerreduce::${export_name} ALIAS ${target})
  list(APPEND peerreduce_exported_targets ${target})
endwhile()
