"""The GPU that kgate times on, as the engine's device probe sees it (measure/device.hpp)."""

from kgate.engine import EngineUnavailable, engine


def device():
    """The current CUDA device: name, compute_capability (major * 10 + minor), global_memory_bytes, ...

    Raises EngineUnavailable where the engine is absent or there is no usable GPU, with the probe's reason.
    """
    probe = engine().probe_device()
    if probe.device is None:
        raise EngineUnavailable(f"no usable GPU: {probe.reason}")
    return probe.device
