"""What `gradviz graph` does with a report: the outputs it names, the drawing built once, what
to tell the user about it, and each output written.

>>> from gradviz.render.drawing import GraphDrawing
>>> drawing = GraphDrawing({"file": "f.py", "tensors": [], "nodes": [], "roots": []})
>>> drawing.count, [note.plain for note in drawing.notes]     # doctest: +NORMALIZE_WHITESPACE
(0, ['f.py: no graph to draw (no tensor that requires grad has a grad_fn or an
      AccumulateGrad)'])
"""

import os
import sys
from typing import NamedTuple

from rich.text import Text

from .dot import LARGE_GRAPH, build_columns, build_graph
from .output import OutputError, _redirected, check_output
from .renderer import EXIT_NO_RENDERER, RenderError, render, render_bytes
from .terminal import printable

__all__ = ["EXTENSIONS", "GraphDrawing", "Target", "output_targets"]

# The format of -o FILE, from its extension.
EXTENSIONS = {".svg": "svg", ".png": "png", ".pdf": "pdf", ".dot": "dot", ".gv": "dot"}


# Formats that are not text: never written to a terminal.
_BINARY = ("png", "pdf")


class Target(NamedTuple):
    """One output: its format, the path as the user gave it ("-" is standard output), and
    that path made absolute before the user's file runs (the file may change directory)."""

    fmt: str
    path: str
    resolved: str


def output_targets(*, svg=None, png=None, pdf=None, dot=None, output=None, protected=None,
                   stdout=None):
    """Return the Targets the options name, each checked before anything runs: RenderError
    (exit_code 2) when none is named, an extension says no format, a path must not be
    written (the file being run, a folder, a read-only file: see output.check_output), two
    outputs name one file or both standard output, or PNG/PDF would go to a terminal.
    stdout: the stream "-" stands for (default sys.stdout).

    >>> output_targets(svg="g.svg", output="-")[0][:2], output_targets(output="-")[0][:2]
    (('svg', 'g.svg'), ('dot', '-'))
    """
    stream = sys.stdout if stdout is None else stdout
    named = [(fmt, path, f"--{fmt} {path}") for fmt, path in (
        ("svg", svg), ("png", png), ("pdf", pdf), ("dot", dot)) if path]
    if output == "-":
        named.append(("dot", "-", "-o -"))
    elif output:
        ext = os.path.splitext(output)[1].lower()
        if ext not in EXTENSIONS:
            raise RenderError(f"cannot tell the format of {output!r} from its extension "
                              f"(use {', '.join(sorted(EXTENSIONS))}, or --svg/--png/--pdf/"
                              "--dot)", exit_code=2)
        named.append((EXTENSIONS[ext], output, f"-o {output}"))
    if not named:
        raise RenderError("say where to draw: --svg FILE, --png FILE, --pdf FILE, --dot FILE "
                          "or -o FILE (-o - for DOT on stdout)", exit_code=2)
    targets, named_by = [], {}
    for fmt, path, option in named:
        if path == "-":
            if fmt in _BINARY and _isatty(stream):
                raise RenderError(f"refusing to write {fmt.upper()} to a terminal: redirect "
                                  f"standard output (> graph.{fmt}) or give a file name",
                                  exit_code=2)
            key, shown = _stream_key(stream), "standard output"
        else:
            try:
                check_output(path, protected)
            except OutputError as exc:
                raise RenderError(str(exc), exc.exit_code) from None
            key, shown = _file_key(path), path
        # two options naming one file (by a link, a hard link, another spelling, or "-" and
        # the file standard output goes to): the second written would replace or follow the
        # first
        if key in named_by:
            raise RenderError(f"{shown} is named by two outputs ({named_by[key]} and {option}): "
                              "one would replace or run into the other; give each its own "
                              "file", exit_code=2)
        named_by[key] = option
        targets.append(Target(fmt, path, path if path == "-" else os.path.abspath(path)))
    return targets


def _file_key(path):
    """What names one file: its device and inode when it exists, else its resolved path."""
    try:
        st = os.stat(_redirected(path))
    except OSError:
        return os.path.realpath(path)
    return st.st_dev, st.st_ino


def _stream_key(stream):
    """What names the file a stream writes to, as _file_key: its device and inode when it has
    a file descriptor (so `-o -` and `--dot /dev/stdout` are one file), else "-"."""
    try:
        st = os.fstat(stream.fileno())
    except (AttributeError, OSError, ValueError):
        return "-"
    return st.st_dev, st.st_ino


def _isatty(stream):
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


