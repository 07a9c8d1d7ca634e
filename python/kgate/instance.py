"""One variant's instance at one shape, in torch tensors: what ProblemInstance is to a C++ variant
(core/problem.hpp). The suite (kgate._engine) asks for it, grows its input copies, launches it on
its own stream and checks it; the check is the engine's (engine.compare), the values are torch's.
"""

from kgate.engine import engine

# kgate's input distribution (base/random.hpp, Distribution): magnitudes in [1/64, 1) with a random
# sign, so that no input is zero (zeros hide unwritten outputs and wrong indexing).
MIN_MAGNITUDE, MAX_MAGNITUDE = 1.0 / 64, 1.0

_DTYPE_NAMES = {"torch.bfloat16": "bf16", "torch.float16": "fp16", "torch.float32": "fp32", "torch.int32": "i32"}


def random_tensor(size, dtype, generator, symmetric=True):
    """Random values of kgate's distribution, drawn on the generator's device."""
    import torch
    magnitude = torch.rand(size, generator=generator, device=generator.device) * (MAX_MAGNITUDE - MIN_MAGNITUDE) + MIN_MAGNITUDE
    if symmetric:
        sign = torch.randint(0, 2, magnitude.shape, generator=generator, device=generator.device, dtype=torch.int8)
        magnitude = torch.where(sign.bool(), -magnitude, magnitude)
    return magnitude.to(dtype)


def dtype_name(tensor):
    name = _DTYPE_NAMES.get(str(tensor.dtype))
    if name is None:
        raise TypeError(f"kgate checks bf16, fp16, fp32 and int32 outputs; this one is {tensor.dtype}")
    return name


def _poison(tensor):
    """Fills an output with the poison the engine recognizes as never written (a NaN payload)."""
    import torch
    bits = {2: (torch.int16, engine().poison_bits_16()), 4: (torch.int32, engine().poison_bits_32())}.get(tensor.element_size())
    if bits is None or not tensor.is_floating_point():
        tensor.fill_(-0x55555556 if tensor.element_size() == 4 else 0x55)  # a value no test expects by accident
        return
    view_dtype, pattern = bits
    signed = pattern - (1 << (8 * tensor.element_size())) if pattern >= 1 << (8 * tensor.element_size() - 1) else pattern
    tensor.view(view_dtype).fill_(signed)


def _host_bytes(tensor):
    """A tensor's raw contents in memory order, as bytes (the engine's compare reads them)."""
    import ctypes
    host = tensor.detach().contiguous().cpu().clone()
    return ctypes.string_at(host.data_ptr(), host.numel() * host.element_size())


def _tensors(values):
    import torch
    return {k: v for k, v in values.items() if isinstance(v, torch.Tensor)}


class Instance:
    """Copy 0 drawn from `seed`, each further copy c from derive_seed(seed, "copy c"); every copy's
    outputs poisoned. With `keep_reference`, the reference of copy 0's inputs is computed before
    any launch (so in-place variants are checked against the inputs they were given)."""

    def __init__(self, variant, shape, seed, keep_reference):
        import torch
        self.variant, self.family, self.shape, self.seed = variant, variant.family, shape, seed
        self.copies = [self._make_copy(0)]
        self.bytes_per_copy = sum(t.numel() * t.element_size() for t in _tensors(self.copies[0]).values())
        self.expected = self._reference(self.copies[0]) if keep_reference else None
        self._streams = {}
        torch.cuda.synchronize()

    def _make_copy(self, copy):
        import torch
        generator = torch.Generator(device="cuda")
        seed = self.seed if copy == 0 else engine().derive_seed(self.seed, f"copy {copy}")
        generator.manual_seed(seed & 0x7FFF_FFFF_FFFF_FFFF)
        inputs = self.family.inputs(self.shape, generator)
        outputs = self.family.outputs(self.shape)
        clash = set(inputs) & set(outputs)
        if clash:
            raise ValueError(f"family {self.family.name}: {sorted(clash)} named both as input and output")
        for name, tensor in _tensors(inputs).items():
            if copy == 0 and tensor.is_floating_point() and not bool(tensor.ne(0).any()):
                raise ValueError(f"family {self.family.name}: input {name} is all zeros at {self.shape.id}; "
                                 "draw it with kgate.random_tensor (zeros hide unwritten outputs)")
        for tensor in _tensors(outputs).values():
            _poison(tensor)
        self.outputs_of = list(outputs)
        return {**inputs, **outputs}

    def _reference(self, values):
        import torch
        as_fp64 = {k: v.double() if isinstance(v, torch.Tensor) and v.is_floating_point() else v
                   for k, v in values.items() if k not in self.outputs_of}
        expected = self.family.reference(**as_fp64)
        if isinstance(expected, torch.Tensor):
            if len(self.outputs_of) != 1:
                raise ValueError(f"family {self.family.name}: the reference returned one tensor for outputs {self.outputs_of}")
            expected = {self.outputs_of[0]: expected}
        missing = set(self.outputs_of) - set(expected)
        if missing:
            raise ValueError(f"family {self.family.name}: the reference returned no {sorted(missing)}")
        return {k: expected[k].detach().double().contiguous().reshape(-1).cpu() for k in self.outputs_of}

    def make_copies(self, count):
        while len(self.copies) < count:
            self.copies.append(self._make_copy(len(self.copies)))

    def _stream(self, handle):
        """The engine's stream as torch's current stream (0: the device's current stream)."""
        import torch
        if handle == 0:
            return torch.cuda.current_stream()
        if handle not in self._streams:
            self._streams[handle] = torch.cuda.ExternalStream(handle)
        return self._streams[handle]

    def launch(self, copy, stream):
        import torch
        with torch.cuda.stream(self._stream(stream)):
            self.variant.fn(**self.copies[copy])

    def check(self):
        """Copy 0's outputs against the reference, each by the engine's rule (AccuracyReport)."""
        import torch
        if self.expected is None:
            raise RuntimeError("this instance was made without its reference (keep_reference=False)")
        torch.cuda.synchronize()
        reports = []
        for name in self.outputs_of:
            got = self.copies[0][name]
            dtype = dtype_name(got)
            expected = self.expected[name]
            if expected.numel() != got.numel():
                raise ValueError(f"family {self.family.name}: the reference's {name} has {expected.numel()} elements, "
                                 f"the output {got.numel()}")
            reports.append(engine().compare(name, dtype, _host_bytes(got), _host_bytes(expected), self.family.tolerance_of(name, dtype)))
        return reports
