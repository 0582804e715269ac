"""torch.FloatTensor, torch.LongTensor, ... (the legacy typed constructors older tutorials and
PyTorch's NLP tutorial write) against torch 2.13: data, sizes, dtypes, isinstance, reprs and
errors."""

import numpy as np
import pytest

from test_learner_surface import _same

CASES = {
    "empty": lambda t: t.FloatTensor(),
    "sizes": lambda t: (t.FloatTensor(2, 3).shape, str(t.LongTensor(3).dtype),
                        t.FloatTensor(t.Size([2])).shape),
    "list": lambda t: t.FloatTensor([1, 2]),
    "tuple_is_data": lambda t: t.FloatTensor((2, 3)),
    "nested": lambda t: t.FloatTensor([[1, 2], [3, 4]]),
    "long_truncates": lambda t: t.LongTensor([1.7, 2]),
    "numpy": lambda t: (t.FloatTensor(np.ones(2)), t.LongTensor(np.ones(2))),
    "tensor_same_dtype": lambda t: t.FloatTensor(t.ones(2, requires_grad=True)),
    "tensor_other_dtype": lambda t: t.LongTensor(t.ones(2)),
    "each_dtype": lambda t: [str(c([1]).dtype) for c in (
        t.DoubleTensor, t.HalfTensor, t.IntTensor, t.ShortTensor, t.CharTensor, t.ByteTensor,
        t.BoolTensor)],
    "isinstance": lambda t: (isinstance(t.ones(2), t.FloatTensor),
                             isinstance(t.ones(2), t.LongTensor),
                             isinstance(t.nn.Parameter(t.ones(1)), t.FloatTensor),
                             isinstance(t.arange(2), t.LongTensor), isinstance(3, t.FloatTensor)),
    "reprs": lambda t: (repr(t.FloatTensor), str(t.LongTensor.dtype),
                        repr(type(t.FloatTensor([1])))),
    "device_cpu": lambda t: t.FloatTensor([1], device="cpu"),
    "scalar_data": lambda t: t.FloatTensor(2.5),
    "negative_size": lambda t: t.FloatTensor(-1),
    "type_by_legacy_class": lambda t: (t.ones(2).type(t.LongTensor), t.ones(2).type(t.BoolTensor),
                                       t.arange(2).type("torch.DoubleTensor"),
                                       t.ones(1).type(t.int64)),
    "type_unknown_name": lambda t: t.ones(1).type("torch.Foo"),
    "type_dtype_name": lambda t: t.ones(1).type("float"),
    "nlp_tutorial_target": lambda t: t.nn.functional.nll_loss(
        t.log_softmax(t.tensor([[0.2, 0.8]]), dim=1), t.LongTensor([1])),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_legacy_constructors_match_torch(name):
    _same(CASES[name])
