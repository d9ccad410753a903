"""The Python package on simulated worlds with numpy: every dtype and op, in place and out of place,
batches, inspection, and every error path. No GPU and no PyTorch needed."""

import threading

import numpy as np
import pytest

import peerreduce
from peerreduce import _buffers
from sim_data import NUMPY_DTYPES, OPS, inputs, reference


@pytest.mark.parametrize("dtype", NUMPY_DTYPES)
@pytest.mark.parametrize("op", OPS)
def test_every_dtype_and_op_matches_the_reference_in_place(world4, dtype, op):
    world, comms = world4
    arrays = inputs(4, 1001, dtype, seed=hash((dtype, op)) % 1000)
    expected = reference(arrays, op)
    for comm, a in zip(comms, arrays):
        assert comm.all_reduce(a, op=op) is a
    world.run()
    for a in arrays:
        np.testing.assert_array_equal(a, expected)


@pytest.mark.parametrize("dtype", ["int32", "float32", "float16"])
def test_out_of_place_leaves_the_input_and_fills_out(world4, dtype):
    world, comms = world4
    arrays = inputs(4, 333, dtype, seed=7)
    originals = [a.copy() for a in arrays]
    outs = [np.zeros_like(a) for a in arrays]
    for comm, a, o in zip(comms, arrays, outs):
        assert comm.all_reduce(a, out=o) is o
    world.run()
    expected = reference(originals, "sum")
    for a, original, o in zip(arrays, originals, outs):
        np.testing.assert_array_equal(a, original)
        np.testing.assert_array_equal(o, expected)


def test_results_are_identical_bits_on_every_rank_and_rerun():
    results = []
    for _ in range(2):
        with peerreduce.SimWorld(3, seed=11) as world:
            comms = world.communicators()
            rng = np.random.default_rng(5)
            arrays = [rng.standard_normal(4097).astype(np.float32) for _ in range(3)]
            for comm, a in zip(comms, arrays):
                comm.all_reduce(a)
            world.run()
            assert all(np.array_equal(arrays[0].view(np.uint32), a.view(np.uint32)) for a in arrays)
            results.append(arrays[0].copy())
            for c in comms:
                c.close()
    assert np.array_equal(results[0].view(np.uint32), results[1].view(np.uint32))


def test_batches_reduce_every_tensor(world4):
    world, comms = world4
    sizes = [1, 17, 256, 1000, 3]
    per_rank = [[np.full(n, r + 1, dtype=np.float32) for n in sizes] for r in range(4)]
    for comm, tensors in zip(comms, per_rank):
        comm.all_reduce_batch(tensors)
    world.run()
    for tensors in per_rank:
        for t in tensors:
            assert np.all(t == 10.0)
    assert comms[0].all_reduce_batch([]) == []


def test_ranks_on_threads_with_bootstraps_and_collective_synchronize():
    with peerreduce.SimWorld(3) as world:
        arrays = [np.full(100, r, dtype=np.int64) for r in range(3)]
        failures = []

        def rank(r):
            try:
                with peerreduce.Communicator(r, 3, world.bootstrap()) as comm:
                    assert comm.rank == r and comm.world_size == 3
                    assert comm.device == -1  # a simulated rank drives no GPU
                    comm.all_reduce(arrays[r], op="max")
                    comm.synchronize()
            except BaseException as e:  # reported below
                failures.append(e)

        threads = [threading.Thread(target=rank, args=(r,)) for r in range(3)]
        [t.start() for t in threads]
        [t.join(60) for t in threads]
        assert not failures, failures
        assert all(np.all(a == 2) for a in arrays)


def test_a_python_rendezvous_on_the_simulator():
    with peerreduce.SimWorld(2) as world:
        blocks, arrived, lock = {}, threading.Barrier(2), threading.Lock()
        rounds = {}

        def make_gather(rank):
            step = [0]

            def gather(data, timeout_s):
                key = step[0]
                step[0] += 1
                with lock:
                    rounds.setdefault(key, {})[rank] = data
                arrived.wait(timeout_s)
                return [rounds[key][r] for r in range(2)]

            return gather

        arrays = [np.ones(64, dtype=np.float64) * (r + 1) for r in range(2)]
        errors = []

        def rank(r):
            try:
                bootstrap = world.attach(peerreduce.CallbackBootstrap(make_gather(r), name="python test"))
                with peerreduce.Communicator(r, 2, bootstrap) as comm:
                    comm.all_reduce(arrays[r], op="avg")
                    comm.synchronize()
            except BaseException as e:
                errors.append(e)

        threads = [threading.Thread(target=rank, args=(r,)) for r in range(2)]
        [t.start() for t in threads]
        [t.join(60) for t in threads]
        assert not errors, errors
        assert all(np.all(a == 1.5) for a in arrays)
        del blocks


