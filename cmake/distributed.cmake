# Data-parallel training uses c10d from LibTorch. Gloo's headers (libgloo-dev) are needed
# to compile against ProcessGroupGloo; without them lengen builds single-process only.
find_path(LENGEN_GLOO_INCLUDE gloo/config.h)
if(LENGEN_GLOO_INCLUDE)
  target_compile_definitions(lengen PUBLIC LENGEN_HAVE_GLOO USE_C10D_GLOO)
  target_include_directories(lengen PRIVATE ${LENGEN_GLOO_INCLUDE})
  message(STATUS "lengen: data-parallel training with Gloo enabled")
else()
  message(STATUS "lengen: gloo headers not found, data-parallel training disabled")
endif()
