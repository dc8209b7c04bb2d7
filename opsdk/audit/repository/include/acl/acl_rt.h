// opsdk's stand-in: the ACL runtime API is acl.h's types here.
#pragma once
#include "acl/acl.h"
