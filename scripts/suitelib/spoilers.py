"""Spoilers across lessons: a complete solution of an exercise (the body of a `// solution:` region
of lessons/X.cu) wherever a student reads code: another lesson, any starter (X's own included:
outside its exercise regions a starter is its lesson), any page's code. Each copy must sit inside a
<details> fold on its page, or be named in X's exercise instructions (a section of lessons/X.md
whose heading says "exercise"): by the copy's file name (`gemm_ladder.cu` covers lessons/ and
starter/) or by a function the copy defines and the solution does not (`gemmTiled16`).

A copy is found by tokens, not bytes: comments and preprocessor lines dropped, every identifier and
number one token (so `kT1` for `kTile`, or `16` for it, still matches), keywords and punctuation
kept. Solutions shorter than MIN_TOKENS are left to the reader: short bodies look like every other
loop once names are gone (a 95-token quantizing loop scores 0.86 against an input generator)."""

import bisect
import difflib
import re
from pathlib import Path

from . import read_text
from .docs import doc_files, folded, page_lines
from .model import parse_regions, programs

MIN_TOKENS = 120  # a solution shorter than this is not matched (see above)
SIMILAR = 0.9     # a copy: 2 x matched tokens / (solution tokens + the copy's span) at least this
GRAM = 5          # tokens per shingle that locate candidate copies
CANDIDATES = 4    # windows per target examined by the alignment, the densest first

TOKEN_RE = re.compile(r"//[^\n]*|/\*.*?\*/|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'|[A-Za-z_]\w*"
                      r"|\.?\d(?:[eEpP][-+]|[\w.'])*|->|::|<<=?|>>=?|\+\+|--|&&|\|\||[-+*/%&|^!=<>]=|\S", re.S)
KEYWORDS = frozenset("""alignas alignof auto bool break case catch char class const constexpr const_cast
continue decltype default delete do double else enum explicit extern false float for friend goto if
inline int long mutable namespace new noexcept nullptr operator private protected public reinterpret_cast
return short signed sizeof static static_assert static_cast struct switch template this throw true try
typedef typename union unsigned using virtual void volatile while __global__ __device__ __host__
__shared__ __constant__ __forceinline__ __restrict__ __syncthreads""".split())
INTEGERS = frozenset("int long short unsigned signed size_t".split())
BUILTINS = frozenset("threadIdx blockIdx blockDim gridDim warpSize fmaf float2 float4 int4".split())
HEADING_RE = re.compile(r"^(#{1,6})\s+(.*)$")


class Tok:
    __slots__ = ("norm", "raw", "line")

    def __init__(self, norm, raw, line):
        self.norm, self.raw, self.line = norm, raw, line


def tokens(text, first_line=1):
    """The normalised tokens of C++ text, each with its raw text and 1-based line."""
    text = "\n".join("" if line.lstrip().startswith("#") else line for line in text.split("\n"))
    out, line, pos = [], first_line, 0
    for m in TOKEN_RE.finditer(text):
        line += text.count("\n", pos, m.start())
        pos = m.start()
        raw = m.group()
        if raw.startswith(("//", "/*")):
            continue
        if raw in INTEGERS:
            if out and out[-1].norm == "int" and out[-1].line == line:
                continue  # 'long long', 'unsigned int': one integer type
            norm = "int"  # a copy may widen its index type
        elif raw in KEYWORDS or raw in BUILTINS or raw.startswith("__"):
            norm = raw  # names a copy keeps: the language's and CUDA's (__half, __hfma, fmaf...)
        elif raw[0].isalnum() or raw[0] == "_" or (raw[0] == "." and len(raw) > 1):
            norm = "x"
        elif raw[0] in "\"'":
            norm = "s"
        else:
            norm = raw
        out.append(Tok(norm, raw, line))
    return out


def page_code(text):
    """A page's code (fenced blocks and generated snippets) with every other line blanked, so that
    token lines are page lines."""
    lines = text.split("\n")
    keep = ("fence", "generated")
    return "\n".join(line if place in keep and not line.lstrip().startswith(("```", "~~~")) else ""
                     for line, place in zip(lines, page_lines(lines)))


def definitions(toks):
    """Names of the functions a token run defines: NAME ( ... ) [const] {."""
    names, i = set(), 0
    while i + 1 < len(toks):
        if toks[i].norm == "x" and toks[i].raw[0].isalpha() and toks[i + 1].raw == "(":
            depth, j = 0, i + 1
            while j < len(toks):
                depth += {"(": 1, ")": -1}.get(toks[j].raw, 0)
                if depth == 0:
                    break
                j += 1
            k = j + 1 + (j + 1 < len(toks) and toks[j + 1].raw == "const")
            if k < len(toks) and toks[k].raw == "{":
                names.add(toks[i].raw)
        i += 1
    return names


def trigrams(seq):
    return [tuple(seq[i:i + 3]) for i in range(len(seq) - 2)]


