"""bench/gpu/decode_windows.py: the steady decode-step times the results pages quote, from lines in
the format of SGLang's decode log."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def tool(bench_gpu_tool):
    return bench_gpu_tool("decode_windows")


def line(bs, tp):
    return (f"[2026-11-30 01:06:34] Decode batch, #running-req: {bs}, #token: 7744, token usage: 0.02, "
            f"cuda graph: True, gen throughput (token/s): {tp}, #queue-req: 0")


def test_steady_steps_are_the_upper_half_of_the_windows(tool, tmp_path, capsys):
    # bs 2: two windows with a request boundary (slow) and three steady ones
    log = tmp_path / "log-dd.txt"
    log.write_text("\n".join([line(2, 150.0), line(2, 400.0), line(2, 380.0), line(2, 410.0), line(2, 90.0),
                              line(4, 800.0), "[probe] unrelated"]) + "\n")
    per_bs = tool.windows(log.read_text())
    assert per_bs == {2: [150.0, 400.0, 380.0, 410.0, 90.0], 4: [800.0]}
    assert tool.steady_ms(per_bs[2], 2) == pytest.approx(2 / 400.0 * 1e3)  # median of 380, 400, 410
    tool.main([str(log), "--bs", "2,4,8"])
    out = capsys.readouterr().out
    assert "| dd | 5.000 | 5.000 | - |" in out


def test_a_missing_log_is_a_one_line_error(tool, tmp_path):
    with pytest.raises(SystemExit, match="does not exist"):
        tool.main([str(tmp_path / "nope.txt")])


def test_boundary_windows_report_their_excess_over_steady_steps(tool, tmp_path, capsys):
    # bs 1, steady 200 tok/s (5 ms a step, 200 ms a window of 40): two boundary windows (180 and
    # 160 tok/s: 22.2 and 50 ms beyond 40 steady steps), one idle gap (2 tok/s, left out)
    log = tmp_path / "log-base.txt"
    log.write_text("\n".join(line(1, tp) for tp in (2.0, 200.0, 200.0, 180.0, 200.0, 160.0, 200.0)) + "\n")
    excess = tool.boundary_excess_ms(tool.windows(log.read_text())[1], 1)
    assert excess == pytest.approx([40 / 180 * 1e3 - 200.0, 40 / 160 * 1e3 - 200.0])
    tool.main([str(log), "--bs", "1", "--boundaries", "1"])
    out = capsys.readouterr().out
    assert "| base | 2 | 36.1 | 36.1 | 22.2 50.0 |" in out


def test_no_slow_windows_is_a_zero_row(tool, tmp_path, capsys):
    log = tmp_path / "log-dd.txt"
    log.write_text("\n".join(line(1, 200.0) for _ in range(4)) + "\n")
    tool.main([str(log), "--bs", "1", "--boundaries", "1"])
    assert "| dd | 0 | - | - | - |" in capsys.readouterr().out
