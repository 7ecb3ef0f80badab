"""Instruction mix of each loop (a backward branch) in the SASS of the kernels whose names match.

Usage: python3 scripts/bench/sass_loops.py SASS_TEXT REGEX [MIN_FFMA]
SASS_TEXT is `cuobjdump -sass BINARY` output (the GPU machine has cuobjdump) or `nvdisasm -c CUBIN`.
Prints, per matching function, its whole mix and then each loop body holding at least MIN_FFMA
(default 512) FFMAs: its address range, instruction count and most common opcodes, so that two
builds of one kernel can be compared loop by loop (a branch around the copies after a barrier
shows as BRA in the loop's mix). A development aid: nothing the lessons print depends on it.
"""
import collections
import re
import sys

HEADER = (re.compile(r"^\s*\.text\.(\S+):"), re.compile(r"Function : (\S+)"))
LABEL = re.compile(r"^\s*(\.L_x_\d+):")
INSN = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_]*)")
TARGET = re.compile(r"BRA\s+(?:`\()?(\.L_x_\d+|0x[0-9a-f]+)")  # nvdisasm: a label; cuobjdump: an address


def functions(lines):
    """{name: ([(address, opcode, line)], {label: address})}"""
    out, cur, pending = {}, None, []
    for line in lines:
        for h in HEADER:
            m = h.search(line)
            if m:
                cur, pending = m.group(1), []
                out[cur] = ([], {})
                break
        else:
            if cur is None:
                continue
            m = LABEL.match(line)
            if m:
                pending.append(m.group(1))
                continue
            m = INSN.search(line)
            if m:
                addr = int(m.group(1), 16)
                for p in pending:
                    out[cur][1][p] = addr
                pending = []
                out[cur][0].append((addr, m.group(2), line))
    return out


def loops(insns, labels, min_ffma):
    found = []
    for addr, op, line in insns:
        m = TARGET.search(line) if op == "BRA" else None
        lo = None if not m else int(m.group(1), 16) if m.group(1).startswith("0x") else labels.get(m.group(1))
        if lo is not None and lo < addr:
            mix = collections.Counter(o for a, o, _ in insns if lo <= a <= addr)
            if mix["FFMA"] >= min_ffma:
                found.append((lo, addr, mix))
    return found


def main(argv):
    if len(argv) not in (3, 4):
        sys.exit(__doc__.strip().splitlines()[2])
    try:
        with open(argv[1]) as f:
            funcs = functions(f)
    except OSError as e:
        sys.exit(f"sass_loops: cannot read {argv[1]}: {e.strerror}")
    pattern, min_ffma = re.compile(argv[2]), int(argv[3]) if len(argv) == 4 else 512
    shown = 0
    for name, (insns, labels) in funcs.items():
        if not pattern.search(name):
            continue
        shown += 1
        print(name, len(insns), dict(collections.Counter(o for _, o, _ in insns).most_common(12)))
        for lo, hi, mix in loops(insns, labels, min_ffma):
            print(f"  loop {lo:#x}-{hi:#x}: {sum(mix.values())} insns", dict(mix.most_common(14)))
    if not shown:
        sys.exit(f"sass_loops: no function in {argv[1]} matches {argv[2]}")


if __name__ == "__main__":
    main(sys.argv)
