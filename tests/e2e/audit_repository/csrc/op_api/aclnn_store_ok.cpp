// A hand-written aclnn: its DFX_OUT names what it writes.
aclnnStatus aclnnStoreOkGetWorkspaceSize(const aclTensor *x, aclTensor *cache, uint64_t *workspaceSize,
                                         aclOpExecutor **executor)
{
    L2_DFX_PHASE_1(aclnnStoreOk, DFX_IN(x), DFX_OUT(cache));
    return 0;
}
