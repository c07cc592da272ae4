"""Token counting offline: tiktoken's files come from litellm's bundled copies, never the net."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import tiktoken
import tiktoken.load
import tiktoken.registry

from gateway.memory import tokens
from gateway.memory.tokens import TokenCounter, Tokenizers, TokenizerUnavailable

ENGLISH = (
    "The quick brown fox jumps over the lazy dog, then naps in the warm afternoon sun "
    "while the farmer's children count 1,234 apples — and a few pears — by the old barn."
)
CHINESE = (
    "我们的网关会在令牌预算内把记忆注入到聊天请求中。"
    "今天天气很好，我们去公园散步吧！北京的秋天特别美丽，银杏叶变成了金黄色。"
)
MIXED = "Emoji 👩‍👩‍👧‍👦 and 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 and 日本語のテキスト mixed with English words."


def _no_download(blobpath: str) -> bytes:
    raise OSError(f"test tried to download {blobpath}")


@pytest.fixture(autouse=True)
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """tiktoken may read only its cache folder: a download attempt fails the test."""
    monkeypatch.setattr(tiktoken.load, "read_file", _no_download)


@pytest.fixture(scope="module")
def tokenizers() -> Iterator[Tokenizers]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(tiktoken.load, "read_file", _no_download)
        made = Tokenizers()
    yield made


@pytest.fixture(params=["cl100k_base", "o200k_base"])
def counter(request: pytest.FixtureRequest, tokenizers: Tokenizers) -> TokenCounter:
    model = {"cl100k_base": "gpt-4", "o200k_base": "gpt-4o"}[request.param]
    made = tokenizers.for_model(model)
    assert made.encoding_name == request.param
    return made


def test_count_matches_tiktoken(counter: TokenCounter) -> None:
    expected = len(tiktoken.get_encoding(counter.encoding_name).encode(ENGLISH))
    assert counter.count(ENGLISH) == expected
    assert 25 < expected < 60
    assert counter.count("") == 0


def test_count_treats_special_token_text_as_plain_text(counter: TokenCounter) -> None:
    text = "before <|endoftext|> after"
    encoding = tiktoken.get_encoding(counter.encoding_name)
    assert counter.count(text) == len(encoding.encode(text, disallowed_special=()))
    assert counter.count(text) > 3


def test_chinese_counts(counter: TokenCounter) -> None:
    encoding = tiktoken.get_encoding(counter.encoding_name)
    assert counter.count(CHINESE) > 0
    assert counter.count(CHINESE) == len(encoding.encode(CHINESE))


@pytest.mark.parametrize(
    ("model", "encoding_name"),
    [
        ("openai/gpt-4o-mini", "o200k_base"),
        ("gpt-4o", "o200k_base"),
        ("gpt-4", "cl100k_base"),
        ("azure/gpt-4", "cl100k_base"),
        ("openai/gpt-3.5-turbo", "cl100k_base"),
        ("openrouter/openai/gpt-4o", "o200k_base"),
        ("GPT-4o", "o200k_base"),
        ("text-davinci-003", "p50k_base"),
    ],
)
def test_for_model_known(tokenizers: Tokenizers, model: str, encoding_name: str) -> None:
    assert tokenizers.for_model(model).encoding_name == encoding_name


@pytest.mark.parametrize(
    "model",
    ["anthropic/claude-3-5-sonnet", "my-local-model", "ollama/llama3", "", "/", "azure/"],
)
def test_for_model_unknown_gets_default(tokenizers: Tokenizers, model: str) -> None:
    assert tokenizers.for_model(model).encoding_name == "cl100k_base"


def test_for_model_other_default() -> None:
    made = Tokenizers("o200k_base")
    assert made.for_model("anthropic/claude-3-5-sonnet").encoding_name == "o200k_base"
    assert made.for_model("gpt-4").encoding_name == "cl100k_base"


def test_for_model_caches_one_counter_per_encoding(tokenizers: Tokenizers) -> None:
    assert tokenizers.for_model("gpt-4o") is tokenizers.for_model("openai/gpt-4o-mini")
    assert tokenizers.for_model("gpt-4") is tokenizers.for_model("unknown-model")


def test_for_model_falls_back_when_encoding_cannot_load(tokenizers: Tokenizers) -> None:
    # "davinci" uses r50k_base, which litellm does not ship: the default is used instead.
    assert "r50k_base" not in tiktoken.registry.ENCODINGS
    assert tokenizers.for_model("davinci").encoding_name == "cl100k_base"
    assert tokenizers.for_model("openai/davinci").encoding_name == "cl100k_base"


def test_unloadable_default_raises_with_fix(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    monkeypatch.delitem(tiktoken.registry.ENCODINGS, "r50k_base", raising=False)
    with pytest.raises(TokenizerUnavailable, match="TIKTOKEN_CACHE_DIR"):
        Tokenizers("r50k_base")


def test_unknown_encoding_name_is_an_error() -> None:
    with pytest.raises(ValueError, match="unknown tiktoken encoding"):
        Tokenizers("no_such_encoding")


@pytest.mark.parametrize("text", [ENGLISH, CHINESE, MIXED, ENGLISH + "\n\n   " + CHINESE])
def test_truncate_never_exceeds_budget(counter: TokenCounter, text: str) -> None:
    total = counter.count(text)
    previous = ""
    for budget in range(total + 3):
        cut = counter.truncate(text, budget)
        assert text.startswith(cut)
        assert counter.count(cut) <= budget
        assert "\ufffd" not in cut
        assert len(cut) >= len(previous)  # a bigger budget never keeps less
        previous = cut
    assert counter.truncate(text, total) == text
    assert counter.truncate(text, total + 100) == text


def test_truncate_keeps_whole_tokens(counter: TokenCounter) -> None:
    encoding = tiktoken.get_encoding(counter.encoding_name)
    ids = encoding.encode(ENGLISH)
    assert counter.truncate(ENGLISH, 5) == encoding.decode(ids[:5])
    # Chinese characters often span tokens: the cut drops a half character, keeps the rest.
    for budget in range(1, counter.count(CHINESE)):
        cut = counter.truncate(CHINESE, budget)
        assert counter.count(cut) >= budget - 3


def test_truncate_edge_budgets(counter: TokenCounter) -> None:
    assert counter.truncate(ENGLISH, 0) == ""
    assert counter.truncate(ENGLISH, -5) == ""
    assert counter.truncate("", 10) == ""


def _hand_count(encoding: tiktoken.Encoding, *texts: str) -> int:
    return sum(len(encoding.encode(text)) for text in texts)


def test_count_messages_small_conversation(tokenizers: Tokenizers) -> None:
    counter = tokenizers.for_model("gpt-4")
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are helpful."},
        {"role": "user", "name": "alice", "content": "Hi"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "sunny"},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Describe this picture."},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
            ],
        },
    ]
    # cl100k_base, by hand: 3 per message; role "system" "user" "assistant" "tool" "user" are
    # 1 each; "You are helpful." 4; "alice" 1 (+1 for a name); "Hi" 1; "get_weather" 2;
    # '{"city":"Paris"}' 5; "sunny" 2; "Describe this picture." 4; the image 0; priming 3.
    expected = 5 * 3 + 5 * 1 + 4 + (1 + 1) + 1 + 2 + 5 + 2 + 4 + 0 + 3
    assert expected == 43
    encoding = tiktoken.get_encoding("cl100k_base")
    assert _hand_count(encoding, "You are helpful.", '{"city":"Paris"}', "sunny") == 4 + 5 + 2
    assert counter.count_messages(messages) == expected


# OpenAI cookbook "How to count tokens with tiktoken": the API reported 129 prompt tokens for
# these messages with gpt-4 / gpt-3.5-turbo, and 124 with gpt-4o / gpt-4o-mini.
COOKBOOK_MESSAGES: list[dict[str, Any]] = [
    {
        "role": "system",
        "content": "You are a helpful, pattern-following assistant that translates corporate "
        "jargon into plain English.",
    },
    {
        "role": "system",
        "name": "example_user",
        "content": "New synergies will help drive top-line growth.",
    },
    {
        "role": "system",
        "name": "example_assistant",
        "content": "Things working well together will increase revenue.",
    },
    {
        "role": "system",
        "name": "example_user",
        "content": "Let's circle back when we have more bandwidth to touch base on opportunities "
        "for increased leverage.",
    },
    {
        "role": "system",
        "name": "example_assistant",
        "content": "Let's talk later when we're less busy about how to do better.",
    },
    {
        "role": "user",
        "content": "This late pivot means we don't have time to boil the ocean for the client "
        "deliverable.",
    },
]


@pytest.mark.parametrize(
    ("model", "prompt_tokens"),
    [("gpt-4", 129), ("gpt-3.5-turbo", 129), ("gpt-4o", 124), ("openai/gpt-4o-mini", 124)],
)
def test_count_messages_matches_openai(
    tokenizers: Tokenizers, model: str, prompt_tokens: int
) -> None:
    assert tokenizers.for_model(model).count_messages(COOKBOOK_MESSAGES) == prompt_tokens


def test_count_messages_edge_cases(tokenizers: Tokenizers) -> None:
    counter = tokenizers.for_model("gpt-4")
    assert counter.count_messages([]) == 3
    assert counter.count_messages([{"role": "user", "content": ""}]) == 3 + 1 + 3
    as_parts = [{"role": "user", "content": [{"type": "text", "text": "Hi"}]}]
    assert counter.count_messages(as_parts) == counter.count_messages(
        [{"role": "user", "content": "Hi"}]
    )


def test_cache_dir_set_only_when_unset(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    spec = importlib.util.find_spec("litellm")
    assert spec is not None and spec.submodule_search_locations
    bundled = Path(spec.submodule_search_locations[0]) / "litellm_core_utils" / "tokenizers"

    monkeypatch.delenv("TIKTOKEN_CACHE_DIR", raising=False)
    tokens._ensure_cache_dir()
    assert os.environ["TIKTOKEN_CACHE_DIR"] == str(bundled)

    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    tokens._ensure_cache_dir()
    assert os.environ["TIKTOKEN_CACHE_DIR"] == str(tmp_path)


def test_fresh_process_import_is_inert_and_load_avoids_litellm() -> None:
    """In a fresh interpreter: importing sets nothing; the first load sets the cache folder,
    loads offline, and never imports litellm."""
    script = textwrap.dedent(
        """
        import os, sys
        import tiktoken.load

        def no_download(blobpath):
            raise OSError("download attempted: " + blobpath)

        tiktoken.load.read_file = no_download
        from gateway.memory.tokens import Tokenizers
        assert "TIKTOKEN_CACHE_DIR" not in os.environ, "set at import"
        made = Tokenizers()
        assert os.environ["TIKTOKEN_CACHE_DIR"].endswith("tokenizers")
        assert made.for_model("openai/gpt-4o-mini").encoding_name == "o200k_base"
        assert made.for_model("text-davinci-003").encoding_name == "p50k_base"
        loaded = sorted(name for name in sys.modules if name.split(".")[0] == "litellm")
        assert not loaded, loaded
        print("ok")
        """
    )
    env = {key: value for key, value in os.environ.items() if key != "TIKTOKEN_CACHE_DIR"}
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        env=env,
        cwd=Path(__file__).resolve().parents[3],
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


def test_remembered_counts_equal_fresh_counts_and_the_memo_is_bounded(
    monkeypatch: pytest.MonkeyPatch, tokenizers: Tokenizers
) -> None:
    monkeypatch.setattr(tokens, "COUNT_MEMO_ENTRIES", 4)
    fresh = tiktoken.get_encoding(tokenizers.for_model("gpt-4o").encoding_name)
    counter = TokenCounter(fresh)
    texts = [ENGLISH, CHINESE, MIXED, "a", "b", "c", ENGLISH, CHINESE]
    for text in texts * 2:
        assert counter.count(text) == len(fresh.encode_ordinary(text))
    assert len(counter._counts) == 4


def test_a_long_text_is_counted_every_time_not_remembered(
    monkeypatch: pytest.MonkeyPatch, tokenizers: Tokenizers
) -> None:
    monkeypatch.setattr(tokens, "COUNT_MEMO_MAX_CHARS", 50)
    counter = TokenCounter(tiktoken.get_encoding(tokenizers.for_model("gpt-4o").encoding_name))
    assert counter.count(ENGLISH) == counter.count(ENGLISH) > 0
    assert counter.count("short") == 1
    assert len(counter._counts) == 1
