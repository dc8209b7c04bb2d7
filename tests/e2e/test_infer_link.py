"""An InferShape calling a helper another file of its project defines (ops-transformer's
mc2 ops call mc2/common/src/mc2_moe_utils.cpp) builds but does not load: `not checked
(link: SYMBOL, defined in FILE)`, never a crash."""

from opsdk.cann import infer
from opsdk.harness.core import infer_nodes

HELPER_H = "#pragma once\nnamespace Helpers {\nbool RankCheck(const gert::Shape *shape);\n}\n"
HELPER_CPP = (
    '#include "register/op_impl_registry.h"\n#include "helper.h"\n'
    "namespace Helpers {\nbool RankCheck(const gert::Shape *shape)\n{\n"
    "    return shape->GetDimNum() > 0;\n}\n}\n"
)
INFERSHAPE = (
    '#include "register/op_impl_registry.h"\n#include "helper.h"\n'
    "static ge::graphStatus InferShapeUsesHelper(gert::InferShapeContext* context)\n{\n"
    "    if (!Helpers::RankCheck(context->GetInputShape(0))) {\n"
    "        return ge::GRAPH_FAILED;\n    }\n"
    "    *context->GetOutputShape(0) = *context->GetInputShape(0);\n"
    "    return ge::GRAPH_SUCCESS;\n}\n"
    "IMPL_OP_INFERSHAPE(UsesHelper).InferShape(InferShapeUsesHelper);\n"
)


def test_a_helper_defined_in_another_file_is_a_link_note_naming_it(tmp_path, monkeypatch):
    monkeypatch.setenv("OPSDK_CACHE_DIR", str(tmp_path / "cache"))
    host = tmp_path / "ops" / "uses_helper" / "op_host"
    host.mkdir(parents=True)
    (host / "helper.h").write_text(HELPER_H)
    (host / "uses_helper_infershape.cpp").write_text(INFERSHAPE)
    common = tmp_path / "ops" / "common" / "src"
    common.mkdir(parents=True)
    (common / "helper.cpp").write_text(HELPER_CPP)
    root = tmp_path / "ops" / "uses_helper"
    said = infer_nodes.compiled(infer.find("UsesHelper", root), root)
    assert said == (
        "link: Helpers::RankCheck(gert::Shape const*), "
        f"defined in {common.resolve() / 'helper.cpp'}"
    )
