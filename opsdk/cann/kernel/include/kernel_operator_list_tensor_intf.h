// opsdk's stand-in for AscendC's TensorList API (ListTensorDesc): a GM block holding
// the byte offset of its pointer table, per tensor a word whose low 32 bits are its dim
// count then its dims, then the tensors' pointers (as CANN's runtime builds the block of a
// dynamic parameter; opsdk_kernel_entry.h builds it the same way).
#pragma once
#include "kernel_operator.h"

namespace AscendC {
// GetDesc writes the dims where SetShapeAddr says (as the API asks a kernel to set one
// first), else into the desc's own 8.
template <class T>
struct TensorDesc {
    uint64_t dim = 0, index = 0;
    uint64_t shape[8] = {};
    uint64_t* shape_addr = nullptr;
    T* data = nullptr;
    uint64_t GetDim() const { return dim; }
    uint64_t GetIndex() const { return index; }
    uint64_t GetShape(uint32_t i) const { return shape_addr ? shape_addr[i] : shape[i]; }
    T* GetDataPtr() const { return data; }
    void SetShapeAddr(uint64_t* addr) { shape_addr = addr; }
};

class ListTensorDesc {
public:
    ListTensorDesc() = default;
    ListTensorDesc(__gm__ void* data, uint32_t length = 0xffffffff, uint32_t shapeInfoLength = 0xffffffff) { Init(data, length, shapeInfoLength); }
    void Init(__gm__ void* data, uint32_t = 0xffffffff, uint32_t = 0xffffffff) {
        base_ = static_cast<uint64_t*>(data);
        uint64_t offset = base_[0];
        pointers_ = reinterpret_cast<uint64_t*>(reinterpret_cast<uint8_t*>(base_) + offset);
        count_ = uint32_t((offset - 8) / 8);  // an upper bound; GetSize counts the dims walked
        uint64_t* at = base_ + 1;
        size_ = 0;
        while (reinterpret_cast<uint64_t*>(at) < pointers_) {
            uint64_t dims = at[0] & 0xffffffffu;
            at += 1 + dims;
            ++size_;
        }
    }
    template <class T> __gm__ T* GetDataPtr(uint32_t index) const { return reinterpret_cast<T*>(pointers_[index]); }
    uint32_t GetSize() const { return size_; }
    template <class T> void GetDesc(TensorDesc<T>& desc, uint32_t index) const {
        uint64_t* at = base_ + 1;
        for (uint32_t i = 0; i < index; ++i) at += 1 + (at[0] & 0xffffffffu);
        desc.dim = at[0] & 0xffffffffu;
        desc.index = index;
        for (uint64_t d = 0; d < desc.dim; ++d) {
            if (desc.shape_addr) desc.shape_addr[d] = at[1 + d];
            if (d < 8) desc.shape[d] = at[1 + d];
        }
        desc.data = GetDataPtr<T>(index);
    }

private:
    uint64_t* base_ = nullptr;
    uint64_t* pointers_ = nullptr;
    uint32_t count_ = 0, size_ = 0;
};
}  // namespace AscendC
