"""LLM serving: continuous batching over a paged KV-cache block manager.

An engine thread runs the continuous-batching loop of vLLM-style servers:
each iteration admits waiting requests while the block manager can hold
their prompts, decodes one token for every running sequence (allocating a
new KV block when a sequence's last block is full), and frees the blocks of
finished sequences. Frontend threads (the API server's request handlers)
submit requests; a request with ``n > 1`` (parallel sampling) forks child
sequences that share the parent's prompt blocks by reference count.

Correctness (``assert``s): no KV block is ever owned by two sequences unless
they share it by reference count, a block's reference count equals the number
of block tables that hold it, every request completes, and when the server
drains every block is back in the free pool exactly once.

Entry points (``FUNC()``, threads):

- ``main_correct``: the frontend checks capacity and allocates under the
  block manager's lock, in one critical section.
- ``main_bug_check_then_act``: the frontend pre-allocates prompt blocks for
  latency with ``if can_allocate(n): allocate(n)``, each call taking the lock
  on its own. The engine can take the same blocks in between: the pool is
  over-committed and ``allocate`` pops an empty free list. Modelled on
  vllm-project/vllm#17834 (``can_allocate`` and ``allocate`` disagree,
  ``NoFreeBlocksError``) and the TOCTOU race of vllm-project/vllm#39702.
- ``main_bug_refcount``: ``fork`` bumps the shared blocks' reference counts
  outside the lock while the engine may be releasing the finished parent; a
  lost update leaves a freed block with a live count, and it is handed out
  again while still shared ("Double free!", vllm-project/vllm#1556, fixed in
  vllm-project/vllm#3347).
- ``main_bug_tight_pool`` (input ``num_blocks``): the check-then-act
  handler of ``main_bug_check_then_act``, harmless while the pool has room
  to spare, loses only when the pool has just enough blocks for the
  requests, and only under some interleavings. Modelled on
  vllm-project/vllm#17834 (``can_allocate`` and ``allocate`` disagreed when
  only a few free blocks were left, raising ``NoFreeBlocksError``).
"""

import threading
from typing import Annotated
from collections import deque

from dnsse import Range, emit

DNSSE_SPECS = [
    # Every admitted request eventually finishes.
    "G(admit -> F(finish))",
    # Nothing finishes that was not admitted, and nothing is freed that was not allocated.
    "G((finish -> O(admit)) & (block_free -> O(block_alloc)))",
]

BLOCK_SIZE = 2
NUM_BLOCKS = 3


class BlockManager:
    """A paged KV cache: a free list of physical blocks, block tables and reference counts."""

    def __init__(self, num_blocks: int) -> None:
        self.lock = threading.Lock()
        self.free = list(range(num_blocks))
        self.ref = [0] * num_blocks
        self.tables: dict[str, list[int]] = {}

    def can_allocate(self, blocks: int) -> bool:
        with self.lock:
            return len(self.free) >= blocks

    def allocate(self, seq: str, blocks: int) -> None:
        with self.lock:
            self._allocate_locked(seq, blocks)

    def try_allocate(self, seq: str, blocks: int) -> bool:
        with self.lock:
            if len(self.free) < blocks:
                return False
            self._allocate_locked(seq, blocks)
            return True

    def _allocate_locked(self, seq: str, blocks: int) -> None:
        table = self.tables.setdefault(seq, [])
        for _ in range(blocks):
            block = self.free.pop()
            assert self.ref[block] == 0, f"block {block} handed to {seq} while still referenced"
            self.ref[block] = 1
            table.append(block)
            emit("block_alloc", block=block, seq=seq)

    def fork(self, parent: str, child: str, locked: bool) -> None:
        """Let ``child`` share ``parent``'s blocks (copy-on-write prefix sharing)."""
        if locked:
            with self.lock:
                self._fork(parent, child)
        else:
            self._fork(parent, child)

    def _fork(self, parent: str, child: str) -> None:
        shared = list(self.tables.get(parent, ()))  # empty once the parent finished
        for block in shared:
            self.ref[block] += 1
        if shared:
            self.tables[child] = shared

    def release(self, seq: str) -> None:
        with self.lock:
            for block in self.tables.pop(seq):
                self.ref[block] -= 1
                if self.ref[block] == 0:
                    assert block not in self.free, f"double free of block {block}"
                    self.free.append(block)
                    emit("block_free", block=block)

    def check_drained(self) -> None:
        assert not self.tables, f"sequences still hold blocks: {self.tables}"
        assert sorted(self.free) == list(range(len(self.ref))), f"free pool corrupted: {self.free}"
        assert all(count == 0 for count in self.ref), f"reference counts left: {self.ref}"


