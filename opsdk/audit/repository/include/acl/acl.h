// opsdk's stand-in of the ACL runtime's types, for compiling an op library's Meta
// registrations against CPU torch: declarations only, nothing runs on a device.
#pragma once
#include <cstddef>
#include <cstdint>

typedef void *aclrtStream;
typedef void *aclrtEvent;
typedef int aclError;
typedef int32_t aclnnStatus;
struct aclTensor;
struct aclTensorList;
struct aclScalar;
struct aclIntArray;
struct aclOpExecutor;
#ifndef ACL_SUCCESS
#define ACL_SUCCESS 0
#endif
