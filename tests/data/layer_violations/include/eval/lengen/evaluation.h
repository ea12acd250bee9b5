#pragma once
// Sideways: eval and train are siblings.
#include "lengen/trainer.h"
