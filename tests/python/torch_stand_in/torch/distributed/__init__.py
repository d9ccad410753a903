"""torch.distributed's names peerreduce.torch uses; gloo's group records what it was given."""


class ReduceOp:
    """A reduce op as collectives' options carry it: pickles as (op, factor), the factor a PREMUL_SUM's.
    The class attributes stand for RedOpType's values."""

    SUM, PRODUCT, MIN, MAX, AVG, PREMUL_SUM = (object() for _ in range(6))

    def __init__(self, op, factor=None):
        self._state = (op, factor)

    def __getstate__(self):
        return self._state


def _make_nccl_premul_sum(factor):
    return ReduceOp(ReduceOp.PREMUL_SUM, factor)


class ProcessGroup:
    def __init__(self, rank, size):
        self._rank, self._size = rank, size

    def size(self):
        return self._size


class GroupMember:
    WORLD = None


class PrefixStore:
    def __init__(self, prefix, store):
        pass


class ProcessGroupGloo:
    def __init__(self, *args):
        pass

    def __getattr__(self, name):
        return lambda *args: ("gloo", name, args)


class Backend:
    pass


class distributed_c10d:
    pass


def get_rank(group=None):
    return 0


def get_world_size(group=None):
    return 1