def test_a_failing_rendezvous_raises_the_librarys_error_chained_to_the_callbacks():
    with peerreduce.SimWorld(1) as world:
        def gather(data, timeout_s):
            raise RuntimeError("the store is down")

        bootstrap = world.attach(peerreduce.CallbackBootstrap(gather, name="broken store"))
        with pytest.raises(peerreduce.UnavailableError) as caught:
            peerreduce.Communicator(0, 1, bootstrap, config=None)
        assert "broken store" in caught.value.message
        assert caught.value.code == 10
        assert isinstance(caught.value.__cause__, RuntimeError)


def test_a_rendezvous_that_hangs_is_a_timeout_bounded_by_the_configured_timeout(monkeypatch):
    monkeypatch.setenv("PEERREDUCE_TIMEOUT_MS", "200")
    monkeypatch.setenv("PEERREDUCE_BOOTSTRAP_TIMEOUT_MS", "200")  # bootstrap waits have a floor of their own
    release = threading.Event()
    with peerreduce.SimWorld(1) as world:
        bootstrap = world.attach(peerreduce.CallbackBootstrap(lambda data, t: release.wait(30) and [data],
                                                              name="slow store"))
        with pytest.raises(peerreduce.TimeoutError) as caught:
            peerreduce.Communicator(0, 1, bootstrap)
        assert "did not return within 200 ms" in caught.value.message
        assert isinstance(caught.value, TimeoutError)  # also the builtin, for generic handlers
        release.set()


def test_inspection_is_plain_python_data(world4):
    world, comms = world4
    stats = comms[0].memory_stats()
    assert stats["capacity_bytes"] > 0 and isinstance(stats["fragmentation"], float)
    assert comms[1].pinned_stats()["limit_bytes"] > 0
    explained = comms[2].explain(1 << 20, "float32")
    assert explained["chosen"] == explained["candidates"][0]["algorithm"]
    assert explained["candidates"] and explained["plan"]
    for c in comms:
        c.enable_profiling(8)
    arrays = inputs(4, 512, "float32", seed=1)
    for comm, a in zip(comms, arrays):
        comm.all_reduce(a)
    world.run()
    profile = comms[0].profile()
    assert profile["operations"] == 1 and profile["timed"] == 1 and profile["total_us"] > 0


def test_registration_is_collective(world4):
    world, comms = world4
    arrays = [np.zeros(256, dtype=np.float32) for _ in range(4)]
    registered = [None] * 4

    def rank(r):
        registered[r] = comms[r].register(arrays[r])

    threads = [threading.Thread(target=rank, args=(r,)) for r in range(4)]
    [t.start() for t in threads]
    [t.join(60) for t in threads]
    assert all(r is not None for r in registered)
    threads = [threading.Thread(target=registered[r].deregister) for r in range(4)]
    [t.start() for t in threads]
    [t.join(60) for t in threads]


# --- every error path


def test_bad_dtype_is_refused_by_name(world4):
    _, comms = world4
    with pytest.raises(peerreduce.InvalidArgumentError, match="complex64"):
        comms[0].all_reduce(np.zeros(4, dtype=np.complex64))
    with pytest.raises(peerreduce.InvalidArgumentError, match="not one of"):
        comms[0].all_reduce(np.zeros(4, dtype=np.float32), op="xor")
    with pytest.raises(peerreduce.InvalidArgumentError, match="list"):
        comms[0].all_reduce([1.0, 2.0])


def test_non_contiguous_and_read_only_inputs_are_refused(world4):
    _, comms = world4
    with pytest.raises(peerreduce.InvalidArgumentError, match="contiguous"):
        comms[0].all_reduce(np.zeros((4, 4), dtype=np.float32)[:, 1])
    frozen = np.zeros(4, dtype=np.float32)
    frozen.flags.writeable = False
    with pytest.raises(peerreduce.InvalidArgumentError, match="read-only"):
        comms[0].all_reduce(frozen)


def test_mismatched_out_is_refused(world4):
    _, comms = world4
    with pytest.raises(peerreduce.InvalidArgumentError, match="must match"):
        comms[0].all_reduce(np.zeros(4, dtype=np.float32), out=np.zeros(5, dtype=np.float32))
    with pytest.raises(peerreduce.InvalidArgumentError, match="must match"):
        comms[0].all_reduce(np.zeros(4, dtype=np.float32), out=np.zeros(4, dtype=np.float64))
    with pytest.raises(peerreduce.InvalidArgumentError, match="shares one dtype"):
        comms[0].all_reduce_batch([np.zeros(4, dtype=np.float32), np.zeros(4, dtype=np.int32)])


