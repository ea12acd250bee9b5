# The direction of the layers, checked on the #include lines themselves (the include roots of
# CMakeLists.txt are the first guard): a file of a layer includes only headers of its own layer
# and of the layers below it, never one of a sibling, and the layers below runtime include no
# LibTorch header.
#   cmake -DLENGEN_ROOT=DIR [-DEXPECT_VIOLATIONS=N] -P cmake/check_layers.cmake
# Lists every include that breaks the rule and fails; with EXPECT_VIOLATIONS (the check's own
# test) it succeeds exactly when it finds N of them.
cmake_minimum_required(VERSION 3.18)
if(NOT LENGEN_ROOT)
  message(FATAL_ERROR "usage: cmake -DLENGEN_ROOT=DIR -P check_layers.cmake")
endif()
get_filename_component(root "${LENGEN_ROOT}" REALPATH)

# NAME:RANK:FOLDER, bottom to top. Siblings share a rank; ranks below runtime's are torch-free.
set(layers
    base:0:src/base
    tasks:1:tasks
    config:2:src/config
    run:3:src/run
    runtime:4:src/runtime
    normalizers:5:src/normalizers
    attention:6:src/attention
    model:7:src/model
    scoring:8:src/scoring
    train:9:src/train
    eval:9:src/eval
    report:10:src/report
    sweep:10:src/sweep
    bench:10:src/bench
    cli:11:src/cli)
set(torch_rank 4)
# Files CMakeLists.txt writes into the build tree for the one layer that includes them: data, not
# code of another layer.
set(generated_includes shipped_quick_configs.inc lengen_build_id.h)

set(names "")
set(violations "")
foreach(entry IN LISTS layers)
  string(REPLACE ":" ";" parts "${entry}")
  list(GET parts 0 name)
  list(GET parts 1 rank_${name})
  list(GET parts 2 folder_${name})
  list(APPEND names ${name})
  # A layer's public headers: "lengen/NAME.h" names one header of one layer.
  file(GLOB headers "${root}/include/${name}/lengen/*.h")
  foreach(header IN LISTS headers)
    get_filename_component(file_name "${header}" NAME)
    if(DEFINED layer_of_lengen/${file_name})
      list(APPEND violations "lengen/${file_name} is a header of both ${layer_of_lengen/${file_name}} and ${name}")
    endif()
    set(layer_of_lengen/${file_name} ${name})
  endforeach()
endforeach()

file(GLOB include_folders LIST_DIRECTORIES true "${root}/include/*")
foreach(folder IN LISTS include_folders)
  get_filename_component(name "${folder}" NAME)
  if(NOT name IN_LIST names)
    list(APPEND violations "include/${name} is not the include root of a layer")
  endif()
endforeach()

# The layer a file belongs to (its folder or its include root), or "" outside the layers.
function(layer_of_path path out)
  set(found "")
  foreach(name IN LISTS names)
    foreach(prefix "${root}/${folder_${name}}/" "${root}/include/${name}/")
      string(FIND "${path}" "${prefix}" at)
      if(at EQUAL 0)
        set(found ${name})
      endif()
    endforeach()
  endforeach()
  set(${out} "${found}" PARENT_SCOPE)
endfunction()

set(checked 0)
foreach(name IN LISTS names)
  file(GLOB files "${root}/${folder_${name}}/*.cpp" "${root}/${folder_${name}}/*.h"
       "${root}/include/${name}/lengen/*.h")
  foreach(file IN LISTS files)
    file(RELATIVE_PATH shown "${root}" "${file}")
    get_filename_component(dir "${file}" DIRECTORY)
    file(STRINGS "${file}" lines REGEX "^[ \t]*#[ \t]*include")
    foreach(line IN LISTS lines)
      math(EXPR checked "${checked} + 1")
      if(line MATCHES "^[ \t]*#[ \t]*include[ \t]*<([^>]+)>")
        set(header "${CMAKE_MATCH_1}")
        if(rank_${name} LESS torch_rank AND header MATCHES "^(torch|ATen|c10|caffe2)/")
          list(APPEND violations "${shown}: <${header}>: ${name} is below runtime and uses no LibTorch")
        endif()
        continue()
      endif()
      if(NOT line MATCHES "^[ \t]*#[ \t]*include[ \t]*\"([^\"]+)\"")
        list(APPEND violations "${shown}: cannot read '${line}'")
        continue()
      endif()
      set(header "${CMAKE_MATCH_1}")
      # Where the compiler looks first: next to the including file, then the include roots.
      if(EXISTS "${dir}/${header}")
        get_filename_component(resolved "${dir}/${header}" REALPATH)
        layer_of_path("${resolved}" target)
        if(target STREQUAL "")
          list(APPEND violations "${shown}: \"${header}\" lies outside the layers")
          continue()
        endif()
      elseif(header IN_LIST generated_includes)
        continue()
      elseif(DEFINED layer_of_${header})
        set(target ${layer_of_${header}})
      else()
        list(APPEND violations "${shown}: \"${header}\" is neither next to it nor a layer's public header")
        continue()
      endif()
      if(NOT target STREQUAL name AND NOT rank_${target} LESS rank_${name})
        list(APPEND violations "${shown}: \"${header}\" belongs to ${target}, which is not below ${name}")
      endif()
    endforeach()
  endforeach()
endforeach()

list(LENGTH violations count)
foreach(violation IN LISTS violations)
  message("${violation}")
endforeach()
if(DEFINED EXPECT_VIOLATIONS)
  if(NOT count EQUAL EXPECT_VIOLATIONS)
    message(FATAL_ERROR "expected ${EXPECT_VIOLATIONS} violations, found ${count}")
  endif()
  message("found the ${count} expected violations")
elseif(count GREATER 0)
  message(FATAL_ERROR "${count} includes against the direction of the layers")
else()
  message("${checked} #include lines in ${root}: each points to its own layer or one below")
endif()