def find_copies(solution, target):
    """[(score, first token, end token)] of the places in target where the solution's tokens stand
    (score >= SIMILAR), best first, not overlapping."""
    sol, tgt, n = [t.norm for t in solution], [t.norm for t in target], len(solution)
    grams = {tuple(sol[i:i + GRAM]) for i in range(n - GRAM + 1)}
    hits = [j for j in range(len(tgt) - GRAM + 1) if tuple(tgt[j:j + GRAM]) in grams]
    width = n + n // 2
    dense = sorted(((bisect.bisect_left(hits, j + width) - k, j) for k, j in enumerate(hits)), reverse=True)
    found, tried = [], []
    for count, j in dense:
        if count < len(grams) // 3 or len(tried) == CANDIDATES:
            break
        if any(abs(j - t) < n // 2 for t in tried):
            continue
        tried.append(j)
        lo = max(0, j - n // 4)
        # Aligned as runs of 3 tokens: single tokens ('x', '(', ';') recur everywhere and make
        # difflib quadratic; a block of s trigrams is s + 2 matched tokens.
        window = tgt[lo:j + width]
        blocks = [b for b in difflib.SequenceMatcher(None, trigrams(sol), trigrams(window), autojunk=False)
                  .get_matching_blocks() if b.size]
        if not blocks:
            continue
        covered, last = 0, -1  # target tokens the blocks cover (neighbouring trigrams overlap)
        for b in blocks:
            covered += b.b + b.size + 2 - max(b.b, last)
            last = b.b + b.size + 2
        start, end = lo + blocks[0].b, lo + last
        score = 2.0 * covered / (n + end - start)
        if score >= SIMILAR and not any(s < end and start < e for _, s, e in found):
            found.append((score, start, end))
    return sorted(found, reverse=True)


def solutions(root):
    """[(lesson name, region, lesson rel, tokens)] of every solution region long enough to match."""
    found = []
    for prog in programs(root):
        if prog.is_starter:
            continue
        regions, _ = parse_regions(prog.rel, prog.text)  # malformed markers: the markers check
        for r in regions:
            if r.kind == "solution":
                toks = tokens(r.body, r.open_line + 1)
                if len(toks) >= MIN_TOKENS:
                    found.append((prog.name, r, prog.rel, toks))
    return found


def readers(root):
    """[(rel, tokens, folded lines or None, lesson name or None)]: every file a student reads code
    in. folded: for a page, whether each line sits in a <details> fold; lesson name: for a lesson."""
    out = [(p.rel, tokens(p.text), None, None if p.is_starter else p.name) for p in programs(root)]
    for rel in doc_files(root):
        path = Path(root) / rel
        if path.is_file():
            text = read_text(path, "page")
            out.append((rel, tokens(page_code(text)), folded(text.split("\n")), None))
    return out


def exercise_text(root, lesson):
    """The text of lessons/LESSON.md's sections whose heading says 'exercise' ('' without a page)."""
    path = Path(root) / "lessons" / (lesson + ".md")
    if not path.is_file():
        return ""
    keep, level = [], None
    for line in read_text(path, "page").splitlines():
        m = HEADING_RE.match(line)
        if m and (level is None or len(m.group(1)) <= level):
            level = len(m.group(1)) if "exercise" in m.group(2).lower() else None
        if level is not None:
            keep.append(line)
    return "\n".join(keep)


def enclosing(toks, start):
    """The name of the function whose body holds token `start` ('' at file scope)."""
    depth, i = 0, start - 1
    while i >= 0:
        depth += {"}": 1, "{": -1}.get(toks[i].raw, 0)
        if depth < 0:
            break
        i -= 1
    j = i - 1 - (i > 0 and toks[i - 1].raw == "const")
    if i < 0 or j < 0 or toks[j].raw != ")":
        return ""
    depth = 0
    while j >= 0:
        depth += {")": 1, "(": -1}.get(toks[j].raw, 0)
        if depth == 0:
            break
        j -= 1
    return toks[j - 1].raw if j > 0 and toks[j - 1].norm == "x" else ""


def names(lesson, rel, toks, start, end, solution):
    """What may name a copy in the instructions: a function it defines (or sits in) that the solution
    does not, and its file where that is another lesson's (the exercise's own file name is the student's)."""
    # A copy's match can begin inside its function's signature: look from the declaration's start.
    begin = start
    while begin > 0 and start - begin < 64 and toks[begin - 1].raw not in (";", "{", "}"):
        begin -= 1
    found = sorted((definitions(toks[begin:end]) | {enclosing(toks, start)}) - definitions(solution) - {""})
    return found + ([Path(rel).name] if Path(rel).stem != lesson else [])


def named(instructions, choices):
    words = {w.rstrip("./-") for w in re.findall(r"[\w./-]+", instructions)}
    return bool(set(choices) & (words | {w.rsplit("/", 1)[-1] for w in words}))


def check_spoilers(root):
    """'file:line: message' for every unfolded, unnamed copy of a solution (see the module doc)."""
    problems, targets = [], readers(root)
    for lesson, region, source, sol in solutions(root):
        instructions = exercise_text(root, lesson)
        for rel, toks, fold, owner in targets:
            if owner == lesson:
                continue  # the lesson is the answer; its starter and page are checked
            for score, start, end in find_copies(sol, toks):
                first, last = toks[start].line, toks[end - 1].line
                if fold is not None and all(fold[no - 1] for no in range(first, last + 1)):
                    continue
                choices = names(lesson, rel, toks, start, end, sol)
                if named(instructions, choices):
                    continue
                fix = (f"name {' or '.join(choices)} in" if choices else
                       "change the copy (it defines no other function and lies in the exercise's own file), "
                       "or name it in")
                fold_it = "fold it in <details> with a warning, or " if fold is not None else ""
                problems.append(
                    f"{rel}:{first}-{last}: a copy of {lesson}'s solution '{region.name}' ({source}:"
                    f"{region.open_line}-{region.close_line}), {score:.2f} alike with names ignored: "
                    f"{fold_it}{fix} the exercise's instructions (lessons/{lesson}.md, a section headed 'exercise')")
    return problems
