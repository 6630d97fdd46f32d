"""The ChatModel protocol and backend selection through NEURIPS26_LLM."""

import pytest

from neurips26.llm import (
    ENV_VAR,
    KEY_ENV_VAR,
    ChatModel,
    Completion,
    LLMConfigError,
    Message,
    OpenAICompatible,
    Recorder,
    Replay,
    Scripted,
    get_backend,
)


@pytest.fixture(autouse=True)
def clean_env(monkeypatch):
    for name in (ENV_VAR, KEY_ENV_VAR, "OPENAI_API_KEY", "MY_LLM_KEY"):
        monkeypatch.delenv(name, raising=False)


def offline():
    return Scripted(lambda messages: "offline answer")


class Duck:
    def complete(self, messages, *, temperature=0.0, max_tokens=512, stop=None, images=None):
        return Completion("quack")


class NotAModel:
    def generate(self, prompt):
        return prompt


def test_protocol_isinstance():
    assert isinstance(offline(), ChatModel)
    assert isinstance(Replay([]), ChatModel)
    assert isinstance(Recorder(offline()), ChatModel)
    assert isinstance(OpenAICompatible("http://127.0.0.1:1/v1", "m", api_key_env=None), ChatModel)
    assert isinstance(Duck(), ChatModel) and Recorder(Duck()).complete([Message.user("q")]).text == "quack"
    assert not isinstance(NotAModel(), ChatModel)


@pytest.mark.parametrize("value", [None, "", "offline", "  offline  "])
def test_unset_or_offline_gives_the_chapters_default(monkeypatch, value):
    if value is not None:
        monkeypatch.setenv(ENV_VAR, value)
    default = offline()
    assert get_backend(default) is default


def test_offline_without_a_default_is_an_error():
    with pytest.raises(LLMConfigError, match=ENV_VAR):
        get_backend()
    with pytest.raises(TypeError, match="default"):
        get_backend(default="not a model")


def test_openai_selection_reads_model_url_and_key_variable(monkeypatch):
    monkeypatch.setenv(ENV_VAR, "openai:Qwen/Qwen2.5-VL-7B-Instruct@http://127.0.0.1:8000/v1")
    with pytest.raises(LLMConfigError, match="OPENAI_API_KEY"):  # the default key variable, unset
        get_backend(offline())
    monkeypatch.setenv(KEY_ENV_VAR, "MY_LLM_KEY")
    with pytest.raises(LLMConfigError, match="MY_LLM_KEY"):
        get_backend(offline())
    monkeypatch.setenv("MY_LLM_KEY", "sk-1")
    backend = get_backend(offline())
    assert isinstance(backend, OpenAICompatible)
    assert backend.model == "Qwen/Qwen2.5-VL-7B-Instruct" and backend.base_url == "http://127.0.0.1:8000/v1"
    assert backend.api_key_env == "MY_LLM_KEY"
    monkeypatch.setenv(KEY_ENV_VAR, "none")
    assert get_backend(offline()).api_key_env is None


def test_transformers_and_replay_selection(monkeypatch, tmp_path):
    monkeypatch.setenv(ENV_VAR, f"transformers:{tmp_path / 'absent-model'}")
    with pytest.raises(FileNotFoundError, match="absent-model"):
        get_backend(offline())
    recorder = Recorder(offline())
    recorder.complete([Message.user("q")])
    path = recorder.save(tmp_path / "t.json")
    monkeypatch.setenv(ENV_VAR, f"replay:{path}")
    backend = get_backend(offline())
    assert isinstance(backend, Replay) and backend.complete([Message.user("q")]).text == "offline answer"


@pytest.mark.parametrize(
    "value",
    ["gpt-4o", "openai:gpt-4o", "openai:@http://x/v1", "openai:m@ftp://x", "transformers:", "ollama:llama3"],
)
def test_unknown_forms_name_the_variable(monkeypatch, value):
    monkeypatch.setenv(ENV_VAR, value)
    with pytest.raises(LLMConfigError, match=ENV_VAR):
        get_backend(offline())


def test_spec_argument_overrides_the_environment(monkeypatch):
    monkeypatch.setenv(ENV_VAR, "bogus")
    default = offline()
    assert get_backend(default, spec="offline") is default
    with pytest.raises(LLMConfigError, match="spec"):
        get_backend(default, spec="bogus")
