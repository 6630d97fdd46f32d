"""TransformersChat: its error paths, and its generation logic against a stand-in ``transformers`` module.

``transformers`` is not installed here, so a small fake module (byte-level "tokenizer", a "model" that
always writes the same reply) checks what TransformersChat asks of the real library: local files only,
the chat template with a generation prompt, greedy decoding at temperature 0, seeded sampling above it,
stop strings, and the token counts. At a positive temperature the fake model appends a digit drawn from
torch's global generator, as sampling in ``generate`` does.
"""

# ruff: noqa: NPY002 - these tests are about NumPy's global random state, which transformers.set_seed sets

import random
import sys
import types

import numpy as np
import pytest
import torch

from neurips26.llm import ChatModel, LLMConfigError, Message, TransformersChat

REPLY = b"The answer is 7. STOP and more"
EOS = 0


class FakeTensor(np.ndarray):
    def to(self, device):
        return self


def tensor(ids):
    return np.asarray([ids], dtype=np.int64).view(FakeTensor)


def fake_transformers(chat_template="{{ messages }}"):
    log = {"loads": [], "chats": [], "generate": [], "seeds": []}

    class AutoTokenizer:
        eos_token_id = EOS
        pad_token_id = None

        def __init__(self):
            self.chat_template = chat_template

        @classmethod
        def from_pretrained(cls, path, **kwargs):
            log["loads"].append(("tokenizer", path, kwargs))
            return cls()

        def apply_chat_template(self, chat, *, add_generation_prompt, return_tensors, return_dict):
            log["chats"].append((chat, add_generation_prompt, return_tensors, return_dict))
            ids = list("".join(f"<{m['role']}>{m['content']}" for m in chat).encode() + b"<assistant>")
            return {"input_ids": tensor(ids), "attention_mask": tensor([1] * len(ids))}

        def decode(self, ids, skip_special_tokens=False):
            return bytes(i for i in ids if not (skip_special_tokens and i == EOS)).decode()

    class AutoModelForCausalLM:
        device = "cpu"
        generation_config = types.SimpleNamespace(eos_token_id=[EOS])

        @classmethod
        def from_pretrained(cls, path, **kwargs):
            log["loads"].append(("model", path, kwargs))
            return cls()

        def to(self, device):
            log["device"] = device
            return self

        def eval(self):
            return self

        def generate(self, input_ids, attention_mask, **kwargs):
            log["generate"].append(kwargs)
            reply = list(REPLY)
            if kwargs["do_sample"]:  # a sampled token from the global generator, as real sampling uses
                reply += list(str(int(torch.randint(0, 10**6, ()))).encode())
            new = (reply + [EOS])[: kwargs["max_new_tokens"]]
            return np.concatenate([input_ids, [new]], axis=1)

    def set_seed(seed):
        log["seeds"].append(seed)
        random.seed(seed)
        np.random.seed(seed)
        torch.manual_seed(seed)

    module = types.ModuleType("transformers")
    module.AutoTokenizer = AutoTokenizer
    module.AutoModelForCausalLM = AutoModelForCausalLM
    module.set_seed = set_seed
    return module, log


def test_missing_path_is_named(tmp_path):
    with pytest.raises(FileNotFoundError, match="path") as info:
        TransformersChat(tmp_path / "no-such-model")
    assert "no-such-model" in str(info.value) and "never downloads" in str(info.value)
    (tmp_path / "weights.bin").write_bytes(b"")
    with pytest.raises(NotADirectoryError, match="path"):
        TransformersChat(tmp_path / "weights.bin")
    with pytest.raises(TypeError, match="path"):
        TransformersChat(3)


def test_missing_transformers_says_how_to_install(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "transformers", None)  # makes `import transformers` fail
    with pytest.raises(ImportError, match="pip install"):
        TransformersChat(tmp_path)


