"""Option profiles: each names real options of the installed TorchAir with a value other
than the default; they are chosen, crossed, waived and skipped as documented."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from opsdk import cli
from opsdk._runtime import locator
from opsdk._runtime.spec import parse
from opsdk.harness.cell import OpUnderTest
from opsdk.harness.run import waivers
from opsdk.harness.variants import profiles
from opsdk.harness.variants.profiles import Profile

ADD = parse("myops::my_add(Tensor x, Tensor y) -> Tensor")
IADD = parse("myops::my_iadd(Tensor(a!) x, Tensor y) -> ()")


@pytest.fixture(scope="module")
def declared():
    if not (locator.locate().path / "torchair" / "configs").is_dir():
        pytest.skip("TorchAir is not fetched (python -m opsdk fetch-torchair)")
    return {column: profiles.declared(column) for column in ("ge", "npugraph_ex")}


def problems(profile: Profile, declared) -> list[str]:
    """What is wrong with ``profile`` against the options TorchAir declares."""
    found = []
    for column, options in profile.settings.items():
        for option, value in options.items():
            known = declared[column].get(option)
            if known is None:
                found.append(f"{column}: no option {option}")
            elif not known.allows(value):
                found.append(f"{column}: {option} does not take {value!r}")
            elif value == known.default:
                found.append(f"{column}: {option}={value!r} is the default: no variant")
    return found


def test_every_profile_sets_a_real_option_to_a_value_other_than_its_default(declared):
    assert {p.name: problems(p, declared) for p in profiles.PROFILES} == {
        p.name: [] for p in profiles.PROFILES
    }


@pytest.mark.parametrize(
    ("settings", "expected"),
    [
        ({"ge": {"experimental_config.frozen_paramter": True}}, "no option"),
        ({"npugraph_ex": {"clone_inputs": False}}, "no option"),
        ({"npugraph_ex": {"capture_limit": 0}}, "does not take 0"),
        ({"npugraph_ex": {"clone_input": True}}, "is the default"),
        ({"ge": {"experimental_config.enable_view_optimize": True}}, "is the default"),
    ],
)
def test_a_misspelled_or_default_option_is_found(declared, settings, expected):
    (found,) = problems(Profile("bad", settings, ""), declared)
    assert expected in found


def test_the_reader_follows_torchairs_nested_config_classes(declared):
    frozen = declared["ge"]["experimental_config.frozen_parameter"]
    assert (frozen.kind, frozen.default, frozen.choices) == ("OptionValue", False, (True, False))
    limit = declared["npugraph_ex"]["capture_limit"]
    assert (limit.kind, limit.default, limit.minimum) == ("IntRangeValue", 64, 1)


def test_all_names_every_profile_and_unknown_names_are_refused():
    assert profiles.parse(["all"]) == profiles.names()
    assert profiles.parse(["capture_limit", "no_clone_input", "capture_limit"]) == (
        "capture_limit",
        "no_clone_input",
    )
    with pytest.raises(SystemExit) as exited:
        cli.main(["check", "x", "--options", "frozen_parameters"])
    assert exited.value.code == 2


def test_a_profile_crosses_only_its_columns_and_shape_modes():
    frozen, limit = profiles.get("frozen_parameter"), profiles.get("capture_limit")
    assert [frozen.applies(c, "static") for c in ("eager", "ge", "npugraph_ex")] == [
        False,
        True,
        True,
    ]
    assert not frozen.applies("ge", "dynamic")  # TorchAir refuses a frozen input that grows
    assert [limit.applies("npugraph_ex", s) for s in ("static", "dynamic")] == [False, True]


def test_a_profile_with_nothing_to_act_on_is_idle_with_the_reason():
    mutations = profiles.get("no_input_mutations")
    assert "writes none" in profiles.idle_reason(mutations, ADD)
    assert profiles.idle_reason(mutations, IADD) is None
    views = profiles.get("no_view_optimize")
    assert "no view node" in profiles.idle_reason(views, ADD)
    assert profiles.idle_reason(views, ADD, "view") is None
    assert profiles.idle_reason(profiles.get("no_clone_input"), ADD) is None


def test_options_are_set_on_a_config_and_a_config_without_them_is_found():
    config = SimpleNamespace(
        experimental_config=SimpleNamespace(frozen_parameter=SimpleNamespace(value="0"))
    )
    options = {"experimental_config.frozen_parameter": True}
    assert profiles.unreached(config, options) == [
        "experimental_config.frozen_parameter=True (the graph's config has '0')"
    ]
    profiles.apply(config, options)
    assert profiles.unreached(config, options) == []
    limit = SimpleNamespace(capture_limit=SimpleNamespace(value="1"))  # OptionValue keeps str
    assert profiles.unreached(limit, {"capture_limit": 1}) == []


def test_a_waiver_may_name_a_profile_and_covers_every_profile_without_one(tmp_path):
    (tmp_path / waivers.FILE_NAME).write_text(
        '[[waiver]]\nop = "my_add"\nbackend = "npugraph_ex"\nshapes = "*"\n'
        'profile = "no_clone_input"\nreason = "host fallback"\n\n'
        '[[waiver]]\nop = "my_add"\nbackend = "ge"\nshapes = "*"\nreason = "no CANN"\n'
    )
    package = SimpleNamespace(__file__=str(tmp_path / "my_add" / "__init__.py"))
    op = OpUnderTest(ADD, "my_add")
    waived = waivers.load(package, [op])
    assert waivers.reason_for(waived, op, "npugraph_ex", "static", "no_clone_input")
    assert waivers.reason_for(waived, op, "npugraph_ex", "static") is None
    assert waivers.reason_for(waived, op, "ge", "static", "frozen_parameter") == "no CANN"
    (tmp_path / waivers.FILE_NAME).write_text(
        '[[waiver]]\nop = "my_add"\nbackend = "*"\nshapes = "*"\nprofile = "frozen"\nreason = "x"\n'
    )
    with pytest.raises(waivers.WaiverError, match="unknown profile 'frozen'"):
        waivers.load(package, [op])
