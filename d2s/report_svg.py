"""A static program drawn as SVG, for the HTML report (`report_html.py`).

Ops are boxes named by their type; an op with sub-blocks (`cond`, `while`) is a box holding
one box per sub-block (`^true`/`^false`, `^cond`/`^body`) with that block's ops inside. Feeds,
parameters and fetches are marked (ellipses of their own colour); ops of a run that the
executor fuses (`runtime.program.fusion`) are shaded. Every op's element has the id
`op_BLOCK_INDEX`, so a test (or a reader of the page source) can find each op.

The layout is Graphviz `dot`'s when the `dot` program is installed (`layout="auto"`), else a
small layered layout of our own: an op sits one row below the lowest op of its block that it
reads from; rows are centred; a box is as large as its sub-blocks side by side.

>>> import runtime as rt
>>> main = rt.static.Program()
>>> with rt.static.program_guard(main):
...     x = rt.static.data('x', [2, 4], 'float32')
...     y = rt.tanh(x) + 1.0
>>> svg = draw(main, ['x'], [y.name], layout='layered')
>>> svg.count('class="node op') == 2 and 'id="op_0_1"' in svg
True
"""
from __future__ import annotations

import html
import shutil
import subprocess
from typing import NamedTuple

from runtime.program import fusion
from runtime.program.printer import op_lines

_SUB_BLOCK_NAMES = {"cond": ("^true", "^false"), "while": ("^cond", "^body")}
_ROW_GAP, _COL_GAP, _PAD, _HEADER, _NODE_H = 34, 14, 10, 18, 26
_FILL = {"op": "#ffffff", "fused": "#ffe9b3", "feed": "#d8ecff", "param": "#e4f5dc",
         "fetch": "#f8dcdc"}


class Node(NamedTuple):
    """One thing drawn: `id` (unique in the SVG), `label`, `kind` ('op', 'fused', 'feed',
    'param', 'fetch') and `title` (the tooltip: the op's line in the printed program and its
    user line)."""

    id: str
    label: str
    kind: str
    title: str


class _Box:
    """An op with sub-blocks: its node and one (label, items) per sub-block."""

    def __init__(self, node: Node, blocks: list):
        self.node = node
        self.blocks = blocks


class Graph:
    """What is drawn: the top-level items (Nodes and _Boxes, in block order) and the edges
    (producer id, consumer id)."""

    def __init__(self, program, feeds: list[str], fetches: list[str]):
        self.program = program
        self.fused = fused_ops(program)
        self.producer: dict[str, str] = {}
        self.edges: list[tuple[str, str]] = []
        self.layer: dict[str, int] = {}
        top = [Node(f"feed_{n}", n, "feed", f"feed {n}: {_type(program, n)}") for n in feeds]
        params = [n for n in program.tensors if _read_anywhere(program, n)]
        top += [Node(f"param_{n}", n, "param", f"parameter {n}: {_type(program, n)}")
                for n in params]
        for node in top:
            self.producer[node.label] = node.id
        self.items = top + self._block_items(program.global_block())
        for n in fetches:
            node = Node(f"fetch_{n}", n, "fetch", f"fetch {n}: {_type(program, n)}")
            self.items.append(node)
            if n in self.producer:
                self.edges.append((self.producer[n], node.id))

    def _block_items(self, block) -> list:
        items = []
        for j, op in enumerate(block.ops):
            node = Node(f"op_{block.idx}_{j}", op.type,
                        "fused" if (block.idx, j) in self.fused else "op", _op_title(op,
                                                                             block))
            for name in op.input_names():
                if name in self.producer:
                    self.edges.append((self.producer[name], node.id))
            if op.blocks:
                labels = _SUB_BLOCK_NAMES.get(op.type, ())
                subs = [(labels[k] if k < len(labels) else f"^block{b}",
                         self._block_items(self.program.block(b)))
                        for k, b in enumerate(op.blocks)]
                items.append(_Box(node, subs))
            else:
                items.append(node)
            for name in op.outputs:
                self.producer[name] = node.id
        return items

    def ops(self):
        """Every op node, boxes included."""
        def walk(items):
            for it in items:
                if isinstance(it, _Box):
                    yield it.node
                    for _, sub in it.blocks:
                        yield from walk(sub)
                elif it.kind in ("op", "fused"):
                    yield it
        return list(walk(self.items))