def test_loads_locally_and_decodes_greedily_with_the_chat_template(tmp_path, monkeypatch):
    module, log = fake_transformers()
    monkeypatch.setitem(sys.modules, "transformers", module)
    model = TransformersChat(
        tmp_path, device="cpu", load_kwargs={"torch_dtype": "auto", "local_files_only": False}
    )
    assert isinstance(model, ChatModel)
    assert log["loads"] == [
        ("tokenizer", str(tmp_path), {"local_files_only": True}),
        ("model", str(tmp_path), {"torch_dtype": "auto", "local_files_only": True}),
    ]
    conv = [Message.system("Answer with a number."), Message.user("How many cubes?")]
    out = model.complete(conv)
    (chat, gen_prompt, _, _) = log["chats"][0]
    assert chat == [
        {"role": "system", "content": "Answer with a number."},
        {"role": "user", "content": "How many cubes?"},
    ]
    assert gen_prompt is True
    (kwargs,) = log["generate"]
    assert kwargs["do_sample"] is False and "temperature" not in kwargs and log["seeds"] == []
    assert kwargs["max_new_tokens"] == 512 and kwargs["pad_token_id"] == EOS
    assert out.text == REPLY.decode() and out.finish_reason == "stop"
    prompt_len = len(b"<system>Answer with a number.<user>How many cubes?<assistant>")
    assert (out.usage.prompt_tokens, out.usage.completion_tokens) == (prompt_len, len(REPLY) + 1)
    assert out.model == tmp_path.name


def test_stop_strings_length_and_seeded_sampling(tmp_path, monkeypatch):
    module, log = fake_transformers()
    monkeypatch.setitem(sys.modules, "transformers", module)
    model = TransformersChat(tmp_path, seed=3)
    conv = [Message.user("How many cubes?")]
    stopped = model.complete(conv, stop=["STOP", "never"])
    assert stopped.text == "The answer is 7. " and stopped.finish_reason == "stop"
    assert log["generate"][-1]["stop_strings"] == ["STOP", "never"] and "tokenizer" in log["generate"][-1]
    short = model.complete(conv, max_tokens=5)
    assert short.text == "The a" and short.finish_reason == "length" and short.usage.completion_tokens == 5
    model.complete(conv, temperature=0.7)
    assert log["generate"][-1]["do_sample"] is True and log["generate"][-1]["temperature"] == 0.7
    assert log["seeds"] == [TransformersChat(tmp_path, seed=3).sampling_seed()]  # the first draw of seed 3


def test_repeated_samples_differ_and_a_rerun_repeats_them(tmp_path, monkeypatch):
    module, log = fake_transformers()
    monkeypatch.setitem(sys.modules, "transformers", module)
    conv = [Message.user("How many cubes?")]

    def run(seed):
        model = TransformersChat(tmp_path, seed=seed)
        return [model.complete(conv, temperature=0.8).text for _ in range(4)]

    first = run(3)
    assert len(set(first)) == 4  # r samples of one prompt differ (one seed per call, not one per model)
    assert run(3) == first  # the same model seed repeats the whole run
    assert run(4) != first
    # a caller's per-call seed makes one call reproducible on its own, whatever came before
    model = TransformersChat(tmp_path, seed=3)
    once = model.complete(conv, temperature=0.8, seed=11).text
    model.complete(conv, temperature=0.8)
    assert model.complete(conv, temperature=0.8, seed=11).text == once
    # greedy calls draw no seed, so they do not shift the samples that follow
    model = TransformersChat(tmp_path, seed=3)
    model.complete(conv)
    assert [model.complete(conv, temperature=0.8).text for _ in range(4)] == first
    with pytest.raises(ValueError, match="seed"):
        model.complete(conv, temperature=0.8, seed=-1)


def test_sampling_leaves_the_callers_random_state_alone(tmp_path, monkeypatch):
    module, _ = fake_transformers()
    monkeypatch.setitem(sys.modules, "transformers", module)
    model = TransformersChat(tmp_path)
    random.seed(5), np.random.seed(5), torch.manual_seed(5)
    expected = (random.random(), np.random.rand(), float(torch.rand(())))
    random.seed(5), np.random.seed(5), torch.manual_seed(5)
    model.complete([Message.user("How many cubes?")], temperature=0.8)
    assert (random.random(), np.random.rand(), float(torch.rand(()))) == expected


def test_images_and_missing_chat_template_are_refused(tmp_path, monkeypatch):
    module, _ = fake_transformers()
    monkeypatch.setitem(sys.modules, "transformers", module)
    png = b"\x89PNG\r\n\x1a\n" + b"x"
    with pytest.raises(ValueError, match="text-only"):
        TransformersChat(tmp_path).complete([Message.user("look", [png])])
    module, _ = fake_transformers(chat_template=None)
    monkeypatch.setitem(sys.modules, "transformers", module)
    with pytest.raises(LLMConfigError, match="chat template"):
        TransformersChat(tmp_path)
