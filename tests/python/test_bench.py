"""The application benchmark's parts that need no GPU (peerreduce.bench): the order of the interleaved eager
rounds, the median of per-round ratios, a row's eager fields, and the choice of CPUs to pin each local rank
to, on topologies given as data and on a sysfs tree made here. The module imports without PyTorch."""

import pytest

from peerreduce import bench


def test_round_orders_rotate_so_every_column_leads_and_follows_every_other_in_turn():
    orders = bench.round_orders(3, 6)
    assert orders[:3] == [[0, 1, 2], [1, 2, 0], [2, 0, 1]]
    assert all(sorted(order) == [0, 1, 2] for order in orders)
    assert [order[0] for order in orders].count(0) == 2
    assert {order[0] for order in orders} == {0, 1, 2}
    # Each of two columns goes first in turn (15 rounds: 8 and 7).
    firsts = [order[0] for order in bench.round_orders(2, 15)]
    assert firsts[:4] == [0, 1, 0, 1] and firsts.count(0) == 8 and firsts.count(1) == 7
    for a, b in ((0, 1), (1, 2), (0, 2)):
        assert any(order.index(a) < order.index(b) for order in orders)
        assert any(order.index(b) < order.index(a) for order in orders)


def test_interleaved_rounds_time_each_column_once_a_round_in_the_rotated_order():
    calls = []

    def time_one(name):
        calls.append(name)
        return (len(calls), 0.0)

    samples = bench.interleaved_rounds(["pkg", "lib", "fwd"], 3, time_one)
    assert calls == ["pkg", "lib", "fwd", "lib", "fwd", "pkg", "fwd", "pkg", "lib"]
    assert [s[0] for s in samples["pkg"]] == [1, 6, 8]
    assert [s[0] for s in samples["fwd"]] == [3, 5, 7]


def test_the_median_of_per_round_ratios_holds_where_the_host_speed_changes_between_rounds():
    # Rounds 3-5 of the library and rounds 4-5 of the forwarded group ran on a slow host: the ratio of the
    # medians (20 / 10) says 2, the rounds say that the two paths cost the same but in round 3.
    library = [10.0, 10.0, 20.0, 20.0, 20.0]
    forwarded = [10.0, 10.0, 10.0, 20.0, 20.0]
    assert bench.median_of_round_ratios(library, forwarded) == pytest.approx(1.0)
    assert bench.median_of_round_ratios([3.0, 9.0, 4.0], [2.0, 3.0, 1.0]) == pytest.approx(3.0)
    with pytest.raises(ValueError, match="as many rounds"):
        bench.median_of_round_ratios([1.0, 2.0], [1.0])
    with pytest.raises(ValueError, match="as many rounds"):
        bench.median_of_round_ratios([], [])


def test_eager_fields_give_medians_and_the_same_process_ratios_of_the_columns_timed():
    device = {"peerreduce": [5.0, 6.0, 30.0], "nccl": [10.0, 12.0, 10.0], "nccl_forwarded": [8.0, 12.0, 25.0]}
    host = {"peerreduce": [4.0, 5.0, 6.0], "nccl": [9.0, 9.0, 9.0], "nccl_forwarded": [7.0, 7.0, 8.0]}
    row = bench.eager_fields(device, host)
    assert row["peerreduce_us"] == 6.0 and row["nccl_us"] == 10.0 and row["nccl_forwarded_us"] == 12.0
    assert row["peerreduce_host_us"] == 5.0 and row["nccl_forwarded_host_us"] == 7.0
    assert row["ratio"] == pytest.approx(0.6)
    assert row["ratio_per_round"] == pytest.approx(0.5)  # 0.5, 0.5, 3.0
    assert row["library_to_forwarded"] == pytest.approx(10.0 / 12.0)
    assert row["library_to_forwarded_per_round"] == pytest.approx(1.0)  # 1.25, 1.0, 0.4
    assert row["eager_rounds_us"]["nccl"] == [10.0, 12.0, 10.0]
    alone = bench.eager_fields({"peerreduce": [5.0]}, {"peerreduce": [4.0]})
    assert "ratio" not in alone and "library_to_forwarded" not in alone and alone["peerreduce_us"] == 5.0


