"""torch.save / torch.load: PyTorch's zip format both ways, weights_only as torch 2.13 has it,
and a NotImplementedError for every argument gradviz does not implement."""

import io
import pickle
import zipfile

import pytest

import gradviz

torch = pytest.importorskip("torch")


class Custom:
    """A class a weights-only load must refuse."""


def _objects(t):
    """Everything a learner's checkpoint holds, built the same way on either library."""
    return {
        "matrix": t.arange(12.0).reshape(3, 4),
        "transposed": t.arange(6.0, dtype=t.float64).reshape(2, 3).t(),
        "scalar": t.tensor(2.5),
        "flag": t.tensor(True),
        "ints": t.tensor([[1, -2], [3, 4]], dtype=t.int32),
        "bytes": t.tensor([0, 255], dtype=t.uint8),
        "half": t.tensor([0.5, -1.25], dtype=t.float16),
        "empty": t.zeros(0, 3),
        "leaf": t.ones(2, requires_grad=True),
        "nonleaf": t.ones(2, requires_grad=True) * 3,
        "param": t.nn.Parameter(t.tensor([1.0, 2.0])),
        "frozen": t.nn.Parameter(t.tensor([1.0]), requires_grad=False),
        "nested": [t.tensor([1.0]), (t.tensor([2]), {"k": 3.5, "s": "text", "n": None})],
        "dtype": t.float64,
        "size": t.Size([2, 3]),
        "device": t.device("cpu"),
        "same_twice": 0,
    }


def _obs(x):
    """Plain data: a tensor as (class, dtype, shape, values, requires_grad)."""
    if hasattr(x, "detach"):
        return (type(x).__name__, str(x.dtype), tuple(x.shape), x.detach().numpy().tolist(),
                x.requires_grad)
    if isinstance(x, dict):
        return (type(x).__name__, {k: _obs(v) for k, v in x.items()})
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, [_obs(v) for v in x])
    return repr(x)


def _saved(t, obj, save=None):
    buf = io.BytesIO()
    (save or t.save)(obj, buf)
    return buf.getvalue()


@pytest.mark.parametrize("writer,reader", [("gradviz", "gradviz"), ("gradviz", "torch"),
                                           ("torch", "gradviz")])
def test_values_dtypes_and_requires_grad_survive(writer, reader):
    w, r = {"gradviz": gradviz, "torch": torch}[writer], {"gradviz": gradviz, "torch": torch}[reader]
    obj = _objects(w)
    loaded = r.load(io.BytesIO(_saved(w, obj)))
    assert _obs(loaded) == _obs(_objects(r))
    assert loaded["leaf"].is_leaf and loaded["nonleaf"].is_leaf


@pytest.mark.parametrize("writer", ["gradviz", "torch"])
def test_a_loaded_tensor_has_version_1_as_in_torch(writer):
    """torch rebuilds each tensor with set_() (an in-place edit); a Parameter shares its
    data's counter."""
    w = {"gradviz": gradviz, "torch": torch}[writer]
    data = _saved(w, {"t": w.ones(2), "p": w.nn.Parameter(w.ones(1))})
    versions = [{k: v._version for k, v in r.load(io.BytesIO(data)).items()}
                for r in (gradviz, torch)]
    assert versions[0] == versions[1] == {"t": 1, "p": 1}


@pytest.mark.parametrize("edit", ["mul_(2)", "add_(1)", "copy_(r.ones(2, 3))"])
def test_writing_to_a_loaded_overlapping_tensor_is_refused_as_in_torch(edit):
    data = _saved(torch, {"e": torch.arange(3.0).expand(2, 3)})

    def error(r):
        e = r.load(io.BytesIO(data))["e"]
        with pytest.raises(RuntimeError) as caught:
            eval(f"e.{edit}", {"e": e, "r": r})     # noqa: S307 - the edits above
        return str(caught.value).splitlines()[0]
    assert error(gradviz) == error(torch)
    assert gradviz.load(io.BytesIO(data))["e"].mul(2).tolist() == [[0.0, 2.0, 4.0]] * 2


def test_the_archive_has_torchs_records_aligned(tmp_path):
    ours, theirs = tmp_path / "ours.pt", tmp_path / "theirs.pt"
    gradviz.save({"w": gradviz.ones(2, 3), "b": gradviz.zeros(3)}, ours)
    torch.save({"w": torch.ones(2, 3), "b": torch.zeros(3)}, theirs)
    names = []
    for path in (ours, theirs):
        with zipfile.ZipFile(path) as zf:
            names.append([n.replace(path.stem, "NAME") for n in zf.namelist()])
            for info in zf.infolist():
                assert info.compress_type == zipfile.ZIP_STORED
            raw = path.read_bytes()
            for info in zf.infolist():
                start = info.header_offset + 30 + int.from_bytes(
                    raw[info.header_offset + 26:info.header_offset + 28], "little") + \
                    int.from_bytes(raw[info.header_offset + 28:info.header_offset + 30], "little")
                assert start % 64 == 0, info.filename
            assert zf.read(f"{path.stem}/byteorder") == b"little"
            assert zf.read(f"{path.stem}/version") == b"3\n"
    assert names[0] == names[1]


