#pragma once
#include "lengen/trainer.h"