def test_cpulists_and_pci_addresses_in_the_forms_sysfs_and_torch_give():
    assert bench.parse_cpulist("0-3,48-51\n") == {0, 1, 2, 3, 48, 49, 50, 51}
    assert bench.parse_cpulist("7") == {7} and bench.parse_cpulist("\n") == set()
    assert bench.format_cpulist([51, 0, 1, 2, 3, 48, 49, 50, 9]) == "0-3,9,48-51"
    assert bench.pci_address(0x19) == "0000:19:00.0"
    assert bench.pci_address(0x1A, domain=1, device=3) == "0001:1a:03.0"
    assert bench.pci_address("00000000:1A:00.0") == "0000:1a:00.0"
    assert bench.pci_address("1a:00.0") == "0000:1a:00.0"
    with pytest.raises(ValueError, match="not a PCI address"):
        bench.pci_address("gpu0")


def two_sockets(cores_per_socket=8):
    """SMT pairs (c, c + 2n) over two sockets of n cores: socket 0 has cores 0..n-1, socket 1 n..2n-1."""
    n = cores_per_socket
    cores = [(c, c + 2 * n) for c in range(2 * n)]
    socket = [set(range(0, n)) | set(range(2 * n, 3 * n)), set(range(n, 2 * n)) | set(range(3 * n, 4 * n))]
    return cores, socket


def assert_disjoint_whole_cores(choices, cores):
    seen = set()
    for choice in choices:
        for core in choice.cores:
            assert core in cores  # a whole SMT group, never half of one
            assert seen.isdisjoint(core)
            seen.update(core)


def test_each_local_rank_gets_its_own_whole_cores_local_to_its_gpu():
    cores, socket = two_sockets()
    choices = bench.choose_cpus(cores, [socket[0], socket[1], socket[0], socket[1]])
    assert_disjoint_whole_cores(choices, cores)
    for rank, choice in enumerate(choices):
        assert len(choice.cores) == bench.CORES_PER_RANK and choice.local == bench.CORES_PER_RANK
        assert set(choice.cpus) <= socket[rank % 2]
    # CPU 0's core is left for the kernel's housekeeping while others are free: the last taken.
    assert 0 in choices[2].cpus
    pair = bench.choose_cpus(cores, [socket[0], socket[1]])
    assert pair[0].cpus == (1, 2, 3, 4, 17, 18, 19, 20)
    assert pair[1].cpus == (8, 9, 10, 11, 24, 25, 26, 27)


def test_ranks_short_of_gpu_local_cores_or_without_locality_take_any_free_ones():
    cores, socket = two_sockets(cores_per_socket=4)
    # Both GPUs on socket 0 (4 cores): rank 0 takes 3 local cores (CPU 0's last), rank 1 the one left.
    choices = bench.choose_cpus(cores, [socket[0], socket[0]], cores_per_rank=3)
    assert_disjoint_whole_cores(choices, cores)
    assert (choices[0].local, choices[1].local) == (3, 1)
    assert len(choices[1].cores) == 3 and 0 not in choices[0].cpus
    # No locality known (no sysfs file): whole disjoint cores all the same.
    unknown = bench.choose_cpus(cores, [None, None, None])
    assert_disjoint_whole_cores(unknown, cores)
    assert [len(c.cores) for c in unknown] == [2, 2, 2] and all(c.local == 0 for c in unknown)
    assert unknown[0].cpus == (1, 2, 9, 10) and all(0 not in c.cpus for c in unknown)
    # A core counts as local only when all of it is: (1, 5) is half outside the GPU's list.
    straddling = bench.choose_cpus([(0, 4), (1, 5), (2, 6), (3, 7)], [{1, 2, 3, 6, 7}], cores_per_rank=2)
    assert straddling[0].cores == ((2, 6), (3, 7)) and straddling[0].local == 2
    # Fewer cores than ranks: nobody is pinned.
    assert all(c.cores == () for c in bench.choose_cpus([(0, 1)], [None, None]))
    assert bench.choose_cpus(cores, []) == []


