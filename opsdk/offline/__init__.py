"""Offline stand-ins for the native layers a CPU machine lacks.

``ge``: the ``_torchair`` native module (IR queries, GE graph sessions) and a
GE reference executor; ``npu``: the emulated npu device, its streams and graph
capture, and a torch_npu stand-in. ``locator`` finds (or fetches) TorchAir's
Python code; ``torchair`` brings TorchAir and npugraph_ex up on either;
``patches`` holds every patch of a private torch, TorchAir or torch_npu API.
"""
