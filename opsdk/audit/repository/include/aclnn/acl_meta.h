// opsdk's stand-in: aclnn's shared types are acl.h's here.
#pragma once
#include "acl/acl.h"
