"""One variant's instance at one shape, in torch tensors: what ProblemInstance is to a C++ variant
(core/problem.hpp). The suite (kgate._engine) asks for it, prepares it, grows its input copies,
launches it on its own stream and checks it; the check is the engine's (engine.compare), the values
are torch's.
"""

import time

from kgate.engine import engine

# kgate's input distribution (base/random.hpp, Distribution): magnitudes in [1/64, 1) with a random
# sign, so that no input is zero (zeros hide unwritten outputs and wrong indexing).
MIN_MAGNITUDE, MAX_MAGNITUDE = 1.0 / 64, 1.0

_DTYPE_NAMES = {"torch.bfloat16": "bf16", "torch.float16": "fp16", "torch.float32": "fp32", "torch.int32": "i32"}


def random_tensor(size, dtype, generator, symmetric=True, min_magnitude=MIN_MAGNITUDE, max_magnitude=MAX_MAGNITUDE):
    """Random values of kgate's distribution, drawn on the generator's device: magnitudes uniform in
    [min_magnitude, max_magnitude) (kgate's [1/64, 1) unless a family draws another range), with a
    random sign when `symmetric`."""
    import torch
    if not 0 < min_magnitude < max_magnitude:
        raise ValueError(f"random_tensor: magnitudes [{min_magnitude}, {max_magnitude}) must be a range above zero (zeros hide "
                         "unwritten outputs)")
    magnitude = torch.rand(size, generator=generator, device=generator.device) * (max_magnitude - min_magnitude) + min_magnitude
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
    outputs poisoned. prepare() readies it for its first launch."""

    def __init__(self, variant, shape, seed):
        import torch
        self.variant, self.family, self.shape, self.seed = variant, variant.family, shape, seed
        self.copies = [self._make_copy(0)]
        self.bytes_per_copy = sum(t.numel() * t.element_size() for t in _tensors(self.copies[0]).values())
        self.checked = self.outputs_of + list(self.family.in_place)  # what the check compares
        self.call = variant.fn  # what a launch calls: the variant, or what its prepare returned
        self.expected = None
        self.returned = None  # what copy 0's launch returned, kept while the check awaits it
        self._check_pending = False
        self._streams = {}
        torch.cuda.synchronize()

    def prepare(self, keep_reference):
        """Before the first launch: the reference of copy 0's inputs when `keep_reference` (before
        any launch, so that in-place variants are checked against the inputs they were given), then
        the variant's prepare, if it has one, untimed. Returns what it adds to the record's
        provenance: {"compile_s": the prepare's wall time}."""
        import torch
        if keep_reference:
            self.expected = self._reference(self.copies[0])
            self._check_pending = True
        if self.variant.prepare is None:
            return {}
        # A prepare may call the variant (torch.compile compiles at the first call): copy 0 is
        # given back as the first launch expects it, in-place inputs as drawn and outputs poisoned.
        arguments = self.copies[0]
        drawn = {name: arguments[name].clone() for name in self.family.in_place}
        torch.cuda.synchronize()
        started = time.perf_counter()
        self.call = self.variant.prepare(arguments)
        torch.cuda.synchronize()
        elapsed = time.perf_counter() - started
        for name, tensor in drawn.items():
            arguments[name].copy_(tensor)
        for name in self.outputs_of:
            _poison(arguments[name])
        torch.cuda.synchronize()
        return {"compile_s": f"{elapsed:.2f}"}

    def _make_copy(self, copy):
        import torch
        generator = torch.Generator(device="cuda")
        seed = self.seed if copy == 0 else engine().derive_seed(self.seed, f"copy {copy}")
        generator.manual_seed(seed & 0x7FFF_FFFF_FFFF_FFFF)
        inputs = self.family.inputs(self.shape, generator)
        outputs = self.family.outputs(self.shape)
        clash = set(inputs) & set(outputs)
        if clash:
            raise ValueError(f"family {self.family.name}: {sorted(clash)} named both as input and output (an input the "
                             "variants update is named in the family's in_place)")
        not_inputs = [name for name in self.family.in_place if not isinstance(inputs.get(name), torch.Tensor)]
        if not_inputs:
            raise ValueError(f"family {self.family.name}: in_place names {not_inputs}, which are not input tensors")
        for name, tensor in _tensors(inputs).items():
            if copy == 0 and tensor.is_floating_point() and not bool(tensor.ne(0).any()):
                raise ValueError(f"family {self.family.name}: input {name} is all zeros at {self.shape.id}; "
                                 "draw it with kgate.random_tensor (zeros hide unwritten outputs)")
        for tensor in _tensors(outputs).values():
            _poison(tensor)
        self.outputs_of = list(outputs)
        return {**inputs, **outputs}

    def _by_name(self, values, what):
        """`values`, a dict or one tensor (where one tensor is checked), as {name: tensor} holding
        every checked name."""
        import torch
        if isinstance(values, torch.Tensor):
            if len(self.checked) != 1:
                raise ValueError(f"{what} one tensor for the checked tensors {self.checked} (return a dict by name)")
            return {self.checked[0]: values}
        missing = set(self.checked) - set(values)
        if missing:
            raise ValueError(f"{what} no {sorted(missing)}")
        return values

    def _reference(self, values):
        import torch
        as_fp64 = {k: v.double() if isinstance(v, torch.Tensor) and v.is_floating_point() else v
                   for k, v in values.items() if k not in self.outputs_of}
        expected = self._by_name(self.family.reference(**as_fp64), f"family {self.family.name}: the reference returned")
        return {k: expected[k].detach().double().contiguous().reshape(-1).cpu() for k in self.checked}

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
            returned = self.call(**self.copies[copy])
        if copy == 0 and self._check_pending:
            self.returned = returned

    def check(self):
        """Copy 0's outputs (those its last launch returned, or else its output and in-place
        tensors) against the reference, each by the engine's rule (AccuracyReport)."""
        import torch
        if self.expected is None:
            raise RuntimeError("this instance was prepared without its reference (prepare(keep_reference=False))")
        torch.cuda.synchronize()
        returned, self.returned, self._check_pending = self.returned, None, False
        if isinstance(returned, (dict, torch.Tensor)):
            outputs = self._by_name(returned, f"variant {self.variant.full_name} returned")
        else:  # nothing, or what a launch returns beside writing its outputs (a Triton kernel handle)
            outputs = self.copies[0]
        reports = []
        for name in self.checked:
            got = outputs[name]
            dtype = dtype_name(got)
            expected = self.expected[name]
            if expected.numel() != got.numel():
                raise ValueError(f"family {self.family.name}: the reference's {name} has {expected.numel()} elements, "
                                 f"the output {got.numel()}")
            reports.append(engine().compare(name, dtype, _host_bytes(got), _host_bytes(expected), self.family.tolerance_of(name, dtype)))
        return reports
