"""``opsdk new --from-cann`` of a real op with host tiling tests (ops-nn's GroupNormSwish,
read from the mirror at test time, skipped without it): its specs take the smallest
cases of the op's own tests, shapes its tiling accepts, each named after its test, after
the definition's guessed ones (the planted project's: test_tiling.py)."""

import mirrors


def test_a_real_op_s_specs_hold_its_own_tests_smallest_cases(opsdk_cli, tmp_path, tmp_path_factory):
    root = mirrors.extract(tmp_path_factory, "hicann+ops-nn", "norm/group_norm_swish")
    source = root / "norm" / "group_norm_swish"
    run = opsdk_cli("new", "--from-cann", source, "--namespace", "e2e_own")
    assert run.code == 0, run.stderr
    specs = (tmp_path / "group_norm_swish" / "group_norm_swish" / "specs.py").read_text()
    lines = [line.strip() for line in specs.splitlines()]
    at = lines.index(
        "# the op's own test test_group_norm_swish_tiling.cpp:24 group_norm_swish_tiling_111"
    )
    # N=1024, C=32, H=W=1 in 32 groups, swish off: the test's node, by the torch op's order
    case = "Support(F16(1024, 32, 1, 1), F16(32), F16(32), 32, activate_swish=False),"
    assert lines[at + 1] == case
    assert sum(line.startswith("# the op's own test") for line in lines) == 3
