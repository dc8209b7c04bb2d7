// The AscendC op aclnnStore launches (opbuild: inputs, then attributes, then outputs).
namespace ops {
class Store : public OpDef {
public:
    explicit Store(const char *name) : OpDef(name)
    {
        this->Input("x").ParamType(REQUIRED);
        this->Output("cache").ParamType(REQUIRED);
    }
};
OP_ADD(Store);
}  // namespace ops
