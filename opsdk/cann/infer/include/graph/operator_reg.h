// opsdk stand-in: the API this header declares is in opsdk_operator.h
#pragma once
#include "opsdk_operator.h"
