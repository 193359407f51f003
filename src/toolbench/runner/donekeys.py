"""The keys a resumed run has already done, held per sample rather than per record.

A run of 100 samples x 10,000 epochs has a million done keys; a set of million
``(task, id, epoch)`` tuples costs ~200 MB. Here each (task, sample id) holds one bit per
epoch in a ``bytearray`` (10,000 epochs: 1.25 KB), so resuming costs memory per sample, not per
record, and ``key in done`` stays O(1).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

Key = tuple[str, str, int]  # (task, sample id, epoch)


class DoneKeys:
    """A set of log keys (``in``, ``len``, iteration, ``add``) stored as epoch bitmaps per
    (task, sample id). Iteration gives samples in the order they were first added, each
    one's epochs ascending."""

    __slots__ = ("_bits", "_count")

    def __init__(self, keys: Iterable[Key] = ()) -> None:
        self._bits: dict[tuple[str, str], bytearray] = {}
        self._count = 0
        for key in keys:
            self.add(key)

    def add(self, key: Key) -> bool:
        """Add ``key``; True if it was not there before."""
        task, sample_id, epoch = key
        if epoch < 0:
            raise ValueError(f"epoch must be >= 0, got {epoch}")
        bits = self._bits.get((task, sample_id))
        if bits is None:
            bits = self._bits[(task, sample_id)] = bytearray()
        index, mask = epoch >> 3, 1 << (epoch & 7)
        if index >= len(bits):
            bits.extend(bytes(index + 1 - len(bits)))
        if bits[index] & mask:
            return False
        bits[index] |= mask
        self._count += 1
        return True

    def __contains__(self, key: object) -> bool:
        if not isinstance(key, tuple) or len(key) != 3:
            return False
        task, sample_id, epoch = key
        if not isinstance(epoch, int) or epoch < 0:
            return False
        bits = self._bits.get((task, sample_id))
        index = epoch >> 3
        return bits is not None and index < len(bits) and bool(bits[index] >> (epoch & 7) & 1)

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[Key]:
        for (task, sample_id), bits in self._bits.items():
            for index, byte in enumerate(bits):
                if not byte:
                    continue
                for bit in range(8):
                    if byte >> bit & 1:
                        yield (task, sample_id, index * 8 + bit)

    def __bool__(self) -> bool:
        return self._count > 0

    def __repr__(self) -> str:
        return f"DoneKeys({self._count} keys over {len(self._bits)} samples)"
