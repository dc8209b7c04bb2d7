"""TorchAir offline: its real Python over a stand-in for its native graph engine.

``ge``: the ``_torchair`` native module (IR queries, GE graph sessions), a GE
reference executor and readable dumps of its graphs; ``torchair`` brings TorchAir and
npugraph_ex up over it and the emulated npu device (:mod:`opsdk._runtime.npu`).
"""