def _type(program, name: str) -> str:
    v = program.find_var(name)
    return v.type_str() if v is not None else "?"


def _read_anywhere(program, name: str) -> bool:
    return any(name in op.input_names() for op in program.ops())


def _op_title(op, block) -> str:
    lines = op_lines(block.program, op, block, "", False)
    text = lines[0].strip() if lines else op.type
    origin = block.program.origin_of(op)
    if origin is not None:
        text += f"\n{origin[0].rsplit('/', 1)[-1]}:{origin[1]}  {origin[2]}"
    return text


# ---- fused runs ----------------------------------------------------------------------------

def fused_ops(program) -> set[tuple[int, int]]:
    """(block, op index) of each op the executor fuses into a run (`fusion.find_groups`, as
    the code generator asks it); empty when fusion is off or nothing is large enough."""
    how = fusion.mode()
    if not fusion.may_fuse(program, how):
        return set()
    found = set()
    for block in program.blocks:
        reads = _reads_by_index(block)
        keep = set(block.results) | set(program.inputs)

        def outside(name, first, last, reads=reads, keep=keep):
            return name in keep or any(j < first or j > last for j in reads.get(name, ()))
        for group in fusion.find_groups(block, outside, gpu=how == "gpu"):
            found.update((block.idx, j) for j in group.ops)
    return found


def _reads_by_index(block) -> dict[str, list[int]]:
    """name -> indices of the ops of `block` that read it (directly or in their sub-blocks);
    values read by no op of the block count as read after it (index len(ops))."""
    reads: dict[str, list[int]] = {}
    for j, op in enumerate(block.ops):
        names = set(op.input_names())
        for b in op.blocks:
            for sub in _descendants(block.program, b):
                for o in sub.ops:
                    names.update(o.input_names())
                names.update(r for r in sub.results if isinstance(r, str))
        for n in names:
            reads.setdefault(n, []).append(j)
    for op in block.ops:
        for n in op.outputs:
            reads.setdefault(n, [len(block.ops)])  # maybe fetched: kept
    return reads


def _descendants(program, idx: int):
    yield program.block(idx)
    for op in program.block(idx).ops:
        for b in op.blocks:
            yield from _descendants(program, b)


# ---- the layered layout --------------------------------------------------------------------

class _Placed(NamedTuple):
    x: float
    y: float
    w: float
    h: float


def _width(label: str) -> float:
    return max(54.0, 7.2 * len(label) + 18)


class _Layout:
    """Positions of every item of a drawing with these edges."""

    def __init__(self, edges: list):
        self.edges = edges
        self.placed: dict[str, _Placed] = {}
        self.boxes: list[_Box] = []

    def rows(self, items) -> list[list]:
        """Items in rows: each one row below the lowest item of the same list it reads
        from."""
        row: dict[str, int] = {}
        inside = {_id(it): _all_ids(it) for it in items}
        owner = {sub: i for i, subs in inside.items() for sub in subs}
        rows: list[list] = []
        for it in items:
            i, r = _id(it), 0
            for src, dst in self.edges:
                if dst in inside[i] and owner.get(src) in row and owner[src] != i:
                    r = max(r, row[owner[src]] + 1)
            row[i] = r
            while len(rows) <= r:
                rows.append([])
            rows[r].append(it)
        return rows

    def size(self, item) -> tuple[float, float]:
        if not isinstance(item, _Box):
            return _width(item.label), _NODE_H
        sizes = [self.sub_size(label, items) for label, items in item.blocks]
        w = sum(s[0] for s in sizes) + _COL_GAP * (len(sizes) - 1) + 2 * _PAD
        h = max((s[1] for s in sizes), default=0) + _HEADER * 2 + _PAD
        return max(w, _width(item.node.label) + 2 * _PAD), h

    def sub_size(self, label: str, items) -> tuple[float, float]:
        """A sub-block's box: its items, and room for its label when it has none."""
        w, h = self.block_size(items)
        return max(w, _width(label)), max(h, _NODE_H / 2)

    def block_size(self, items) -> tuple[float, float]:
        rows = self.rows(items)
        w = max((sum(self.size(it)[0] for it in r) + _COL_GAP * (len(r) - 1) for r in rows),
                default=0)
        h = sum(max(self.size(it)[1] for it in r) for r in rows) + _ROW_GAP * max(
            len(rows) - 1, 0)
        return w, h

    def place(self, items, x0: float, y0: float, width: float) -> None:
        y = y0
        for r in self.rows(items):
            sizes = [self.size(it) for it in r]
            total = sum(s[0] for s in sizes) + _COL_GAP * (len(r) - 1)
            x = x0 + (width - total) / 2
            for it, (w, h) in zip(r, sizes):
                self.placed[_id(it)] = _Placed(x, y, w, h)
                if isinstance(it, _Box):
                    self.boxes.append(it)
                    bx = x + _PAD
                    for label, sub in it.blocks:
                        sw, _ = self.sub_size(label, sub)
                        self.placed[f"{it.node.id}/{label}"] = _Placed(
                            bx, y + _HEADER, sw, h - _HEADER - _PAD)
                        self.place(sub, bx, y + 2 * _HEADER, sw)
                        bx += sw + _COL_GAP
                x += w + _COL_GAP
            y += max(s[1] for s in sizes) + _ROW_GAP


