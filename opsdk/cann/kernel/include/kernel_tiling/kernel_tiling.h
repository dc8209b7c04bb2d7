#pragma once
#include "kernel_operator.h"
