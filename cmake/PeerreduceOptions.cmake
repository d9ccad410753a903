# Compiler flags shared by every peerreduce target: warnings, sanitizers, coverage.
add_library(peerreduce_flags INTERFACE)
target_compile_options(peerreduce_flags INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wconversion -Wno-sign-conversion>
  $<$<COMPILE_LANGUAGE:C>:-Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion>)
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
  # GCC 12 reports false -Wrestrict overlaps inside std::string at -O2/-O3 (GCC bug 105329).
  target_compile_options(peerreduce_flags INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-Wno-restrict>)
endif()
if(PEERREDUCE_WERROR)
  target_compile_options(peerreduce_flags INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-Werror>)
endif()

# Host languages only: nvcc takes neither sanitizer nor gcov flags for device code.
set(peerreduce_host_languages "$<COMPILE_LANGUAGE:C,CXX>")
if(PEERREDUCE_SANITIZE)
  # Sanitizers apply to everything built here, so that containers and templates are checked too.
  add_compile_options("$<${peerreduce_host_languages}:-fsanitize=${PEERREDUCE_SANITIZE};-fno-omit-frame-pointer;-fno-sanitize-recover=all>")
  add_link_options(-fsanitize=${PEERREDUCE_SANITIZE})
endif()

if(PEERREDUCE_COVERAGE)
  # Plain (non-atomic) counters: atomic updates made instrumented tests 7x slower, and a count lost to
  # a race between simulator threads never turns a covered line into an uncovered one.
  # Named, so that tests/CMakeLists.txt can take it off the test suites' own code.
  set(peerreduce_coverage_option "$<${peerreduce_host_languages}:--coverage>")
  add_compile_options("${peerreduce_coverage_option}")
  add_link_options(--coverage)
endif()

# GPU platform: one compile definition the portability header (kernels/portability.h) keys on.
if(PEERREDUCE_GPU STREQUAL "cuda")
  # The GPUs the kernels are built for. Set before enable_language(CUDA), which otherwise defines it as
  # the compiler's default (75 with nvcc 13), after which no later default applies. The default is the
  # data-centre and workstation GPUs peerreduce's users have: SASS for A100 (80), A10/A40/RTX 30xx (86),
  # L4/L40/RTX 40xx/Ada (89) and H100/H200 (90), and compute_90 PTX, which the driver JIT-compiles on
  # newer GPUs (Blackwell). sm_80's code would run on sm_86 and sm_89 too; code built for each runs best.
  # The kernels compile for all of them: the one Hopper instruction (griddepcontrol, programmatic
  # dependent launch) is behind __CUDA_ARCH__ >= 900 in portability.h, and launches overlap only where
  # the code running is compute_90 or later (kGridDependencyPtxVersion, lib/gpu/kernel_choice.h).
  # CUDAARCHS in the environment or -DCMAKE_CUDA_ARCHITECTURES chooses others ("90" alone compiles the
  # kernels several times faster into an archive a third the size: ci/hardware.sh builds so).
  # ci/gpu_code.py check cuda ... verifies what the built library contains; ci/gpu-compile.sh checks
  # this list.
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES AND NOT DEFINED ENV{CUDAARCHS})
    set(CMAKE_CUDA_ARCHITECTURES "80-real;86-real;89-real;90-real;90-virtual"
        CACHE STRING "CUDA architectures of the kernels (CMake list, e.g. 80;90;100)")
  endif()
  # nvcc where the toolkit installs it when it is not on PATH (the toolkit does not add itself), unless
  # the compiler is named already (CMAKE_CUDA_COMPILER, CUDACXX, CUDAToolkit_ROOT).
  if(NOT DEFINED CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX} AND NOT DEFINED CUDAToolkit_ROOT
     AND NOT DEFINED ENV{CUDAToolkit_ROOT})
    find_program(peerreduce_nvcc nvcc PATHS /usr/local/cuda/bin NO_CACHE)
    if(peerreduce_nvcc)
      set(CMAKE_CUDA_COMPILER ${peerreduce_nvcc} CACHE FILEPATH "The CUDA compiler")
    endif()
  endif()
  enable_language(CUDA)
  find_package(CUDAToolkit REQUIRED)
  # The kernels are C++17 (CMake 3.25 cannot ask nvcc for C++20); they include no C++20 header.
  set(CMAKE_CUDA_STANDARD 17)
  set(CMAKE_CUDA_STANDARD_REQUIRED ON)
  add_compile_definitions(PEERREDUCE_GPU_CUDA)
  # Host code that includes the portability header sees the CUDA runtime's declarations.
  include_directories(SYSTEM ${CUDAToolkit_INCLUDE_DIRS})
elseif(PEERREDUCE_GPU STREQUAL "hip")
  # The kernels are compiled as HIP by clang (CMAKE_HIP_COMPILER, e.g. clang++-15 with the ROCm device
  # libraries); host code with the C++ compiler against the HIP runtime's host API (kernels/).
  # A list is accepted ("gfx90a;gfx942"); Debian's hipcc 5.2.3 is too old for gfx942 (MI300), newer
  # ROCm compiles it. ci/gpu_code.py check hip ... verifies what the built objects bundle.
  set(PEERREDUCE_HIP_ARCH "gfx90a" CACHE STRING "AMD GPU architectures for --offload-arch (list)")
  # The kernels' optimisation flags (a list). -O3 is what runs; ci/gpu-compile.sh, a compile and link check on a
  # machine without a GPU, gives "-O1;-fno-inline" (-O0 fails in the ROCm device library).
  set(PEERREDUCE_HIP_KERNEL_OPT "-O3" CACHE STRING "hipcc optimisation flags for the kernels (a list)")
  add_compile_definitions(PEERREDUCE_GPU_HIP __HIP_PLATFORM_AMD__)
endif()

if(PEERREDUCE_BUILD_FUZZERS)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "PEERREDUCE_BUILD_FUZZERS needs clang (libFuzzer); use the preset 'fuzz'")
  endif()
  # Coverage feedback for libFuzzer in every library the targets reach, not only in the targets.
  add_compile_options("$<${peerreduce_host_languages}:-fsanitize=fuzzer-no-link>")
endif()