def _id(item) -> str:
    return item.node.id if isinstance(item, _Box) else item.id


def _all_ids(item) -> set:
    if not isinstance(item, _Box):
        return {item.id}
    out = {item.node.id}
    for _, sub in item.blocks:
        for it in sub:
            out |= _all_ids(it)
    return out


def _layered(graph: Graph) -> str:
    layout = _Layout(graph.edges)
    w, h = layout.block_size(graph.items)
    layout.place(graph.items, _PAD, _PAD, w)
    placed, boxes = layout.placed, layout.boxes
    width, height = w + 2 * _PAD, h + 2 * _PAD
    out = [(f'<svg xmlns="http://www.w3.org/2000/svg" class="program" width="{width:.0f}" '
           f'height="{height:.0f}" viewBox="0 0 {width:.0f} {height:.0f}">'), _ARROW]
    for box in boxes:  # boxes first, so nodes and edges lie on top
        p = placed[box.node.id]
        out.append(f'<g class="node box" id="{box.node.id}"><title>{_esc(box.node.title)}'
                   f'</title><rect x="{p.x:.1f}" y="{p.y:.1f}" width="{p.w:.1f}" '
                   f'height="{p.h:.1f}" rx="6" fill="#f4f4fb" stroke="#66a" '
                   f'stroke-dasharray="5,3"/><text x="{p.x + 6:.1f}" y="{p.y + 13:.1f}" '
                   f'font-weight="bold">{_esc(box.node.label)}</text></g>')
        for label, _ in box.blocks:
            q = placed[f"{box.node.id}/{label}"]
            out.append(f'<g class="block"><rect x="{q.x:.1f}" y="{q.y:.1f}" width="{q.w:.1f}"'
                       f' height="{q.h:.1f}" fill="none" stroke="#aab"/><text x="{q.x + 4:.1f}"'
                       f' y="{q.y + 13:.1f}" fill="#557">{_esc(label)}</text></g>')
    for src, dst in graph.edges:
        a, b = placed.get(src), placed.get(dst)
        if a is not None and b is not None:
            out.append(f'<line class="edge" x1="{a.x + a.w / 2:.1f}" y1="{a.y + a.h:.1f}" '
                       f'x2="{b.x + b.w / 2:.1f}" y2="{b.y:.1f}" stroke="#777" '
                       'marker-end="url(#arrow)"/>')
    for node in _leaves(graph.items):
        p = placed[node.id]
        shape = (f'<ellipse cx="{p.x + p.w / 2:.1f}" cy="{p.y + p.h / 2:.1f}" rx="{p.w / 2:.1f}"'
                 f' ry="{p.h / 2:.1f}"' if node.kind in ("feed", "param", "fetch") else
                 f'<rect x="{p.x:.1f}" y="{p.y:.1f}" width="{p.w:.1f}" height="{p.h:.1f}" rx="3"')
        out.append(f'<g class="node {node.kind}" id="{node.id}"><title>{_esc(node.title)}'
                   f'</title>{shape} fill="{_FILL[node.kind]}" stroke="#444"/><text '
                   f'x="{p.x + p.w / 2:.1f}" y="{p.y + 17:.1f}" text-anchor="middle">'
                   f'{_esc(node.label)}</text></g>')
    out.append("</svg>")
    return "\n".join(out)


