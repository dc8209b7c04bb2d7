"""`opsdk audit`'s notes on host arguments (#31): an int list named like lengths, or one
the specs declare varying, gets a note with the fix; one the update table updates gets
none, and the op is said updatable."""

from dataclasses import dataclass

import torch

from opsdk._runtime.inputs import F32, OneOf, Support, declare_supported
from opsdk.audit.checks import host_args

_LIB = torch.library.Library("t_audit_host_args", "FRAGMENT")
_LIB.define("attn(Tensor q, *, SymInt[]? actual_seq_lengths_kv=None, int[] shifts=[]) -> Tensor")
_LIB.define("roll(Tensor x, int[] shifts) -> Tensor")
_LIB.define("top_k(Tensor x, SymInt k) -> (Tensor, Tensor)")
ATTN = torch.ops.t_audit_host_args.attn.default
ROLL = torch.ops.t_audit_host_args.roll.default
TOP_K = torch.ops.t_audit_host_args.top_k.default


@dataclass
class Entry:
    updated_param_keys: list
    updated_param_indices: list | None = None


def test_a_length_list_gets_a_note_with_the_fix(monkeypatch):
    monkeypatch.setattr(host_args, "_table", lambda: ({}, ""))
    [note] = host_args.notes(ATTN)
    assert note.startswith("host argument actual_seq_lengths_kv (SymInt[]?) changes per call")
    assert "opsdk new --attach t_audit_host_args::attn --updatable actual_seq_lengths_kv" in note
    assert host_args.notes(ROLL) == []  # a roll's shifts: a constant of its call site


def test_an_op_in_the_update_table_is_updatable_without_a_note(monkeypatch):
    table = {ATTN: Entry(["actual_seq_lengths_kv"])}
    monkeypatch.setattr(host_args, "_table", lambda: (table, ""))
    assert host_args.notes(ATTN) == ["updatable on replay: actual_seq_lengths_kv"]


def test_a_list_declared_varying_gets_a_note_and_an_unread_table_says_why(monkeypatch):
    declare_supported(ROLL, [Support(F32(2, 3), OneOf([1], [2]))], non_contiguous=False)
    monkeypatch.setattr(host_args, "_table", lambda: ({}, "the table cannot be read here (x)"))
    [note] = host_args.notes(ROLL)
    assert "host argument shifts (int[]) changes per call" in note
    assert "make it SymInt[] to update it on replay" in note
    assert note.endswith("(the table cannot be read here (x))")


def test_an_op_no_update_can_serve_is_not_told_to_declare_one(monkeypatch):
    """top_k's k (declared varying) sets its outputs, and the op has two: no --updatable."""
    declare_supported(TOP_K, [Support(F32(2, 8), OneOf(2, 3, 4))], non_contiguous=False)
    monkeypatch.setattr(host_args, "_table", lambda: ({}, ""))
    [note] = host_args.notes(TOP_K)
    assert "host argument k (SymInt) changes per call" in note
    assert "--updatable" not in note
    assert "no update on replay can serve it (t_audit_host_args::top_k returns 2" in note
