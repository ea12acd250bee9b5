// LibTorch in a layer below runtime.
#include <torch/types.h>
