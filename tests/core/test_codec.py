"""The one codec across a process boundary (gemmlib.core.codec): dataclasses through JSON and back as
they were, messages as their template and values, and data that is not what its type says refused
with where it went wrong."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import pytest

from gemmlib.core import codec
from gemmlib.core.calibration import Calibration, GemmPoint, OtherPoint
from gemmlib.core.errors import InputError
from gemmlib.core.i18n import N_, Msg, Text
from gemmlib.core.results import BenchResult
from gemmlib.llm.presets import from_name


def _through_json(tp, value):
    return codec.decode(tp, json.loads(json.dumps(codec.encode(value), allow_nan=False)))


@dataclass(frozen=True)
class Sized:
    m: int
    labels: tuple[str, ...] = ()
    scale: float | None = None
    extra: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.m < 1:
            raise InputError(N_("M must be at least 1, got {m}"), m=self.m)


def test_a_result_row_comes_back_equal_with_its_messages():
    note = Text.joined([Text(N_("tile {tile} means {calls:,} calls"), tile=8, calls=32768), N_("library's own tiling")])
    r = BenchResult("tiling", "python_tiled", "cpu", "a CPU", "fp32", {"m": 64, "label": Text(N_("square {n}"), n=64)},
                    2.0 * 64**3, 3 * 64 * 64 * 4.0, supported=False, reason=note, median_s=None, p20_s=float("inf"),
                    extra={"calls": 32768, "kernels": ["k1", "k2"]})
    back = _through_json(list[BenchResult], [r])[0]
    assert back == r and back.p20_s == float("inf")
    assert isinstance(back.reason, Text) and isinstance(back.shape["label"], Text)
    fake = {"tile {tile} means {calls:,} calls": "分块 {tile}：{calls:,} 次", "; ": "；",
            "library's own tiling": "库自己的分块", "square {n}": "方阵 {n}"}.get
    assert back.reason.render(lambda s: fake(s, s)) == "分块 8：32,768 次；库自己的分块"
    assert back.shape["label"].render(lambda s: fake(s, s)) == "方阵 64"


def test_a_message_renders_exactly_as_where_it_was_made():
    t = Text(N_("{n} ranks: {text}"), n=2, text=Text(N_("shapes {shape!r} on {dev}"), shape=(1, 2), dev="cpu"))
    back = _through_json(str, t)
    assert str(back) == str(t) == "2 ranks: shapes (1, 2) on cpu" and isinstance(back, Text)
    m = Msg(N_("a {m}×{n}×{k} GEMM"), m=1, n=2, k=3)
    assert _through_json(Msg, m) == m
    assert _through_json(str, "plain words") == "plain words"


def test_nested_dataclasses_and_a_model_config():
    model = from_name("llama-3-8b")
    assert _through_json(type(model), model) == model
    cal = Calibration("cpu", "a CPU", "tiny", ("fp32",), (GemmPoint("linear", "q_proj", "fp32", 4, 8, 16, 1, 1e-3,
                                                                    1024.0, 2048.0),),
                      (OtherPoint("norms", "fp32", "prefill", 4, 64, 1e-6, 512.0),), notes=("a note",))
    back = _through_json(Calibration, cal)
    assert back == cal and isinstance(back.gemm, tuple) and isinstance(back.gemm[0], GemmPoint)


def test_data_that_is_not_its_type_is_refused_with_where():
    with pytest.raises(codec.CodecError, match=r"\$\.m: expected a whole number"):
        codec.decode(Sized, {"m": "5"})
    with pytest.raises(codec.CodecError, match="no field 'n'"):
        codec.decode(Sized, {"m": 5, "n": 1})
    with pytest.raises(codec.CodecError, match="needs 'm'"):
        codec.decode(Sized, {})
    with pytest.raises(codec.CodecError, match=r"labels\[1\]: expected text"):
        codec.decode(Sized, {"m": 5, "labels": ["a", 3]})
    with pytest.raises(codec.CodecError, match="M must be at least 1"):  # the type's own check, on decode
        codec.decode(Sized, {"m": 0})
    with pytest.raises(codec.CodecError, match="true or false"):
        codec.decode(bool, 1)
    assert codec.decode(Sized, {"m": 5.0, "scale": 2}) == Sized(5, scale=2.0)


def test_envelopes_are_versioned_and_named():
    p = codec.pack("tiling", Sized(3))
    assert p["v"] == codec.VERSION and codec.unpack("tiling", Sized, p) == Sized(3)
    with pytest.raises(codec.CodecError, match="expected 'batching'"):
        codec.unpack("batching", Sized, p)
    with pytest.raises(codec.CodecError, match="version"):
        codec.unpack("tiling", Sized, {**p, "v": codec.VERSION + 1})


def test_a_value_with_no_json_form_becomes_its_text_and_a_tagged_key_is_refused():
    class Odd:
        def __str__(self) -> str:
            return "torch.bfloat16"

    assert codec.encode({"x": Odd(), "p": codec.Shown("a", "b")}) == {"x": "torch.bfloat16", "p": "a"}
    with pytest.raises(codec.CodecError, match="key"):
        codec.encode({"$text": 1})
