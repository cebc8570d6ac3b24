"""The benchmark programs: where they are, how they run, and which bug each variant seeds."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

PROGRAMS_DIR = Path(__file__).parent / "programs"
PEER_PROGRAMS_DIR = Path(__file__).parent / "peer_programs"


@dataclass(frozen=True)
class Variant:
    """One entry point of a program: the correct version, or one seeded bug."""

    entry: str
    # The class of the seeded bug; None for the correct version.
    bug: str | None = None
    # The report kinds that count as finding this bug (any report counts as a find,
    # the table also says whether its kind was one of these).
    expected_kinds: tuple[str, ...] = ()

    @property
    def correct(self) -> bool:
        return self.bug is None


@dataclass(frozen=True)
class Program:
    name: str
    file: str
    framework: str
    world_size: int
    domain: str
    variants: tuple[Variant, ...]

    @property
    def path(self) -> Path:
        return PROGRAMS_DIR / self.file

    def target(self, variant: Variant) -> str:
        return f"{self.path}:{variant.entry}"


CORRECT = Variant("main_correct")

PROGRAMS: tuple[Program, ...] = (
    Program(
        "ddp_bucketed", "ddp_bucketed.py", "torch", 2,
        "data-parallel training, bucketed async gradient all-reduce",
        (
            CORRECT,
            Variant("main_bug_unused_expert", "collective count differs across ranks (data-dependent)",
                    ("collective_mismatch", "deadlock")),
            Variant("main_bug_early_clip", "buffer read before wait()", ("exception", "spec_violation")),
            Variant("main_bug_local_overflow", "fp16 overflow checked per rank for some loss scales (input)",
                    ("collective_mismatch", "deadlock")),
        ),
    ),
    Program(
        "pipeline_1f1b", "pipeline_1f1b.py", "torch", 3,
        "pipeline-parallel training, 1F1B microbatch send/recv",
        (
            CORRECT,
            Variant("main_bug_warmup", "pipeline deadlock for some microbatch counts", ("deadlock",)),
            Variant("main_bug_any_source", "any-source receive matches the wrong message",
                    ("exception", "deadlock")),
            Variant("main_bug_ragged_tail", "last stage folds a one-token tail for some lengths (input)",
                    ("deadlock", "collective_mismatch")),
        ),
    ),
    Program(
        "llm_serving", "llm_serving.py", "threads", 1,
        "LLM serving, continuous batching over a paged KV-cache block manager",
        (
            CORRECT,
            Variant("main_bug_check_then_act", "check-then-act on the shared block pool", ("exception",)),
            Variant("main_bug_refcount", "lost update of block reference counts across threads", ("exception",)),
            Variant("main_bug_tight_pool", "check-then-act when the pool has just enough blocks (input and schedule)",
                    ("exception",)),
        ),
    ),
    Program(
        "ray_param_server", "ray_param_server.py", "ray", 1,
        "Ray parameter server with asynchronous workers",
        (
            CORRECT,
            Variant("main_bug_lost_update", "lost update across await in an async actor", ("exception",)),
            Variant("main_bug_actor_deadlock", "deadlock between actors", ("deadlock",)),
            Variant("main_bug_clip_bumps_version", "a clipped gradient bumps the version for small clip norms (input)",
                    ("exception",)),
        ),
    ),
    Program(
        "rl_rollout", "rl_rollout.py", "ray", 1,
        "RL with rollout workers and weight synchronisation",
        (
            CORRECT,
            Variant("main_bug_stale_weights", "stale weights beyond the allowed lag", ("exception",)),
            Variant("main_bug_retry_double_count", "at-least-once retry double counting", ("exception",)),
            Variant("main_bug_one_step_episode", "unbiased baseline divides by zero for one-step episodes (input)",
                    ("exception",)),
        ),
    ),
)


@dataclass(frozen=True)
class PeerProgram:
    """A small plain-threads program with one classic bug, written for dnsse and every peer."""

    name: str
    file: str
    bug: str

    @property
    def path(self) -> Path:
        return PEER_PROGRAMS_DIR / self.file


PEER_PROGRAMS: tuple[PeerProgram, ...] = (
    PeerProgram("lock_order", "lock_order.py", "lock-order deadlock"),
    PeerProgram("check_then_act", "check_then_act.py", "check-then-act on shared state"),
    PeerProgram("lost_wakeup", "lost_wakeup.py", "lost wake-up"),
)


def program_named(name: str) -> Program:
    for program in PROGRAMS:
        if program.name == name:
            return program
    raise KeyError(f"no benchmark program {name!r}; the programs are {', '.join(p.name for p in PROGRAMS)}")