def fake_sysfs(root, cores, gpu_local=None, missing_siblings=()):
    for core in cores:
        for cpu in core:
            if cpu in missing_siblings:
                continue
            topology = root / "devices" / "system" / "cpu" / f"cpu{cpu}" / "topology"
            topology.mkdir(parents=True)
            (topology / "thread_siblings_list").write_text(bench.format_cpulist(core) + "\n")
    for address, cpus in (gpu_local or {}).items():
        device = root / "bus" / "pci" / "devices" / address
        device.mkdir(parents=True)
        (device / "local_cpulist").write_text(bench.format_cpulist(cpus) + "\n")


def test_topology_read_from_sysfs_and_what_is_missing(tmp_path):
    cores, socket = two_sockets(cores_per_socket=2)
    fake_sysfs(tmp_path, cores, {"0000:19:00.0": socket[1]}, missing_siblings={3, 7})
    read, unknown = bench.read_cores(set(range(8)), str(tmp_path))
    assert unknown == 2
    assert sorted(read) == [(0, 4), (1, 5), (2, 6), (3,), (7,)]
    # Only the allowed CPUs count.
    assert bench.read_cores({0, 1, 4}, str(tmp_path))[0] == [(0, 4), (1,)]
    assert bench.read_gpu_local_cpus("0000:19:00.0", str(tmp_path)) == socket[1]
    assert bench.read_gpu_local_cpus("0000:20:00.0", str(tmp_path)) is None
    assert bench.read_gpu_local_cpus(None, str(tmp_path)) is None
    assert bench.read_cores({0, 1}, str(tmp_path / "absent")) == ([(0,), (1,)], 2)


def test_pinning_pins_to_the_chosen_cpus_and_never_fails_the_run(tmp_path, monkeypatch):
    cores, socket = two_sockets()
    addresses = {0: "0000:19:00.0", 1: "0000:9b:00.0"}
    fake_sysfs(tmp_path, cores, {addresses[0]: socket[0], addresses[1]: socket[1]})
    pinned = []
    monkeypatch.setattr(bench, "_set_affinity", pinned.append)
    monkeypatch.setattr(bench.os, "sched_getaffinity", lambda pid: set(range(32)))
    monkeypatch.setattr(bench, "_gpu_address", addresses.get)
    assert bench.pin_cpus("none", 1, 2, 2, str(tmp_path)).startswith("not pinned") and pinned == []
    note = bench.pin_cpus("auto", 1, 2, 2, str(tmp_path))
    assert pinned == [(8, 9, 10, 11, 24, 25, 26, 27)]
    assert note == "CPUs 8-11,24-27 (4 cores, 4 local to GPU 0000:9b:00.0)"
    # A GPU whose address sysfs does not know: pinned all the same, and said.
    monkeypatch.setattr(bench, "_gpu_address", lambda device: "0000:aa:00.0")
    assert "no local_cpulist for GPU 0000:aa:00.0" in bench.pin_cpus("auto", 0, 2, 2, str(tmp_path))
    assert len(pinned) == 2

    def broken(device):
        raise RuntimeError("no device")

    monkeypatch.setattr(bench, "_gpu_address", broken)
    assert bench.pin_cpus("auto", 0, 2, 2, str(tmp_path)) == "not pinned: RuntimeError: no device"
    monkeypatch.setattr(bench, "_gpu_address", addresses.get)
    monkeypatch.setattr(bench.os, "sched_getaffinity", lambda pid: {5})
    assert bench.pin_cpus("auto", 0, 2, 2, str(tmp_path)).startswith("not pinned: 1 cores allowed (5) for 2")
    assert len(pinned) == 2
