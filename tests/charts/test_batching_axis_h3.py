"""The batching charts' batch axis: ticks at the batch sizes drawn, whole numbers (gemmlib.charts.batching)."""

from gemmlib.charts import batching as cb
from gemmlib.core.hardware import get_hardware
from gemmlib.core.results import BenchResult
from gemmlib.measure import batching as bb


def _x_axis(chart) -> dict:
    spec = chart.to_dict()
    layer = spec["layer"][0] if "layer" in spec else spec
    return layer["encoding"]["x"]["axis"]


def test_the_batch_axis_ticks_are_the_batches_run():
    """A sweep over batches 1 and 4 drew a log axis ticked at 1.2, 1.6, 1.8, 2.2, 2.4, 3.2 … (batches no one can run)
    on the intensity model and on the measured charts; the ticks are now the batches themselves."""
    rows = bb.model_rows(64, 512, 512, "fp32", [1, 4], get_hardware("h200"))
    assert _x_axis(cb.model_chart(rows, 14.0)) == {"values": [1, 4], "format": "d"}
    results = [BenchResult("batching", mode, "cpu", "cpu", "fp32", {"batch": b, "m": 64, "k": 512, "n": 512},
                           flops=2.0 * b * 64 * 512 * 512, bytes=4.0 * 512 * 512, median_s=1e-3 * b)
               for mode in ("loop", "stacked") for b in (1, 4, 16)]
    for metric in ("tflops", "gbps", "per_request_s"):
        assert _x_axis(cb.batching_chart(results, metric)) == {"values": [1, 4, 16], "format": "d"}, metric
