# cmake --install: the public headers, the static and shared libraries, the tools, the CMake package
# (find_package(peerreduce CONFIG) with components sim and mpi, version-checked) and pkg-config files.
include(CMakePackageConfigHelpers)

set(PEERREDUCE_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/peerreduce
    CACHE STRING "Where peerreduce-config.cmake is installed (relative to the prefix)")

# Headers: the library's and the simulator's public ones, and the generated version.h, in one folder.
set(peerreduce_public_headers)
file(GLOB peerreduce_public_headers ${PROJECT_SOURCE_DIR}/lib/include/peerreduce/*.h
     ${PROJECT_SOURCE_DIR}/sim/include/peerreduce/*.h)
if(NOT TARGET peerreduce_mpi)
  # Without the MPI library its headers would promise what is not installed.
  list(FILTER peerreduce_public_headers EXCLUDE REGEX "/(peerreduce_mpi|mpi_bootstrap)\\.h$")
endif()
install(FILES ${peerreduce_public_headers} ${peerreduce_generated_include}/peerreduce/version.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/peerreduce COMPONENT development)

install(TARGETS ${peerreduce_exported_targets} EXPORT peerreduce-targets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT development
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT runtime NAMELINK_COMPONENT development
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT runtime)
install(EXPORT peerreduce-targets NAMESPACE peerreduce:: DESTINATION ${PEERREDUCE_INSTALL_CMAKEDIR}
        COMPONENT development)

# The commands: the simulator's, and the benchmark against NCCL in GPU builds.
foreach(tool peerreduce-sim peerreduce-bench)
  if(TARGET ${tool})
    install(TARGETS ${tool} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT runtime)
  endif()
endforeach()

# What the package's targets need from the consumer's side: the dependencies of the static libraries.
set(PEERREDUCE_PACKAGE_GPU ${PEERREDUCE_GPU})
set(PEERREDUCE_PACKAGE_HAS_MPI OFF)
if(TARGET peerreduce_mpi_shared)
  set(PEERREDUCE_PACKAGE_HAS_MPI ON)
endif()
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/peerreduce-config.cmake.in
                              ${PROJECT_BINARY_DIR}/package-config/peerreduce-config.cmake
                              INSTALL_DESTINATION ${PEERREDUCE_INSTALL_CMAKEDIR})
# 0.x: a minor version may change the API, so only the same major.minor satisfies a request.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/package-config/peerreduce-config-version.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/package-config/peerreduce-config.cmake
              ${PROJECT_BINARY_DIR}/package-config/peerreduce-config-version.cmake
        DESTINATION ${PEERREDUCE_INSTALL_CMAKEDIR} COMPONENT development)

# pkg-config: peerreduce (shared), peerreduce-static (the archives; link with `pkg-config --static`),
# peerreduce-mpi (the MPI bootstrap, shared). libdir and includedir follow the prefix given at install.
set(PEERREDUCE_PC_STATIC_EXTRA "")
if(PEERREDUCE_GPU STREQUAL "cuda")
  set(PEERREDUCE_PC_STATIC_LIBS "-lpeerreduce_sim -lpeerreduce -lpeerreduce_kernels_gpu -lpeerreduce_kernels")
  set(PEERREDUCE_PC_STATIC_EXTRA "-L${CUDAToolkit_LIBRARY_DIR} -lcudart_static -lrt")
elseif(PEERREDUCE_GPU STREQUAL "hip")
  set(PEERREDUCE_PC_STATIC_LIBS "-lpeerreduce_sim -lpeerreduce -lpeerreduce_kernels_gpu -lpeerreduce_kernels")
  set(PEERREDUCE_PC_STATIC_EXTRA "${PEERREDUCE_AMDHIP64}")
else()
  set(PEERREDUCE_PC_STATIC_LIBS "-lpeerreduce_sim -lpeerreduce -lpeerreduce_kernels")
endif()
set(PEERREDUCE_PC_MPI_REQUIRES "")
find_package(PkgConfig QUIET)
if(PKG_CONFIG_FOUND AND TARGET peerreduce_mpi_shared)
  # The MPI the library was built with, when it has a pkg-config file (Open MPI: mpi-c; MPICH: mpich).
  foreach(candidate mpi-c mpich)
    pkg_check_modules(peerreduce_pc_mpi QUIET ${candidate})
    if(peerreduce_pc_mpi_FOUND)
      set(PEERREDUCE_PC_MPI_REQUIRES " ${candidate}")
      break()
    endif()
  endforeach()
endif()
set(peerreduce_pc_files peerreduce peerreduce-static)
if(TARGET peerreduce_mpi_shared)
  list(APPEND peerreduce_pc_files peerreduce-mpi)
endif()
# Kept as a placeholder now, filled in at install time.
set(peerreduce_pc_prefix "@peerreduce_pc_prefix@")
foreach(pc ${peerreduce_pc_files})
  configure_file(${PROJECT_SOURCE_DIR}/cmake/${pc}.pc.in ${PROJECT_BINARY_DIR}/package-config/${pc}.pc.in @ONLY)
  # The prefix is the one given at install time (cmake --install --prefix), not the configured one.
  install(CODE "
    set(peerreduce_pc_prefix \"\${CMAKE_INSTALL_PREFIX}\")
    configure_file(\"${PROJECT_BINARY_DIR}/package-config/${pc}.pc.in\"
                   \"${PROJECT_BINARY_DIR}/package-config/installed/${pc}.pc\" @ONLY)
    file(INSTALL \"${PROJECT_BINARY_DIR}/package-config/installed/${pc}.pc\"
         DESTINATION \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/pkgconfig\")" COMPONENT development)
endforeach()
