// opsdk's stand-in: torch_npu's Python module header; nothing of it is needed offline.
#pragma once
