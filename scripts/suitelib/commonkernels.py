"""Common-block kernels too slow to racecheck at full size in every program that carries them:
racecheck leaves them out there and verify racechecks each once, small, in its probe.

On the H200 (2026-12-01), report_data's racecheck on its Sanitize: run took 205 s among verify's
jobs; alone, with the ceiling kernels left out, at most 12.6 s and 0 hazards (a session-8 call
that left out all three ceiling kernels; only this one loads from shared memory, which is what
racecheck tracks)."""

import re

# (common block, kernel, probe target, probe source)
COMMON_RACECHECK = [("smem_roof", "ceilingSmemKernel", "smem_roof_probe", "tests/probes/smem_roof_probe.cu")]


def block_body(text, block):
    """The lines of a `// common: block` region of text, or None where it has none."""
    m = re.search(rf"^// common: {re.escape(block)}\n(.*?)^// end common: {re.escape(block)}$", text or "",
                  re.S | re.M)
    return m.group(1) if m else None


def racecheck_excludes(text, canonical=None):
    """The common kernels racecheck may leave out of a program with this text: those whose block
    it carries, and, given canonical (the lesson's text), carries exactly as the lesson does."""
    return [kernel for block, kernel, _, _ in COMMON_RACECHECK
            if block_body(text, block) is not None
            and (canonical is None or block_body(text, block) == block_body(canonical, block))]


def skip_options(kernels):
    return [o for k in kernels for o in ("--kernel-name-exclude", f"kns={k}")]
