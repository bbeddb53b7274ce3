"""The control-flow graph of a decoded function for the bytecode frontend: basic blocks, natural loops of the
backward jumps and post-dominators (where the paths from a branch meet again), and `_Loop`, what the statement
reader knows of the loop it is inside."""

from cujit.bytecode import _ops as ops


class _Loop:
    def __init__(self, cont, brks, body):
        self.cont, self.brks, self.body = cont, brks, body
        self.start = None  # where the body starts: not a new loop there
        self.after = None  # where a while loop's breaks go


class _Graph:
    """Basic blocks, loops (natural loops of the backward jumps) and post-dominators per loop body."""

    def __init__(self, code_ins):
        self.ins = code_ins
        n = len(code_ins) - 1
        leaders = {0}
        for x in code_ins[:n]:
            if x.target is not None:
                leaders.add(x.target)
                leaders.add(x.index + 1)
            elif x.op in ops.TERMINAL:
                leaders.add(x.index + 1)
        self.starts = sorted(i for i in leaders if i <= n)
        self.block_of = {}
        for b, s in enumerate(self.starts):
            e = self.starts[b + 1] if b + 1 < len(self.starts) else n + 1
            for i in range(s, e):
                self.block_of[i] = b
        self.succ = []
        for b, s in enumerate(self.starts):
            e = self.starts[b + 1] if b + 1 < len(self.starts) else n + 1
            last = code_ins[e - 1] if e - 1 < n else None
            out = []
            if last is not None and last.op not in ops.TERMINAL:
                if last.target is not None:
                    out.append(self.block_of[last.target])
                if last.op not in ("JUMP_FORWARD", "JUMP_BACKWARD", "JUMP") and e <= n:
                    out.append(self.block_of[e])
            self.succ.append(out)
        self.pred = [[] for _ in self.starts]
        for b, out in enumerate(self.succ):
            for s in out:
                self.pred[s].append(b)
        self.latches = {}  # header block -> blocks jumping back to it
        for b, out in enumerate(self.succ):
            for s in out:
                if s <= b:
                    self.latches.setdefault(s, []).append(b)

    def natural_loop(self, header):
        body = {header}
        work = [b for b in self.latches.get(header, ())]
        while work:
            b = work.pop()
            if b not in body:
                body.add(b)
                work.extend(self.pred[b])
        return body

    def ipdom(self, block, loop):
        """The block where every path from `block` meets again inside `loop` (None: they never do)."""
        holder = loop if loop is not None else self  # cached on the loop itself: ids of dead loops come back
        pd = getattr(holder, "_pdom_sets", None)
        if pd is None:
            pd = holder._pdom_sets = self._postdominators(loop)
        mine = pd.get(block)
        if mine is None:
            return None
        best = None
        for c in mine:
            if c != block and c != -1 and (best is None or len(pd[c]) > len(pd[best])):
                best = c
        return best

    def _postdominators(self, loop):
        nodes = sorted(loop.body) if loop else list(range(len(self.starts)))
        inside = set(nodes)
        cont = {self.block_of[i] for i in loop.cont} if loop else set()

        succ = {b: [-1 if (s in cont or s not in inside) else s for s in self.succ[b]] or [-1] for b in nodes}
        full = frozenset(nodes) | {-1}
        pd = {b: full for b in nodes}
        pd[-1] = frozenset({-1})
        order = nodes[::-1]
        changed = True
        while changed:
            changed = False
            for b in order:
                meet = None
                for s in succ[b]:
                    meet = pd[s] if meet is None else meet & pd[s]
                new = meet | {b}
                if new != pd[b]:
                    pd[b] = new
                    changed = True
        return pd
