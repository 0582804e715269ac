"""Tracebacks keep their shape at 80 columns or less (issue #13): in the Error box, in the
Anomalies table and in what the file prints, a long line wraps under itself (indented further),
never back to the left edge and never word by word in a narrow column."""

import textwrap

import pytest
from click.testing import CliRunner

from gradviz_cli.main import cli

LONG_NAMES = """\
import gradviz as torch


def compute_the_loss_of_a_rather_long_function_name(values_with_a_long_name):
    intermediate_result_with_long_name = values_with_a_long_name * 2
    intermediate_result_with_long_name.backward()
    return intermediate_result_with_long_name


def main():
    x = torch.ones(3, requires_grad=True)
    compute_the_loss_of_a_rather_long_function_name(x)


main()
"""


@pytest.fixture
def here(tmp_path, monkeypatch):
    """The tests run f.py from its own folder, so the paths printed are short."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _run(folder, text, columns, *args):
    (folder / "f.py").write_text(text)
    result = CliRunner().invoke(cli, ["run", "f.py", "--no-color", *args],
                                env={"COLUMNS": str(columns)})
    return result, [line.rstrip() for line in result.output.splitlines()]


def _box(lines):
    start = next(i for i, line in enumerate(lines) if line.startswith("╭─ Error"))
    return [line[2:-1].rstrip() for line in lines[start + 1:] if line.startswith("│")]


def test_error_box_at_60_columns(here):
    result, lines = _run(here, LONG_NAMES, 60)
    assert result.exit_code == 1
    assert _box(lines) == [
        "RuntimeError: grad can be implicitly created only for",
        "scalar outputs",
        "at f.py:6",
        "Traceback (your code only):",
        '  File "f.py", line 15, in <module>',
        "    main()",
        '  File "f.py", line 12, in main',
        "    compute_the_loss_of_a_rather_long_function_name(x)",
        '  File "f.py", line 6, in',
        "      compute_the_loss_of_a_rather_long_function_name",
        "    intermediate_result_with_long_name.backward()",
        "fix: reduce the output first (y.sum().backward()) or",
        "     pass a gradient of its shape",
        "     (y.backward(torch.ones_like(y)))",
        # the local as the tables name it (a word longer than the line folds)
        "see: gradviz run f.py --backward",
        "     compute_the_loss_of_a_rather_long_function_name.int",
        "     ermediate_result_with_long_name --gradient ones",
    ]


@pytest.mark.parametrize("columns", [60, 80])
def test_no_traceback_line_wraps_back_to_the_edge(here, columns):
    _, lines = _run(here, LONG_NAMES.replace("main", "main_function_of_this_file"),
                    columns)
    box = _box(lines)
    trace = box[box.index("Traceback (your code only):") + 1:]
    trace = trace[:next(i for i, line in enumerate(trace) if line.startswith("fix: "))]
    # Every line of the traceback is indented: a frame line, its code, or a continuation.
    assert all(line.startswith("  ") for line in trace)
    assert [line.strip() for line in trace if line.startswith("  File")] != []
    # A frame line's continuation is indented further than the code lines.
    frames = [i for i, line in enumerate(trace) if line.startswith("  File")]
    for i in frames:
        j = i + 1
        while trace[j].startswith("      "):
            j += 1
        assert trace[j].startswith("    ") and not trace[j].startswith("     ")
    hint = box[box.index(trace[-1]) + 1:]
    assert all(line.startswith(("fix: ", "see: ", "     ")) for line in hint)


def test_anomalies_at_60_columns_are_blocks(here):
    result, lines = _run(here, textwrap.dedent("""\
        import gradviz as torch
        x = torch.tensor([-1.0, 4.0], requires_grad=True)
        y = x.sqrt()
        y.sum().backward()   # the gradient of sqrt at -1 is nan: anomaly mode stops here
        """), 60, "--anomaly")
    assert result.exit_code == 1
    start = lines.index("Anomalies")
    assert lines[start + 1:lines.index("", start)] == [
        "n0 SqrtBackward0  at f.py:3",
        "  Function 'SqrtBackward0' returned nan values in its 0th",
        "      output.",
        '    File "f.py", line 3, in <module>',
        "      y = x.sqrt()",
    ]


def test_the_files_own_traceback_wraps_under_itself(here):
    result, lines = _run(here, textwrap.dedent("""\
        import sys
        import traceback
        try:
            def compute_the_loss_of_a_rather_long_function_name(values):
                raise ValueError("a rather long message that says what went wrong in detail")
            compute_the_loss_of_a_rather_long_function_name(1)
        except ValueError:
            traceback.print_exc(file=sys.stdout)
        """), 60)
    assert result.exit_code == 0
    frame = [line[2:-1].rstrip() for line in lines if line.startswith("│")]
    assert frame == [
        "Traceback (most recent call last):",
        '  File "f.py", line 6, in <module>',
        "    compute_the_loss_of_a_rather_long_function_name(1)",
        '  File "f.py", line 5, in',
        "    compute_the_loss_of_a_rather_long_function_name",
        '    raise ValueError("a rather long message that says',
        '      what went wrong in detail")',
        "ValueError: a rather long message that says what went",
        "wrong in detail",
    ]
