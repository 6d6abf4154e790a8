"""`bench batching --article` on a CPU says that the example it ran is the article's, scaled down.

README ("Tiling, batching and the roofline"): the article's 20 × 1024×4096 @ 4096×4096 example "with a verdict
(scaled down on a CPU, and it says so)". Before: the command line printed only the verdict, "At 20 × 64×512 @
512×512 (fp32), stacking is …", so a reader who asked for the article's example saw another shape with no word on
why, and `--json` did not say it either (the report and the page did). Now a line names both shapes, and the JSON
carries the shape run and `scaled_down`."""

from __future__ import annotations

import json

from gemmlib.measure import batching as bb

ARGS = ["bench", "batching", "--device", "cpu", "--m", "1", "--k", "64", "--n", "64", "--batches", "1", "--article"]


def test_the_article_example_on_a_cpu_says_it_is_scaled_down(run_cli):
    rc, out, err = run_cli(ARGS)
    assert rc == 0, err
    lines = out.splitlines()
    head = ("the article's example, 20 × 1024×4096 @ 4096×4096, scaled down for a CPU to 20 × 64×512 @ 512×512 "
            "(the full one takes minutes there):")
    assert head in lines
    assert lines[lines.index(head) + 1].startswith("At 20 × 64×512 @ 512×512 (fp32), stacking is ")


def test_the_json_names_the_shape_run_and_that_it_is_scaled(run_cli):
    rc, out, err = run_cli([*ARGS, "--json"])
    assert rc == 0, err
    art = json.loads(out)["article"]
    assert art["shape"] == bb.ARTICLE_CPU and art["scaled_down"] is True
    assert art["verdict"].startswith("At 20 × 64×512 @ 512×512")
    # whether stacking came out slower (a busy CPU can do that): the same rule as the page's warning box
    assert art["slower"] is bb.article_slower(art["speedup"], art["decode_speedup"])
    assert ("stacking was slower here" in art["verdict"] or "Stacking was slower" in art["verdict"]) is art["slower"]
