"""The tiling chart's tile axis: ticks at the tile sizes run, whole numbers (gemmlib.charts.tiling)."""

from gemmlib.charts import tiling as ct
from gemmlib.core.results import BenchResult


def test_the_tile_axis_ticks_are_the_tiles_run():
    """Tiles 16 and 32 drew a log axis ticked at 18, 20, 22, … 30 (tile sizes no kernel used); now 16 and 32."""
    results = [BenchResult("tiling", impl, "cpu", "cpu", "fp32", {"m": 64, "n": 64, "k": 64, "tile": t},
                           flops=2.0 * 64**3, bytes=3 * 4.0 * 64**2, median_s=1e-3)
               for impl in ("python_tiled", "numpy_blocked") for t in (16, 32)]
    results.append(BenchResult("tiling", "torch", "cpu", "cpu", "fp32", {"m": 64, "n": 64, "k": 64}, flops=2.0 * 64**3,
                               bytes=3 * 4.0 * 64**2, median_s=1e-4))
    swept = ct.tiling_chart(results).to_dict()["layer"][0]
    assert swept["encoding"]["x"]["axis"] == {"values": [16, 32], "format": "d"}
