"""Backward passes in several threads at once: each thread's pass is its own, as torch's graph
tasks are (a multi-grad hook asks for the running pass of its own thread)."""

import threading

import pytest

import gradviz


def _multi_grad_hook_calls(torch, threads=4, steps=300):
    """How many times a multi-grad hook over (a, b) fired, and how many of its gradients were
    there, when `threads` threads each run `steps` backward passes at once; and any errors."""
    calls, errors = [], []

    def work():
        try:
            for _ in range(steps):
                a = torch.tensor([1.0, 2.0], requires_grad=True)
                b = torch.tensor([3.0], requires_grad=True)
                handle = torch.autograd.graph.register_multi_grad_hook(
                    (a, b), lambda gs: calls.append(sum(g is not None for g in gs)))
                (a.sum() * 2 + b.sum()).backward()
                handle.remove()
        except Exception as exc:   # noqa: BLE001 - reported by the assertion
            errors.append(repr(exc))

    workers = [threading.Thread(target=work) for _ in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    return len(calls), set(calls), errors


@pytest.mark.parametrize("module", ["gradviz", "torch"])
def test_multi_grad_hooks_fire_once_per_pass_in_every_thread(module):
    torch = gradviz if module == "gradviz" else pytest.importorskip("torch")
    assert _multi_grad_hook_calls(torch) == (1200, {2}, [])
