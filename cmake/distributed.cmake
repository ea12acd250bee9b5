# Data-parallel training uses c10d from LibTorch. Gloo's headers (libgloo-dev, or a LibTorch
# that ships them) are needed to compile against ProcessGroupGloo; without them lengen builds
# single-process only. The definitions go on runtime, whose machine facts (`lengen info`) report
# them, and so reach every LibTorch layer alike (one precompiled header for all); the headers and
# NCCL's library only on train, whose process group uses them.
find_path(LENGEN_GLOO_INCLUDE gloo/config.h HINTS ${TORCH_INSTALL_PREFIX}/include)
if(LENGEN_GLOO_INCLUDE)
  target_compile_definitions(lengen_runtime PUBLIC LENGEN_HAVE_GLOO USE_C10D_GLOO)
  target_include_directories(lengen_train PRIVATE ${LENGEN_GLOO_INCLUDE})
  message(STATUS "lengen: data-parallel training with Gloo enabled")
else()
  message(STATUS "lengen: gloo headers not found, data-parallel training disabled")
endif()

# CUDA ranks talk through NCCL: a LibTorch built with CUDA has ProcessGroupNCCL, whose header
# needs nccl.h (PyTorch's wheels keep it in the nvidia-nccl package: pass its include folder as
# -DLENGEN_NCCL_INCLUDE=... and its lib folder's libnccl.so.2 as -DLENGEN_NCCL_LIBRARY=...).
if(LENGEN_GLOO_INCLUDE AND TORCH_CUDA_LIBRARIES)
  find_path(LENGEN_NCCL_INCLUDE nccl.h)
  find_library(LENGEN_NCCL_LIBRARY NAMES nccl libnccl.so.2)
  if(LENGEN_NCCL_INCLUDE AND LENGEN_NCCL_LIBRARY)
    target_compile_definitions(lengen_runtime PUBLIC USE_C10D_NCCL)
    target_include_directories(lengen_train PRIVATE ${LENGEN_NCCL_INCLUDE})
    target_link_libraries(lengen_train PUBLIC ${LENGEN_NCCL_LIBRARY})
    message(STATUS "lengen: NCCL for CUDA ranks enabled (${LENGEN_NCCL_LIBRARY})")
  else()
    message(STATUS "lengen: nccl.h or libnccl not found, CUDA ranks would use Gloo")
  endif()
endif()
