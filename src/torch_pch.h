// Precompiled header for every target that uses LibTorch: parsing torch/torch.h dominates
// compile time, so it is parsed once per build.
#pragma once
#include <torch/torch.h>