def test_a_closed_communicator_and_world_refuse_every_call():
    world = peerreduce.SimWorld(2)
    comms = world.communicators()
    comms[0].close()
    comms[0].close()  # twice is fine
    with pytest.raises(peerreduce.InvalidArgumentError, match="closed"):
        comms[0].all_reduce(np.zeros(4, dtype=np.float32))
    with pytest.raises(peerreduce.InvalidArgumentError, match="closed"):
        _ = comms[0].rank
    comms[1].close()
    world.close()
    with pytest.raises(peerreduce.InvalidArgumentError, match="closed"):
        world.run()


def test_an_aborted_communicator_raises_aborted():
    with peerreduce.SimWorld(2) as world:
        comms = world.communicators()
        comms[0].abort()
        with pytest.raises(peerreduce.AbortedError, match="aborted"):
            comms[0].all_reduce(np.zeros(4, dtype=np.float32))
        for c in comms:
            c.close()


def test_bad_arguments_to_the_world_and_communicator_are_typed_errors():
    with pytest.raises(peerreduce.InvalidArgumentError, match="65"):
        peerreduce.SimWorld(65)
    with pytest.raises(peerreduce.InvalidArgumentError, match="bootstrap"):
        peerreduce.Communicator(0, 1, object())
    with peerreduce.SimWorld(2) as world:
        with pytest.raises(peerreduce.InvalidArgumentError, match="simulated world of 2"):
            peerreduce.Communicator(0, 3, world.bootstrap())


def test_errors_carry_code_and_message_and_the_class_for_each_code():
    from peerreduce import errors
    for code in range(1, 13):
        error = errors.from_code(code, f"message {code}")
        assert isinstance(error, peerreduce.Error) and error.code == code and str(error) == f"message {code}"
    unknown = errors.from_code(99, "odd")
    assert isinstance(unknown, peerreduce.InternalError) and "99" in str(unknown)


def test_the_library_that_cannot_be_found_is_named(monkeypatch, tmp_path):
    from peerreduce import _native
    monkeypatch.setattr(_native, "_library", None)
    monkeypatch.setenv("PEERREDUCE_LIBRARY", str(tmp_path / "nowhere.so"))
    monkeypatch.setattr(_native, "_candidates", lambda: [str(tmp_path / "nowhere.so")])
    with pytest.raises(peerreduce.LibraryNotFoundError, match="nowhere.so"):
        _native.library()


def test_dtype_tables_match_the_c_header():
    assert _buffers.DTYPE_CODES["float32"] == 8 and _buffers.DTYPE_CODES["bfloat16"] == 7
    # torch's names of the OCP 8-bit floats, prFloat8e4m3 and prFloat8e5m2; not the fnuz variants.
    assert _buffers.DTYPE_CODES["float8_e4m3fn"] == 10 and _buffers.DTYPE_CODES["float8_e5m2"] == 11
    assert _buffers.dtype_code("torch.float8_e5m2") == 11
    assert "float8_e4m3fnuz" not in _buffers.DTYPE_CODES
    assert sorted(_buffers.DTYPE_CODES.values()) == list(range(12))
    assert _buffers.OP_CODES == {"sum": 0, "prod": 1, "min": 2, "max": 3, "avg": 4}


def test_a_configuration_by_setting_name_reaches_the_communicator():
    with peerreduce.SimWorld(4) as world:
        comms = world.communicators(config={"PEERREDUCE_ALGO": "ring", "PEERREDUCE_SCRATCH_BYTES": "1M"})
        assert comms[0].explain(1 << 20, "float32")["chosen"] == "ring"
        arrays = inputs(4, 70000, "float32", seed=2)
        expected = reference(arrays, "sum")
        for comm, a in zip(comms, arrays):
            comm.all_reduce(a)
        world.run()
        np.testing.assert_array_equal(arrays[3], expected)
        for c in comms:
            c.close()
    with pytest.raises(peerreduce.InvalidArgumentError, match="PEERREDUCE_NO_SUCH"):
        peerreduce.SimWorld(2).communicators(config={"PEERREDUCE_NO_SUCH": "1"})
    with pytest.raises(peerreduce.InvalidArgumentError, match="PEERREDUCE_TIMEOUT_MS"):
        peerreduce.SimWorld(2).communicators(config={"PEERREDUCE_TIMEOUT_MS": "-5"})


def test_the_loaded_library_has_the_packages_major_and_minor_version():
    major, minor, patch = peerreduce.library_version()
    assert (major, minor) == tuple(int(p) for p in peerreduce.__version__.split(".")[:2])
    assert patch >= 0


def test_the_loaded_library_names_its_gpu_platform():
    # The check after installing (README): "none" is a CPU-only build (CI's), "cuda" or "hip" a GPU one (the
    # hardware stage's).
    assert peerreduce.gpu_platform() in ("none", "cuda", "hip")
