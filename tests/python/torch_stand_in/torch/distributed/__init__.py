"""torch.distributed's names peerreduce.torch uses; gloo's group records what it was given."""


class ReduceOp:
    SUM, PRODUCT, MIN, MAX, AVG = (object() for _ in range(5))


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