class GraphDrawing:
    """A report's graph drawn once: DOT source, node count, shared tensors and notes.

    notes are rich Texts to show before writing: the file's error, an empty graph, a graph
    too big to read. Every text from the user's file in them is escaped (terminal.printable).
    """

    def __init__(self, report, *, view="backward", roots=None, show_saved=False,
                 max_depth=None, collapse=False, legend=True, modules=None):
        built = build_graph(report, view=view, roots=roots, show_saved=show_saved,
                            legend=legend, max_depth=max_depth, collapse=collapse,
                            modules=modules)
        self._source, self.count, self.shared, self._refs, self.chunks = built
        folded = modules is not None and modules.get("depth") is not None
        self.notes = _notes(report, built.count, collapse, max_depth, folded)

    @property
    def source(self):
        """The DOT text (joined from chunks the first time it is asked for)."""
        if self._source is None:
            self._source = b"".join(self.chunks).decode("utf-8")
        return self._source

    @property
    def refs(self):
        """{DOT node id: what it shows} (dot.BuiltGraph; made the first time it is asked
        for when the drawing came from columns)."""
        if callable(self._refs):
            self._refs = self._refs()
        return self._refs

    @classmethod
    def of_run(cls, run, *, roots=(), **options):
        """The drawing of a run (gradviz.inspect.Run) made from its report, built once; roots
        are names as the tables print them or as the user typed them (`%3`), each checked
        first (UsageError naming close matches for an unknown one). options: as __init__."""
        for name in roots:
            run.tensor(name)
        if not roots and _plain_options(**options):
            from ..inspect.graphdata import graph_columns
            columns = graph_columns(run)
            if columns is not None:     # the same drawing, without building the report
                return cls._of_columns(columns, **options)
        # the drawing reads neither the loops nor, without show_saved, the saved values
        report = run.report(saved=options.get("show_saved", False), loops=False)
        return cls(report, roots=[run.canonical(r) for r in roots] or None, **options)

    @classmethod
    def _of_columns(cls, columns, *, legend=True, modules=None, **_):
        """The drawing of graphdata's GraphColumns (for the options _plain_options accepts)."""
        drawing = cls.__new__(cls)
        built = build_columns(columns, legend=legend)
        drawing._source, drawing.count, drawing.shared, drawing._refs, drawing.chunks = built
        folded = modules is not None and modules.get("depth") is not None
        drawing.notes = _notes({"file": columns.file}, built.count, False, None, folded)
        return drawing

    def write(self, targets, *, renderer=None, protected=None, stdout=None):
        """Write every target (DOT ones first, so a missing renderer can point at them) and
        yield one line per file written ("-" goes to stdout, default sys.stdout). Errors
        raise RenderError with the exit code: 2 a path that cannot or must not be written,
        3 no renderer (the DOT is written anyway, to a file), 4 the renderer failed."""
        dot_copy = None
        for target in sorted(targets, key=lambda t: t.fmt != "dot"):
            if target.path == "-":
                _write_stdout(self._bytes(target.fmt, renderer, dot_copy),
                              sys.stdout if stdout is None else stdout, target.fmt)
                continue
            # The path as the user wrote it, unless their file changed the directory.
            path = target.path if os.path.abspath(target.path) == target.resolved \
                else target.resolved
            dot_text = self.chunks if target.fmt == "dot" and self.chunks else self.source
            render(dot_text, target.fmt, path, renderer=renderer, protected=protected,
                   dot_copy=dot_copy)
            if target.fmt == "dot" and dot_copy is None:
                dot_copy = path
            yield Text(printable(f"wrote {path} ({self.count} nodes, "
                                 f"{target.fmt.upper()})", keep=""))

    def _bytes(self, fmt, renderer, dot_copy):
        """The drawing as fmt for standard output, as a list of byte chunks; without a
        renderer, RenderError (exit 3) says where the DOT source is, as render does for a
        file."""
        if fmt == "dot" and self.chunks:
            return self.chunks
        try:
            return [render_bytes(self.source, fmt, renderer=renderer)]
        except RenderError as exc:
            if exc.exit_code != EXIT_NO_RENDERER:
                raise
            where = (f"The DOT source is in {dot_copy}." if dot_copy else
                     "Nothing was written to standard output; --dot - writes the DOT source "
                     "there.")
            raise RenderError(f"{exc}\n{where}", EXIT_NO_RENDERER) from None


def _write_stdout(chunks, stream, fmt):
    """Write the byte chunks of fmt to a text stream's binary buffer, after what the stream
    holds; a stream with no buffer (io.StringIO) takes the text formats as text."""
    stream.flush()
    buffer = getattr(stream, "buffer", None)
    if buffer is None:
        if fmt in _BINARY:
            raise RenderError(f"cannot write {fmt.upper()} to a text-only stream", exit_code=2)
        stream.write(b"".join(chunks).decode("utf-8"))
        stream.flush()
        return
    for chunk in chunks:
        buffer.write(chunk)
    buffer.flush()


def _plain_options(view="backward", show_saved=False, max_depth=None, collapse=False,
                   legend=True, modules=None):
    """Whether build_columns draws what these options ask: the backward view, nothing
    folded or added (module clusters of a run with no module call are none: graph_columns
    answers only for such a run)."""
    return (view == "backward" and not show_saved and max_depth is None and not collapse
            and (modules is None or not modules.get("expand")))


def _notes(report, count, collapse, max_depth, folded=False):
    notes = []
    error = report.get("error")
    if error:
        said = f"{error.get('type')}: {error.get('message')}" if error.get("message") else \
            f"{error.get('type')}"      # MemoryError says nothing more
        note = Text(printable(said), style="red")
        # an error with no line of the file's (os._exit in an atexit function, the parser's
        # MemoryError) has no place, or only the file
        where = f" ({printable(error.get('file'), keep='')}" if error.get("file") else ""
        if where:
            where += f":{error.get('line')})" if error.get("line") else ")"
        note.append(printable(f"{where} — drawing what was recorded up to there"))
        notes.append(note)
    if count == 0:
        file = printable(report.get("file"), keep="")
        notes.append(Text(f"{file}: no graph to draw (no tensor that requires grad has a grad_fn "
                          "or an AccumulateGrad)"))
    if count > LARGE_GRAPH and not collapse and max_depth is None and not folded:
        note = Text("warning:", style="yellow")
        # A model's graph reads best folded by module (one box per block).
        fold = "--depth-modules N, " if report.get("module_calls") else ""
        note.append(f" {count} nodes: the drawing will be hard to read; try {fold}--collapse, "
                    "--max-depth N or --root NAME")
        notes.append(note)
    return notes