_ARROW = ('<defs><marker id="arrow" viewBox="0 0 8 8" refX="8" refY="4" markerWidth="7" '
          'markerHeight="7" orient="auto"><path d="M0,0 L8,4 L0,8 z" fill="#777"/></marker>'
          '</defs>')


def _leaves(items):
    for it in items:
        if isinstance(it, _Box):
            for _, sub in it.blocks:
                yield from _leaves(sub)
        else:
            yield it


def _esc(text: str) -> str:
    return html.escape(text, quote=True)


# ---- Graphviz ------------------------------------------------------------------------------

def _dot_source(graph: Graph) -> str:
    out = ['digraph program {', 'compound=true; rankdir=TB; nodesep=0.25; ranksep=0.35;',
           'node [fontname="Helvetica", fontsize=11, height=0.3, style=filled];']

    def node_line(node: Node) -> str:
        shape = "ellipse" if node.kind in ("feed", "param", "fetch") else "box"
        return (f'"{node.id}" [id="{node.id}", label="{_dot_esc(node.label)}", shape={shape},'
                f' fillcolor="{_FILL[node.kind]}", tooltip="{_dot_esc(node.title)}"];')

    def items(its, indent):
        for it in its:
            if isinstance(it, _Box):
                out.append(f'{indent}subgraph "cluster_{it.node.id}" {{ id="{it.node.id}"; '
                           f'label="{_dot_esc(it.node.label)}"; style="dashed,filled"; '
                           f'fillcolor="#f4f4fb"; tooltip="{_dot_esc(it.node.title)}";')
                out.append(f'{indent}  "{it.node.id}" [id="anchor_{it.node.id}", shape=point, '
                           'width=0.05, label=""];')
                for k, (label, sub) in enumerate(it.blocks):
                    out.append(f'{indent}  subgraph "cluster_{it.node.id}_{k}" {{ id='
                               f'"{it.node.id}_{k}"; label="{_dot_esc(label)}"; style=solid; '
                               'fillcolor="#ffffff";')
                    items(sub, indent + "    ")
                    out.append(f"{indent}  }}")
                out.append(f"{indent}}}")
            else:
                out.append(indent + node_line(it))
    items(graph.items, "  ")
    boxes = {b.node.id for b in _boxes(graph.items)}
    for src, dst in graph.edges:
        ends = [f'lhead="cluster_{dst}"'] * (dst in boxes) + [f'ltail="cluster_{src}"'] * (
            src in boxes)
        out.append(f'  "{src}" -> "{dst}"' + (f' [{", ".join(ends)}];' if ends else ";"))
    out.append("}")
    return "\n".join(out)


def _boxes(items):
    for it in items:
        if isinstance(it, _Box):
            yield it
            for _, sub in it.blocks:
                yield from _boxes(sub)


def _dot_esc(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _with_dot(graph: Graph) -> str | None:
    """The SVG `dot` draws (None when it is missing or fails)."""
    exe = shutil.which("dot")
    if exe is None:
        return None
    try:
        done = subprocess.run([exe, "-Tsvg"], input=_dot_source(graph), capture_output=True,
                              text=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    start = done.stdout.find("<svg")
    if done.returncode or start < 0:
        return None
    return done.stdout[start:].replace("<svg ", '<svg class="program" ', 1)


def has_dot() -> bool:
    return shutil.which("dot") is not None


def draw(program, feeds: list[str], fetches: list[str], layout: str = "auto") -> str:
    """The SVG of `program` with these feed and fetch names. `layout`: 'dot' (Graphviz,
    an error when it is missing), 'layered' (our own) or 'auto' (dot when installed)."""
    graph = Graph(program, feeds, fetches)
    if layout not in ("auto", "dot", "layered"):
        raise ValueError(f"layout must be 'auto', 'dot' or 'layered', not {layout!r}")
    if layout != "layered":
        svg = _with_dot(graph)
        if svg is not None:
            return svg
        if layout == "dot":
            raise RuntimeError("Graphviz `dot` is not installed or failed (apt-get install "
                               "graphviz), or use layout='layered'")
    return _layered(graph)
