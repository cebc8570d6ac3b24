"""The options of ``dnsse check`` that point the advisor at a language model."""

from __future__ import annotations

import argparse
from pathlib import Path

from dnsse.advisor.settings import KEY_VARIABLES, ModelSettings, validate_limits
from dnsse.errors import BadInput


def add_advisor_options(check: argparse.ArgumentParser) -> None:
    group = check.add_argument_group(
        "advisor",
        "The llm strategy (and hybrid) ask an offline advisor for hints; with --llm-base-url and "
        f"--llm-model they also ask that model. The key comes from {' or '.join(KEY_VARIABLES)}.",
    )
    group.add_argument(
        "--llm-base-url", default=None, metavar="URL",
        help="an OpenAI-compatible endpoint, e.g. http://localhost:8000/v1 (vLLM, llama.cpp, ollama, hosted)",
    )
    group.add_argument("--llm-model", default=None, metavar="NAME", help="the model to ask")
    group.add_argument(
        "--llm-timeout", type=float, default=30.0, metavar="SECONDS", help="limit of one request (default 30)"
    )
    group.add_argument("--llm-calls", type=int, default=20, metavar="N", help="requests per campaign (default 20)")
    group.add_argument(
        "--llm-concurrency", type=int, default=2, metavar="N", help="requests in flight at once (default 2)"
    )
    group.add_argument(
        "--llm-wait", action="store_true",
        help="wait for each answer before the next execution, so that the same seed and the same answers "
        "give the same campaign however fast the model is (by default the search never waits)",
    )
    group.add_argument(
        "--llm-cache", type=Path, default=None, metavar="DIR",
        help="where answers are cached by request hash, as JSON (default OUT/llm-cache)",
    )


def model_settings(arguments: argparse.Namespace) -> ModelSettings | None:
    """The model to ask, or ``None`` when none is named; BadInput when half of it is, or a limit is out of range."""
    validate_limits(arguments.llm_timeout, arguments.llm_calls, arguments.llm_concurrency)
    if arguments.llm_base_url is None and arguments.llm_model is None:
        return None
    if arguments.llm_base_url is None or arguments.llm_model is None:
        raise BadInput("--llm-base-url and --llm-model go together: name the endpoint and the model to ask there")
    settings = ModelSettings(
        base_url=arguments.llm_base_url,
        model=arguments.llm_model,
        timeout_s=arguments.llm_timeout,
        max_calls=arguments.llm_calls,
        concurrency=arguments.llm_concurrency,
        wait=arguments.llm_wait,
        cache_dir=arguments.llm_cache if arguments.llm_cache is not None else arguments.out / "llm-cache",
    )
    settings.validate()
    return settings
