import numpy as np
import pytest
import torch

from neurips26.text import ByteTokenizer, CharTokenizer, Tokenizer

SAMPLES = ["", "hello, world", "naïve café – “quotes” … 日本語 🙂", "tabs\tand\nnewlines\r\n", "\x00\x7f"]


@pytest.mark.parametrize("text", SAMPLES)
def test_byte_tokenizer_round_trips_any_text(text):
    tok = ByteTokenizer()
    ids = tok.encode(text)
    assert ids == list(text.encode("utf-8"))
    assert all(0 <= i < 256 for i in ids)
    assert tok.decode(ids) == text


def test_char_tokenizer_round_trips_its_alphabet():
    text = "".join(SAMPLES)
    tok = CharTokenizer.from_text(text)
    assert tok.vocab_size == len(set(text))
    assert tok.alphabet == "".join(sorted(set(text)))
    for sample in SAMPLES:
        ids = tok.encode(sample)
        assert len(ids) == len(sample)
        assert tok.decode(ids) == sample


def test_both_satisfy_the_protocol_and_accept_arrays_and_tensors():
    for tok in (ByteTokenizer(), CharTokenizer("abc ")):
        assert isinstance(tok, Tokenizer)
        ids = tok.encode("a cab")
        assert tok.decode(np.asarray(ids)) == "a cab"
        assert tok.decode(torch.tensor(ids)) == "a cab"


def test_special_tokens_follow_the_ordinary_ids():
    tok = ByteTokenizer(specials=("<bos>", "<eos>", "<pad>"))
    assert tok.vocab_size == 259
    assert (tok.special_id("<bos>"), tok.special_id("<eos>"), tok.special_id("<pad>")) == (256, 257, 258)
    ids = tok.encode("hi", bos=True, eos=True)
    assert ids == [256, ord("h"), ord("i"), 257]
    assert tok.decode(ids) == "hi"
    assert tok.decode(ids, show_special=True) == "<bos>hi<eos>"
    chars = CharTokenizer("ab", specials=("<eos>",))
    assert chars.encode("ba", eos=True) == [1, 0, 2]
    assert chars.decode([1, 2, 0], show_special=True) == "b<eos>a"
    with pytest.raises(ValueError, match="<bos>"):
        chars.encode("a", bos=True)


def test_invalid_utf8_from_a_sampler_decodes_with_replacement():
    assert ByteTokenizer().decode([0xFF, ord("a")]) == "\ufffda"


def test_bad_inputs_raise_clear_errors():
    tok = CharTokenizer("abc")
    with pytest.raises(ValueError, match="'z'"):
        tok.encode("abz")
    with pytest.raises(ValueError, match=r"\[0, 3\)"):
        tok.decode([0, 3])
    with pytest.raises(ValueError, match=r"\[0, 256\)"):
        ByteTokenizer().decode([-1])
    with pytest.raises(TypeError, match="integers"):
        ByteTokenizer().decode([1.5])
    with pytest.raises(TypeError, match="text"):
        ByteTokenizer().encode(b"bytes")
    with pytest.raises(ValueError, match="repeat"):
        CharTokenizer("aba")
    with pytest.raises(ValueError, match="distinct"):
        ByteTokenizer(specials=("<x>", "<x>"))