class Engine:
    """The continuous-batching loop, run by one engine thread."""

    def __init__(self, manager: BlockManager, expected: int) -> None:
        self.manager = manager
        self.waiting: deque[tuple[str, int, int]] = deque()
        self.running: dict[str, list[int]] = {}  # seq -> [tokens so far, tokens to generate]
        self.finished: list[str] = []
        self.expected = expected
        self.arrived = threading.Condition()
        self.submissions = 0

    def submit(self, seq: str, prompt_tokens: int, max_tokens: int, reserve: bool = False) -> None:
        """Queue a request; ``reserve`` also takes its prompt blocks now, if they are free."""
        with self.arrived:
            if reserve:
                self.manager.try_allocate(seq, blocks_for(prompt_tokens))
            self.waiting.append((seq, prompt_tokens, max_tokens))
            self.submissions += 1
            self.arrived.notify_all()

    def run(self) -> None:
        while len(self.finished) < self.expected:
            with self.arrived:
                admitted = self._admit()
                while not admitted and not self.running:
                    self.arrived.wait()
                    admitted = self._admit()
                seen = self.submissions
            for seq in admitted:
                emit("admit", seq=seq)
            if not self._decode():
                # Stuck on blocks that a request still being submitted holds (a fork
                # shares its parent's blocks before it is queued): sleep until it
                # arrives instead of spinning through preemptions.
                with self.arrived:
                    while self.submissions == seen and self.submissions < self.expected:
                        self.arrived.wait()

    def _admit(self) -> list[str]:
        """Admit, in arrival order, every waiting request whose prompt fits (no head-of-line blocking:
        a request that already holds its reserved blocks must not wait behind one that cannot fit)."""
        admitted = []
        for request in list(self.waiting):
            seq, prompt, max_tokens = request
            have = len(self.manager.tables.get(seq, []))
            if self.manager.try_allocate(seq, blocks_for(prompt) - have):
                self.waiting.remove(request)
                self.running[seq] = [prompt, max_tokens]
                admitted.append(seq)
        return admitted

    def _decode(self) -> bool:
        """One token for every running sequence that can get its KV slot; whether any did."""
        progressed = False
        for seq in list(self.running):
            if seq not in self.running:
                continue  # preempted earlier in this iteration
            tokens, remaining = self.running[seq]
            while tokens % BLOCK_SIZE == 0 and not self.manager.try_allocate(seq, 1):
                if self._preempt_youngest() == seq:
                    break
            if seq not in self.running:
                continue
            self.running[seq] = [tokens + 1, remaining - 1]
            progressed = True
            if remaining - 1 == 0:
                del self.running[seq]
                self.manager.release(seq)
                self.finished.append(seq)
                emit("finish", seq=seq)
                with self.arrived:
                    self.arrived.notify_all()  # blocks were freed
        return progressed

    def _preempt_youngest(self) -> str:
        """Out of blocks: free the youngest sequence's blocks; it is recomputed later (vLLM's recompute mode)."""
        seq = list(self.running)[-1]
        tokens, remaining = self.running.pop(seq)
        self.manager.release(seq)
        with self.arrived:
            self.waiting.appendleft((seq, tokens, remaining))
        return seq


def blocks_for(tokens: int) -> int:
    return (tokens + BLOCK_SIZE - 1) // BLOCK_SIZE


def handle_request(engine: Engine, seq: str, prompt: int, max_tokens: int, check_then_act: bool) -> None:
    """The API server's handler: reserve the prompt's blocks early (for latency) and queue the request."""
    if not check_then_act:
        engine.submit(seq, prompt, max_tokens, reserve=True)
        return
    manager = engine.manager
    if manager.can_allocate(blocks_for(prompt)):
        manager.allocate(seq, blocks_for(prompt))
    engine.submit(seq, prompt, max_tokens)


def handle_parallel_sampling(engine: Engine, parent: str, prompt: int, locked_fork: bool) -> None:
    """A request with n=2: the second sample shares the first one's prompt blocks, if they are still held."""
    engine.submit(parent, prompt, 1, reserve=True)
    child = parent + "/1"
    engine.manager.fork(parent, child, locked=locked_fork)
    engine.submit(child, prompt, 3)


Blocks = Annotated[int, Range(NUM_BLOCKS, 4096)]


def serve(check_then_act: bool, locked_fork: bool, num_blocks: int = NUM_BLOCKS) -> None:
    manager = BlockManager(num_blocks)
    engine = Engine(manager, expected=4)
    engine_thread = threading.Thread(target=engine.run, name="engine")
    frontends = [
        threading.Thread(target=handle_request, args=(engine, "a", 3, 2, check_then_act)),
        threading.Thread(target=handle_request, args=(engine, "b", 2, 1, check_then_act)),
        threading.Thread(target=handle_parallel_sampling, args=(engine, "c", 2, locked_fork)),
    ]
    engine_thread.start()
    for thread in frontends:
        thread.start()
    for thread in frontends:
        thread.join()
    engine_thread.join()
    assert sorted(engine.finished) == ["a", "b", "c", "c/1"], f"finished: {engine.finished}"
    manager.check_drained()


def main_correct(num_blocks: Blocks = 64) -> None:
    serve(check_then_act=False, locked_fork=True, num_blocks=num_blocks)


def main_bug_tight_pool(num_blocks: Blocks = 64) -> None:
    serve(check_then_act=True, locked_fork=True, num_blocks=num_blocks)


def main_bug_check_then_act() -> None:
    serve(check_then_act=True, locked_fork=True)


def main_bug_refcount() -> None:
    serve(check_then_act=False, locked_fork=False)
