"""Language-model data that needs no download: tokenizers, corpora, batches and synthetic tasks.

- :mod:`~neurips26.text.tokenizer` — byte-level and character-level tokenizers (exact round trip).
- :mod:`~neurips26.text.corpus` — the standard library's English help texts (``"prose"``), its Python
  source (``"code"``) and a seeded Markov language (``"synthetic"``); document-level train/validation
  split; seeded next-token batches.
- :mod:`~neurips26.text.tasks` — copy and multi-query associative recall with a loss mask.
"""

from neurips26.text.corpus import (
    CODE_FILES,
    CORPORA,
    Corpus,
    Document,
    TokenBatches,
    code_documents,
    corpus_from_documents,
    load_corpus,
    prose_documents,
    sequential_batches,
    split_documents,
    synthetic_documents,
)
from neurips26.text.tasks import SequenceTask, copy_task, masked_accuracy, masked_cross_entropy, mqar
from neurips26.text.tokenizer import ByteTokenizer, CharTokenizer, Tokenizer

__all__ = [
    "CODE_FILES",
    "CORPORA",
    "ByteTokenizer",
    "CharTokenizer",
    "Corpus",
    "Document",
    "SequenceTask",
    "TokenBatches",
    "Tokenizer",
    "code_documents",
    "copy_task",
    "corpus_from_documents",
    "load_corpus",
    "masked_accuracy",
    "masked_cross_entropy",
    "mqar",
    "prose_documents",
    "sequential_batches",
    "split_documents",
    "synthetic_documents",
]