def _batch(t):
    return t.arange(15.0).reshape(5, 3).sin()


def _train_and_checkpoint(t, path):
    t.manual_seed(0)
    model = t.nn.Sequential(t.nn.Linear(3, 4, bias=False), t.nn.BatchNorm1d(4), t.nn.ReLU(),
                            t.nn.Linear(4, 1))
    opt = t.optim.Adam(model.parameters(), lr=0.01)
    model(_batch(t)).pow(2).sum().backward()
    opt.step()
    t.save(model.state_dict(), path / "model.pt")
    t.save({"epoch": 1, "optimizer": opt.state_dict()}, path / "opt.pt")


def _resume(t, path):
    model = t.nn.Sequential(t.nn.Linear(3, 4, bias=False), t.nn.BatchNorm1d(4), t.nn.ReLU(),
                            t.nn.Linear(4, 1))
    opt = t.optim.Adam(model.parameters(), lr=0.5)
    keys = model.load_state_dict(t.load(path / "model.pt"))
    checkpoint = t.load(path / "opt.pt")
    opt.load_state_dict(checkpoint["optimizer"])
    model(_batch(t)).pow(2).sum().backward()
    opt.step()
    return str(keys), checkpoint["epoch"], _obs(model.state_dict()), _obs(opt.state_dict())


@pytest.mark.parametrize("writer", ["gradviz", "torch"])
def test_the_learners_checkpoint_resumes_in_either_library(tmp_path, writer):
    _train_and_checkpoint({"gradviz": gradviz, "torch": torch}[writer], tmp_path)
    ours, theirs = _resume(gradviz, tmp_path), _resume(torch, tmp_path)
    assert ours[:2] == theirs[:2]
    _close(ours[2:], theirs[2:])


def _close(a, b):
    # float32 training steps may differ in the last bit between the libraries
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _close(x, y)
    elif isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            _close(a[k], b[k])
    elif isinstance(a, float):
        assert a == pytest.approx(b, rel=1e-5, abs=1e-7)
    else:
        assert a == b


def _first_error(fn):
    try:
        fn()
    except Exception as exc:        # noqa: BLE001 - the error is the observation
        return type(exc).__name__, str(exc)
    return None


@pytest.mark.parametrize("case", ["disallowed", "allowed_by_context", "weights_only_false",
                                  "cuda", "cpu_device", "pickle_module_default",
                                  "pickle_module_weights_only"])
def test_load_options_match_torch(case):
    def run(t):
        buf = io.BytesIO(_saved(t, {"x": t.ones(2), "c": Custom()}))
        plain = io.BytesIO(_saved(t, {"x": t.ones(2)}))
        if case == "disallowed":
            return t.load(buf)
        if case == "allowed_by_context":
            with t.serialization.safe_globals([Custom]):
                return type(t.load(buf)["c"]).__name__
        if case == "weights_only_false":
            return type(t.load(buf, weights_only=False)["c"]).__name__
        if case == "cuda":
            return t.load(plain, map_location="cuda")
        if case == "cpu_device":
            return _obs(t.load(plain, map_location=t.device("cpu")))
        if case == "pickle_module_default":
            return _obs(t.load(plain, pickle_module=pickle))
        return t.load(plain, pickle_module=pickle, weights_only=True)

    ours, theirs = _first_error(lambda: run(gradviz)), _first_error(lambda: run(torch))
    if ours is None:
        assert run(gradviz) == run(torch)
    assert ours == theirs


@pytest.mark.parametrize("call", [
    lambda buf: gradviz.load(buf, mmap=True),
    lambda buf: gradviz.load(buf, map_location={"cuda:0": "cpu"}),
    lambda buf: gradviz.load(buf, map_location=lambda storage, loc: storage),
    lambda buf: gradviz.load(buf, encoding="latin1"),
    lambda buf: gradviz.save(gradviz.ones(1), buf, _use_new_zipfile_serialization=False),
    lambda buf: gradviz.save(gradviz.ones(1), buf, pickle_module=io),
])
def test_what_gradviz_does_not_implement_says_so(call):
    buf = io.BytesIO(_saved(gradviz, {"x": gradviz.ones(2)}))
    with pytest.raises(NotImplementedError, match="run with --backend torch to use PyTorch"):
        call(buf)


def test_a_legacy_torch_file_is_refused_clearly():
    legacy = io.BytesIO()
    torch.save(torch.ones(2), legacy, _use_new_zipfile_serialization=False)
    legacy.seek(0)
    with pytest.raises(NotImplementedError, match="legacy .* format.*--backend torch"):
        gradviz.load(legacy)


def test_a_whole_module_round_trips_without_weights_only():
    gradviz.manual_seed(0)
    model = gradviz.nn.Sequential(gradviz.nn.Linear(2, 2), gradviz.nn.Tanh())
    loaded = gradviz.load(io.BytesIO(_saved(gradviz, model)), weights_only=False)
    assert repr(loaded) == repr(model)
    assert _obs(loaded.state_dict()) == _obs(model.state_dict())
